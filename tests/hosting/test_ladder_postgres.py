"""The ladder of a PostgreSQL league: ``bisca serve`` queues its pairings as procrastinate jobs
and ``bisca worker`` (a process of its own, its own data directory) plays them, rated, in
the shared store, launching the hosted versions from the serving machine's files; the seats'
stderr the worker kept in the store is read by the version's owner through the serving
machine's HTTP API (403 for another account)."""

from __future__ import annotations

import urllib.error
import urllib.request
from pathlib import Path

from bisca.server.records import MatchRecord, MatchStatus
from bisca.server.store import TokenKind, open_store
from tests.support.arena import start_server, stop_arena
from tests.support.league import PASSWORD, active_version, starter_bot
from tests.support.postgres import PostgresServer
from tests.support.waiting import poll_until
from tests.tournament.test_distributed import Workers
from tests.web.support import app_url

BOTS = ("ada", "bob", "cy", "dee")
#: What ada's bot writes to its stderr, and to its stdout, as each of its processes starts.
HELLO = "adabot: a line for my owner, from whichever machine plays me"
PRINTED = "adabot: printed, as a bot's print() writes"


def ask(url: str, token: str) -> tuple[int, bytes]:
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"})
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.status, answer.read()
    except urllib.error.HTTPError as problem:
        return problem.code, problem.read()


def talkative_bot(folder: Path) -> Path:
    """The Python starter, writing :data:`HELLO` to its stderr and :data:`PRINTED` to its
    stdout as it starts."""
    starter_bot(folder)
    script = folder / "my_bot.py"
    imports = "from bisca.client import Request, run\n"
    hello = (
        f"import sys\n\nprint({HELLO!r}, file=sys.stderr, flush=True)\n"
        f"print({PRINTED!r}, flush=True)\n"
    )
    script.write_text(script.read_text().replace(imports, imports + hello, 1))
    return folder


def test_bisca_worker_plays_the_ladder_a_postgresql_league_queues(
    postgres: PostgresServer, tmp_path: Path
) -> None:
    url = postgres.new_database()
    data = tmp_path / "league"
    tokens = {}
    with open_store(url, data) as store:
        for name in BOTS:
            store.accounts.create(name, PASSWORD)
            tokens[name] = store.accounts.new_token(name, TokenKind.API, "test")[1]
            folder = tmp_path / f"{name}bot"
            bot = talkative_bot(folder) if name == "ada" else starter_bot(folder)
            active_version(store, data / "submissions", name, bot)
    workers = Workers(url, tmp_path)
    arena, _ = start_server(
        tmp_path,
        data,
        *["serve", "--listen", "127.0.0.1:0", "--http", "127.0.0.1:0", "--data", str(data)],
        *["--store", url, "--registration", "open", "--league", "belote:deals=1"],
        *[
            "--ladder",
            "matches_per_hour=1",
            "--ladder",
            "duplicate=false",
            "--ladder",
            "poll_s=0.5",
        ],
    )
    try:
        http = app_url(arena)
        worker = workers.start("w1")
        with open_store(url, tmp_path / "reader") as store:

            def rated() -> list[str] | None:
                found = store.matches.find(MatchStatus.FINISHED, None)
                return [match.id for match in found if match.rated] or None

            [match_id, *_] = poll_until("the worker plays a ladder match", rated, timeout=240)
            match = store.matches.get(match_id)
            assert match is not None
            assert sorted(match.bots) == [f"{name}bot.v1" for name in BOTS]
            assert {update.bot for update in store.ratings.history("belote")} == set(match.bots)
        # Its bots wrote their stderr on the worker's disk, beside its copy of the match, never
        # on the serving machine's; the worker puts it in the store, then removes those files.
        assert (tmp_path / "w1" / "matches" / match_id).is_dir()
        assert not list((data / "matches" / match_id).glob("seat*.log"))
        # The worker put it in the store: ada reads her version's through the serving
        # machine's API, every seat of it in that match.
        link = f"{http}/api/bots/adabot/versions/1/matches/{match_id}/stderr"
        seat = match.bots.index("adabot.v1")

        def read() -> bytes | None:
            status, body = ask(link, tokens["ada"])
            assert status == 200, body
            return body if HELLO.encode() in body else None

        body = poll_until("ada reads the worker's stderr of her seat", read, timeout=60)
        assert body.decode().startswith(f"--- adabot.v1, seat {seat} ---\n{HELLO}\n"), body
        assert b"no stderr was kept" not in body
        # And its stdout, kept with it.
        printed_link = link.removesuffix("stderr") + "stdout"
        status, printed = ask(printed_link, tokens["ada"])
        assert status == 200, printed
        assert printed.decode().startswith(f"--- adabot.v1, seat {seat} ---\n{PRINTED}\n")
        assert HELLO.encode() not in printed
        # Anybody else: 403, as on a SQLite league.
        for refused_link in (link, printed_link):
            status, refused = ask(refused_link, tokens["bob"])
            assert status == 403 and b"its owner's alone" in refused, refused
            assert HELLO.encode() not in refused and PRINTED.encode() not in refused
        assert "job failed" not in worker.output()
        worker_copy = tmp_path / "w1" / "matches" / match_id
        poll_until(
            "the worker removes its copy of the output",
            lambda: not list(worker_copy.glob("seat*.log")) or None,
            timeout=30,
        )
    finally:
        workers.stop()
        stop_arena(arena)


