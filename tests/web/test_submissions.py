"""Uploads over HTTP, in process: what a stranger's uploads may cost the server.

Review 38: a refused upload (no manifest, a gzip bomb, another account's bot name) cost the
whole unpack, up to ``unpacked_bytes`` on disk and a third of a second of a core for a few KiB
sent, and counted against nothing; and unpacks ran in the default thread pool every other
call of the web's to the store shares."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import aiohttp
import pytest

import bisca.server.accounts._intake as intake
import bisca.server.web._submissions as web_submissions
from bisca.server.accounts import LeagueAccounts, SubmissionLimits, Unpacked, unpack
from tests.accounts.support import archive, bomb, manifest_of
from tests.support.league import PASSWORD

from .support import get, league_app, post, signed_up, upload


def counting_unpacks(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every archive unpacked from now on, by the name of the thread that unpacked it."""
    unpacked: list[str] = []

    def counting(*args: object, **kwargs: object) -> Unpacked:
        unpacked.append(threading.current_thread().name)
        return unpack(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(intake, "unpack", counting)
    return unpacked


async def bearer_of(league: LeagueAccounts, name: str) -> dict[str, str]:
    """An account made by the operator (no sign-up's hourly cap) and its API token."""
    await asyncio.to_thread(league.store.accounts.create, name, PASSWORD)
    _, token = await asyncio.to_thread(league.new_api_token, name, "test")
    return {"Authorization": f"Bearer {token}"}


def test_refused_uploads_count_against_the_accounts_uploads_of_the_day(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``submissions_per_day`` counts every upload the server unpacked: twelve refused bombs
    of 8 MiB (a few KiB sent each) are three unpacks, then 429s before any unpack; a version
    added and the uploads refused count together."""
    unpacked = counting_unpacks(monkeypatch)
    per_day = 3
    limits = SubmissionLimits(submissions_per_day=per_day, unpacked_bytes=8 * 1024 * 1024)
    refused_bomb = bomb(8 * 1024 * 1024 - 4096)  # refused: no manifest, once it is unpacked
    assert len(refused_bomb) < 64 * 1024

    async def scenario() -> None:
        async with league_app(tmp_path, limits=limits) as (url, _), aiohttp.ClientSession() as cli:
            mallory = await signed_up(cli, url, "mallory")
            answers = []
            for _ in range(4 * per_day):
                status, answer = await upload(cli, url, mallory, refused_bomb)
                answers.append((status, str(answer["error"])))
            # Before: every one of the twelve unpacked, every one a 400 ("no bisca-bot.toml").
            assert len(unpacked) == per_day, answers
            assert [status for status, _ in answers] == [400] * per_day + [429] * 3 * per_day
            assert answers[-1][1] == (
                "mallory sent 3 uploads in the last 24 hours (0 made versions, 3 were refused), "
                "the limit (submissions_per_day): try again later"
            )

            alice = await signed_up(cli, url, "alice")
            assert (await upload(cli, url, alice, archive()))[0] == 201
            for _ in range(per_day - 1):
                status, answer = await upload(cli, url, alice, refused_bomb)
                assert status == 400 and "no bisca-bot.toml" in str(answer["error"])
            status, answer = await upload(cli, url, alice, archive())
            assert status == 429 and "(1 made versions, 2 were refused)" in str(answer["error"])
            assert len(unpacked) == 2 * per_day

    asyncio.run(scenario())


def test_archives_unpack_a_few_at_a_time_in_a_lane_of_their_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Uploads of seven accounts at once, each unpack held until the test lets it go: one
    unpacks at a time, in the unpacker's own thread, ``UNPACKS_WAITING`` more wait and the
    rest get 503; an account's second upload while its first is under way gets 429; and the
    web's other calls answer all along (the default thread pool is not the unpacks')."""
    at_once = web_submissions.UNPACKS_AT_ONCE
    room = at_once + web_submissions.UNPACKS_WAITING
    release = threading.Event()
    lock = threading.Lock()
    threads: list[str] = []
    running, most = [0], [0]

    async def scenario() -> None:
        loop = asyncio.get_running_loop()
        began = asyncio.Event()

        def held_unpack(*args: object, **kwargs: object) -> Unpacked:
            with lock:
                threads.append(threading.current_thread().name)
                running[0] += 1
                most[0] = max(most[0], running[0])
            loop.call_soon_threadsafe(began.set)
            release.wait()
            try:
                return unpack(*args, **kwargs)  # type: ignore[arg-type]
            finally:
                with lock:
                    running[0] -= 1

        monkeypatch.setattr(intake, "unpack", held_unpack)
        async with league_app(tmp_path) as (url, league), aiohttp.ClientSession() as cli:
            names = [f"owner{n}" for n in range(room + 2)]
            bearers = [await bearer_of(league, name) for name in names]

            async def send(n: int) -> tuple[int, dict[str, object]]:
                return await upload(cli, url, bearers[n], archive(manifest=manifest_of(f"b{n}")))

            uploads = [asyncio.create_task(send(n)) for n in range(len(names))]
            try:
                await began.wait()
                assert threads[0].startswith("bisca-unpack"), threads
                # Those past the lane's room are answered while the others are held.
                done: set[asyncio.Task[tuple[int, dict[str, object]]]] = set()
                while len(done) < len(names) - room:
                    finished, _ = await asyncio.wait(
                        set(uploads) - done, return_when=asyncio.FIRST_COMPLETED
                    )
                    done |= finished
                full = [task.result() for task in done]
                assert {status for status, _ in full} == {503}, full
                assert f"unpacking {room} uploads already" in str(full[0][1]["error"])
                # The web answers meanwhile, and an account's second upload waits for none.
                assert (await get(cli, f"{url}/api/account", **bearers[0]))[0] == 200
                held = [n for n, task in enumerate(uploads) if task not in done]
                status, again = await upload(cli, url, bearers[held[0]], archive())
                assert status == 429 and "one at a time" in str(again["error"]), again
                assert most[0] == at_once
            finally:
                release.set()
            answers = await asyncio.gather(*(uploads[n] for n in held))
            assert [status for status, _ in answers] == [201] * room, answers

    asyncio.run(scenario())
    assert most[0] == at_once and len(threads) == room
    assert all(name.startswith("bisca-unpack") for name in threads), threads


def test_a_name_taken_in_one_case_is_taken_in_every_case(tmp_path: Path) -> None:
    """With ``alice`` signed up and her ``adabot`` taken, a stranger signs up ``Alice`` and
    submits ``AdaBot``: before, both were 201, and the pages and the ladder showed two owners
    and two bots a person reads as one (review 38)."""

    async def scenario() -> None:
        async with league_app(tmp_path) as (url, _), aiohttp.ClientSession() as cli:
            alice = await signed_up(cli, url, "alice")
            adabot = archive(manifest=manifest_of("adabot"))
            assert (await upload(cli, url, alice, adabot))[0] == 201
            status, refused = await post(
                cli, f"{url}/api/accounts", {"name": "Alice", "password": PASSWORD}
            )
            assert (status, refused["error"]) == (
                400,
                "the account name 'Alice' is taken (as 'alice': a name is taken whatever its case, "
                "and i, I, 1 read as l, 0 as o)",
            )
            mallory = await signed_up(cli, url, "mallory")
            status, refused = await upload(
                cli, url, mallory, archive(manifest=manifest_of("AdaBot"))
            )
            assert (status, refused["error"]) == (
                409,
                "the bot name 'AdaBot' is taken (as 'adabot': a name is taken whatever its case, "
                "and i, I, 1 read as l, 0 as o)",
            )

    asyncio.run(scenario())


def test_accounts_whose_uploads_are_refused_leave_room_for_the_others(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Five accounts sending refused archives back to back held the whole lane, and every
    other upload got 503 (review 38c): an account with an upload refused in the last 24 hours
    may take all places but ``UNPACKS_KEPT_FOR_CLEAN``, which wait for the others."""
    room = web_submissions.UNPACKS_AT_ONCE + web_submissions.UNPACKS_WAITING
    theirs = room - web_submissions.UNPACKS_KEPT_FOR_CLEAN
    holding, release = threading.Event(), threading.Event()

    def held_unpack(*args: object, **kwargs: object) -> Unpacked:
        if holding.is_set():
            release.wait(60)
        return unpack(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(intake, "unpack", held_unpack)
    refused = bomb(64 * 1024)  # no manifest: refused once unpacked
    Answer = tuple[int, dict[str, object]]

    async def scenario() -> None:
        async with league_app(tmp_path) as (url, league), aiohttp.ClientSession() as cli:
            flooders = [await bearer_of(league, f"mallory{n}") for n in range(room)]
            clean = [await bearer_of(league, f"honest{n}") for n in range(3)]
            for bearer in flooders:  # each has an upload refused today
                assert (await upload(cli, url, bearer, refused))[0] == 400
            holding.set()
            flood = [asyncio.create_task(upload(cli, url, b, refused)) for b in flooders]
            waiting: list[asyncio.Task[Answer]] = []
            try:
                done: set[asyncio.Task[Answer]] = set()
                while len(done) < room - theirs:  # answered while the lane's others are held
                    finished, _ = await asyncio.wait(
                        set(flood) - done, timeout=60, return_when=asyncio.FIRST_COMPLETED
                    )
                    assert finished, "no flooder was turned away"
                    done |= finished
                turned_away = [task.result() for task in done]
                assert {status for status, _ in turned_away} == {503}, turned_away
                assert f"unpacking {theirs} uploads already" in str(turned_away[0][1]["error"])
                probe = flooders[next(n for n, task in enumerate(flood) if task in done)]

                async def places_taken() -> int:
                    status, answer = await upload(cli, url, probe, refused)
                    assert status == 503, answer  # a flooder's: never past its places
                    return int(str(answer["error"]).split("unpacking ")[1].split()[0])

                for n, bearer in enumerate(clean[:2]):  # the kept places: theirs to wait in
                    sent = upload(cli, url, bearer, archive(manifest=manifest_of(f"honest{n}bot")))
                    waiting.append(asyncio.create_task(sent))
                    async with asyncio.timeout(60):
                        while await places_taken() < theirs + n + 1:
                            pass
                status, answer = await upload(cli, url, clean[2], archive())
                assert status == 503 and f"unpacking {room} uploads" in str(answer["error"])
            finally:
                release.set()
            flooded = await asyncio.gather(*(task for task in flood if task not in done))
            assert [status for status, _ in flooded] == [400] * theirs
            assert [status for status, _ in await asyncio.gather(*waiting)] == [201, 201]

    asyncio.run(scenario())


def test_an_address_keeps_a_bounded_disk_of_versions_whichever_accounts_upload(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Review s56d: each account's budget let one address, opening five accounts an hour,
    keep ~30 GiB a day.  The server records the address an upload came from, and the versions
    sent from it share ``address_bytes``: a second account's upload from the same address is
    refused, 409, naming the limit; and an upload while the disk keeps less than its reserve
    is a 507, before its body is received, counting for nothing."""
    blob = {"blob.bin": b"z" * 400_000}
    limits = SubmissionLimits(address_bytes=1_000_000, submissions_per_day=2)
    unpacked = counting_unpacks(monkeypatch)

    async def scenario() -> None:
        async with (
            league_app(tmp_path, limits=limits) as (url, league),
            aiohttp.ClientSession() as cli,
        ):
            alice, bob = await bearer_of(league, "alice"), await bearer_of(league, "bob")
            for name in ("one", "two"):
                blobbed = archive(blob, manifest=manifest_of(name))
                assert (await upload(cli, url, alice, blobbed))[0] == 201
            blobbed = archive(blob, manifest=manifest_of("three"))
            status, answer = await upload(cli, url, bob, blobbed)
            assert status == 409, answer
            assert "would pass an address's 0.953674 MiB (address_bytes)" in str(answer["error"])
            assert league.store.versions.of_bot("one")[0].sent_from == "127.0.0.1"
            league.limits = SubmissionLimits(disk_reserve_mb=2**40, submissions_per_day=2)
            for _ in range(2):
                status, answer = await upload(cli, url, bob, archive(manifest=manifest_of("b")))
                assert status == 507, answer
                assert "the league's disk is nearly full" in str(answer["error"])
            # The 409 counted (its archive was unpacked), the 507s did not.
            league.limits = SubmissionLimits(submissions_per_day=2)
            assert (await upload(cli, url, bob, archive(manifest=manifest_of("b"))))[0] == 201
            # A budget spent already is refused before the body, and takes no unpack.
            league.limits = SubmissionLimits(address_bytes=1)
            before = len(unpacked)
            for _ in range(3):
                status, answer = await upload(cli, url, alice, archive(manifest=manifest_of("c")))
                assert status == 409 and "all of an address's" in str(answer["error"]), answer
            assert len(unpacked) == before

    asyncio.run(scenario())