def test_a_ladder_pairing_cut_by_a_killed_worker_is_finished_by_another_once(
    postgres: PostgresServer, tmp_path: Path
) -> None:
    """A worker killed with ``kill -9`` in the middle of a pairing (duplicate deals: four
    matches of one deal): another worker takes the stalled job, marks the attempt it cut off
    failed, and plays only the seatings not finished, each recorded once."""
    url = postgres.new_database()
    data = tmp_path / "league"
    with open_store(url, data) as store:
        for name in BOTS:
            store.accounts.create(name, PASSWORD)
            active_version(store, data / "submissions", name, starter_bot(tmp_path / f"{name}bot"))
    workers = Workers(url, tmp_path)
    arena, _ = start_server(
        tmp_path,
        data,
        *["serve", "--listen", "127.0.0.1:0", "--http", "127.0.0.1:0", "--data", str(data)],
        *["--store", url, "--registration", "open", "--league", "belote:deals=1"],
        *["--ladder", "matches_per_hour=1", "--ladder", "duplicate=true", "--ladder", "poll_s=0.5"],
    )
    try:
        victim = workers.start("victim")
        with open_store(url, tmp_path / "reader") as store:

            def first_finished() -> MatchRecord | None:
                done = store.matches.find(MatchStatus.FINISHED, None)
                return done[-1] if done else None

            first = poll_until("the victim finishes a match", first_finished, timeout=240)
            victim.process.kill()  # mid-pairing: its next seating is under way, or about to be
            victim.process.wait()
            workers.start("heir")

            def deal() -> list[MatchRecord] | None:
                found = store.matches.find(None, None, game="belote", seed=first.seed)
                finished = [m for m in found if m.status is MatchStatus.FINISHED]
                return found if len({tuple(m.bots) for m in finished}) == 4 else None

            matches = poll_until("the heir finishes the pairing", deal, timeout=240)
        finished = [tuple(m.bots) for m in matches if m.status is MatchStatus.FINISHED]
        assert len(finished) == len(set(finished)) == 4, finished
        left = [m for m in matches if m.status not in (MatchStatus.FINISHED, MatchStatus.FAILED)]
        assert not left, [(m.id, m.status) for m in left]
        for match in matches:
            if match.status is MatchStatus.FAILED:
                assert match.reason.startswith("cut off"), match.reason
    finally:
        workers.stop()
        stop_arena(arena)
