"""The C++ SDK and its random bot (``clients/cpp``): built with CMake once per session, checked
by ``bisca check-bot`` in the sandbox, played in real Belote and Bestia matches beside Python
and Node bots, and driven by a scripted server for what those never show: a deal that does not
match its commitment, a fatal error, reproducible choices, and a server that is not up yet;
and the guide's C++ bot, compiled and played.

The build goes to the repository's ``build/cpp`` (the README's build line), not to a pytest
folder: the sandbox mounts a private, empty ``/tmp`` over the host's, so a bot binary under
``/tmp`` is not there for the sandboxed bot (bwrap: "Can't chdir to /tmp/...").
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from bisca import wire
from bisca.v1 import arena_pb2 as pb
from tests.support.commands import seat_rows
from tests.support.shared_build import shared_build
from tests.support.waiting import poll_until

from ..conformance.test_check_bot import assert_every_check_passes, check_bot
from .fake_server import FakeArena, serve, socket_address, welcome
from .rules_positions import assert_same_answers, write_positions
from .support import action_request, advance, to_act
from .test_node_client import guide_block

ROOT = Path(__file__).resolve().parents[2]
CPP_CLIENT = ROOT / "clients" / "cpp"
BUILD = ROOT / "build" / "cpp"
NODE_CLIENT = ROOT / "clients" / "node"
NODE_RANDOM = NODE_CLIENT / "bots" / "random.js"
#: Configuring takes seconds and a clean build about a minute on two cores; a loaded machine
#: may need several times that.
BUILD_TIMEOUT_S = 900


def cmake(*arguments: str) -> None:
    tool = shutil.which("cmake")
    assert tool, "cmake is needed for the C++ client: `make system` installs it"
    done = subprocess.run(
        [tool, *arguments], capture_output=True, text=True, timeout=BUILD_TIMEOUT_S
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]


@pytest.fixture(scope="module")
def cpp_bot() -> Path:
    """``build/cpp/random_bot``, built (or brought up to date) with the README's commands."""
    with shared_build():
        cmake("-S", str(CPP_CLIENT), "-B", str(BUILD))
        cmake("--build", str(BUILD), "-j2")
    bot = BUILD / "random_bot"
    assert os.access(bot, os.X_OK), f"the build made no {bot}"
    return bot


@pytest.fixture(scope="module")
def sdk_test(cpp_bot: Path) -> Path:
    """``build/cpp/sdk_test``, the SDK's test program, made by the same build as the bot."""
    program = BUILD / "sdk_test"
    assert os.access(program, os.X_OK), f"the build made no {program}"
    return program


@pytest.fixture(scope="module")
def node_random() -> str:
    """The Node random bot's command, with the Node client's dependencies installed from its
    lock file when a bare pytest run on a fresh clone has none (as the Node client's tests do)."""
    node = shutil.which("node")
    assert node, "Node.js (node) is needed for the mixed matches"
    if not (NODE_CLIENT / "node_modules" / "@grpc" / "grpc-js").is_dir():
        npm = shutil.which("npm")
        assert npm, "npm is needed to install the Node client's dependencies"
        subprocess.run(
            [npm, "ci", "--silent", "--no-audit", "--no-fund"],
            cwd=NODE_CLIENT,
            check=True,
            timeout=300,
        )
    return f"{node} {NODE_RANDOM}"


def problems(log: str) -> list[str]:
    return [line for line in log.splitlines() if " ERROR " in line]


# ---- the conformance checks and real matches, sandboxed as any bot ---------------------------


def test_the_cpp_random_bot_passes_every_check(cpp_bot: Path, tmp_path: Path) -> None:
    run = check_bot(tmp_path, [str(cpp_bot)], "--game", "belote", "--game", "bestia")
    assert_every_check_passes(run, tmp_path)
    hello = "Hello from 'cpp-random' version '1', protocol 2 (events inside requests)"
    assert hello in run.checks["hello"]
    log = (tmp_path / "bot.stderr.log").read_text()
    assert 'welcomed as "cpp-random"' in log
    # The reconnect check drops the stream with UNAVAILABLE: the SDK backs off and comes back.
    assert re.search(r"failed \(UNAVAILABLE: .*\); reconnecting in 100 ms", log), log[-3000:]
    assert not problems(log)


# Bestia's default is 5 seats; these matches seat the same four bots in both games.
MATCH_OPTIONS = {"belote": ["--deals", "1"], "bestia": ["--set", "seats=4", "--rounds", "1"]}


@pytest.mark.parametrize("game", ["belote", "bestia"])
def test_a_match_beside_python_and_node_bots(
    cpp_bot: Path, node_random: str, tmp_path: Path, game: str
) -> None:
    bots = [str(cpp_bot), "random", node_random, "greedy"]  # the READMEs' matches
    done = subprocess.run(
        [
            *(sys.executable, "-m", "bisca.server.cli", "match", "--game", game),
            *MATCH_OPTIONS[game],
            *("--seed", "31", "--timeout-policy", "forfeit", "--data", str(tmp_path)),
            *(argument for bot in bots for argument in ("--bot", bot)),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert f": {game}, finished," in done.stdout
    rows = seat_rows(done.stdout)
    assert [row["end"] for row in rows] == ["completed"] * 4, done.stdout
    assert [row["timeouts"] for row in rows] == ["0"] * 4, done.stdout
    (match_dir,) = (tmp_path / "matches").iterdir()
    log = (match_dir / "seat0.stderr.log").read_text()
    assert f"started: GAME_{game.upper()}, seat 0" in log
    assert f"{match_dir.name} MATCH_STATUS_FINISHED: seat 0 scored" in log
    assert f"{match_dir.name}: deal verified" in log
    assert log.rstrip().endswith("the server closed the stream; done"), log[-2000:]
    assert not problems(log) and "rejected" not in log


# ---- against a scripted server: what the real one never does ---------------------------------

Script = Callable[[FakeArena, int, Iterator[pb.BotMessage], Any], Iterator[Any]]


def run_against(
    bot: Path, tmp_path: Path, script: Script, *arguments: str
) -> tuple[FakeArena, subprocess.CompletedProcess[str]]:
    """The bot (unsandboxed) against a fake arena playing ``script``, until the bot exits."""
    fake = FakeArena(script)
    address = socket_address(tmp_path)
    server = serve(fake, address)
    try:
        done = subprocess.run(
            [str(bot), *arguments],
            env={**os.environ, "BISCA_ADDRESS": address, "BISCA_TOKEN": "tok"},
            capture_output=True,
            text=True,
            timeout=30,
        )
    finally:
        server.stop(None)
    return fake, done


def started(match_id: str, commitment: bytes = b"") -> pb.ServerMessage:
    return pb.ServerMessage(
        match_started=pb.MatchStarted(
            match_id=match_id, game=pb.GAME_BELOTE, seat=0, deal_commitment=commitment
        )
    )


def ended(
    match_id: str, seed: int = 0, salt: bytes = b"", *, sealed: bool = False
) -> pb.ServerMessage:
    return pb.ServerMessage(
        match_ended=pb.MatchEnded(
            match_id=match_id,
            seat=0,
            status=pb.MATCH_STATUS_FINISHED,
            seed=seed,
            deal_salt=salt,
            deal_sealed=sealed,
        )
    )


def test_the_deal_check_passes_a_kept_commitment_and_reports_a_broken_one(
    cpp_bot: Path, tmp_path: Path
) -> None:
    salt = bytes(range(16))
    seed = 2**63 + 12345  # the top bit set and above 2^53: every one of the 8 bytes counts
    broken = wire.deal_commitment(salt, seed + 1, "m-broken")  # a deal other than the one played

    def script(fake: FakeArena, number: int, requests: Any, context: Any) -> Iterator[Any]:
        yield welcome()
        yield started("m-kept", wire.deal_commitment(salt, seed, "m-kept"))
        yield ended("m-kept", seed, salt)
        yield started("m-broken", broken)
        yield ended("m-broken", seed, salt)
        # A duplicate-deal twin still played: seed and salt withheld, no check, no failure.
        yield started("m-sealed", wire.deal_commitment(salt, seed, "m-sealed"))
        yield ended("m-sealed", sealed=True)

    fake, done = run_against(cpp_bot, tmp_path, script)
    assert done.returncode == 0, done.stderr
    [hello] = fake.hellos
    assert (hello.token, hello.bot_name, hello.protocol_version) == ("tok", "cpp-random", 2)
    assert not hello.live_events
    assert list(hello.games) == [pb.GAME_BELOTE, pb.GAME_BESTIA]
    assert f"match m-kept: deal verified: SHA-256(salt, seed {seed}, match id)" in done.stderr
    [failure] = problems(done.stderr)
    assert f"match m-broken: DEAL CHECK FAILED: MatchStarted committed to {broken.hex()}" in failure
    actual = wire.deal_commitment(salt, seed, "m-broken").hex()
    assert f"the revealed salt {salt.hex()} and seed {seed} hash to {actual}" in failure
    assert "match m-sealed: the deal stays sealed" in done.stderr


@pytest.mark.parametrize("live", [False, True])
def test_events_reach_the_hook_however_they_come(cpp_bot: Path, tmp_path: Path, live: bool) -> None:
    """Carried by a request and by the end (protocol 2's default), or in batches with
    ``--live-events``: the random bot's ``on_event`` counts them all."""
    seat = to_act(LEAD)
    events = [
        wire.encode_game_event("belote", index, event)
        for index, event in enumerate(LEAD.events_for(seat))
    ]

    def script(fake: FakeArena, number: int, requests: Any, context: Any) -> Iterator[Any]:
        yield welcome()
        yield started("m-events")
        request = action_request(LEAD, "r1", "m-events")
        if live:
            yield pb.ServerMessage(
                events=pb.EventBatch(match_id="m-events", seat=seat, events=events[:-1])
            )
        else:
            request.action_request.events.extend(events[:-1])
        yield request
        fake.read_reply(requests)
        ended = pb.MatchEnded(match_id="m-events", seat=seat, status=pb.MATCH_STATUS_FINISHED)
        if live:
            yield pb.ServerMessage(
                events=pb.EventBatch(match_id="m-events", seat=seat, events=events[-1:])
            )
        else:
            ended.events.extend(events[-1:])
        yield pb.ServerMessage(match_ended=ended)

    fake, done = run_against(cpp_bot, tmp_path, script, *(["--live-events"] if live else []))
    assert done.returncode == 0, done.stderr
    assert [hello.live_events for hello in fake.hellos] == [live]
    assert f"match m-events: {len(events)} events seen" in done.stderr
    assert [reply.request_id for reply in fake.replies] == ["r1"]


def test_a_fatal_error_ends_the_bot_with_the_servers_reason(cpp_bot: Path, tmp_path: Path) -> None:
    def refuse(fake: FakeArena, number: int, requests: Any, context: Any) -> Iterator[Any]:
        yield pb.ServerMessage(
            error=pb.Error(
                code=pb.ERROR_CODE_UNKNOWN_TOKEN, message="unknown bot token", fatal=True
            )
        )

    fake, done = run_against(cpp_bot, tmp_path, refuse)
    assert done.returncode == 1
    assert (
        "random_bot: the server refused the bot: ERROR_CODE_UNKNOWN_TOKEN: unknown bot token"
        in done.stderr
    )
    assert len(fake.hellos) == 1  # retrying cannot help: no reconnect


# A first trick's lead: eight legal cards, so random choices differ visibly.
LEAD = advance("belote", 5, lambda state: len(state.legal_actions()) == 8)
REQUESTS = 6


def answers(match_id: str) -> Script:
    """Six requests, then a seventh whose answer is rejected twice (the server re-sending the
    request each time, as the referee does), then the match's end."""

    def script(fake: FakeArena, number: int, requests: Any, context: Any) -> Iterator[Any]:
        yield welcome()
        yield started(match_id)
        for index in range(REQUESTS):
            yield action_request(LEAD, f"r{index}", match_id)
            fake.read_reply(requests)
        yield action_request(LEAD, "r-twice", match_id)
        fake.read_reply(requests)
        for attempts_left in (2, 1):
            yield pb.ServerMessage(
                action_rejected=pb.ActionRejected(
                    request_id="r-twice",
                    match_id=match_id,
                    seat=to_act(LEAD),
                    code=pb.REJECT_CODE_ILLEGAL_ACTION,
                    message="rejected by the test",
                    attempts_left=attempts_left,
                )
            )
            fake.read_reply(requests)  # answered at once, before the re-sent copy
            yield action_request(LEAD, "r-twice", match_id, attempt=4 - attempts_left)
        yield ended(match_id)

    return script


def test_choices_are_reproducible_and_no_rejected_action_is_sent_again(
    cpp_bot: Path, tmp_path: Path
) -> None:
    legal = [wire.encode_game_action("belote", action) for action in LEAD.legal_actions()]
    choices: dict[tuple[str, str], list[pb.GameAction]] = {}
    for seed, match_id in [("", "m-a"), ("", "m-a"), ("", "m-b"), ("5", "m-a"), ("5", "m-b")]:
        folder = tmp_path / f"run{len(choices)}-{seed}{match_id}"
        folder.mkdir()
        arguments = ("--seed", seed) if seed else ()
        fake, done = run_against(cpp_bot, folder, answers(match_id), *arguments)
        assert done.returncode == 0, done.stderr
        assert not problems(done.stderr)
        replies = [reply.action for reply in fake.replies]
        assert all(action in legal for action in replies)
        # The rejected request: three different answers, none re-sent, none sent twice.
        assert [reply.request_id for reply in fake.replies[REQUESTS:]] == ["r-twice"] * 3
        twice = [action.SerializeToString() for action in replies[REQUESTS:]]
        assert len(set(twice)) == 3, done.stderr
        run = (seed, match_id)
        if run in choices:
            assert replies == choices[run], "the same seed and match chose differently"
        choices[run] = replies
    # Without --seed the match id seeds the choices; --seed N makes every match choose alike.
    assert choices[("", "m-a")] != choices[("", "m-b")]
    assert choices[("5", "m-a")] == choices[("5", "m-b")] != choices[("", "m-a")]


def test_the_bot_waits_for_a_server_that_is_not_up_yet(cpp_bot: Path, tmp_path: Path) -> None:
    address = socket_address(tmp_path)
    log = tmp_path / "bot.stderr.log"
    with open(log, "wb") as stderr:
        process = subprocess.Popen(
            [str(cpp_bot)],
            env={**os.environ, "BISCA_ADDRESS": address, "BISCA_TOKEN": "tok"},
            stdout=subprocess.DEVNULL,
            stderr=stderr,
        )
    try:
        # Nothing listens yet: UNAVAILABLE, and the bot keeps trying.
        poll_until(
            "the bot's reconnect",
            lambda: "reconnecting in" in log.read_text() or process.poll() is not None,
            timeout=10,
        )
        assert process.poll() is None, log.read_text()

        def one_request(fake: FakeArena, number: int, requests: Any, context: Any) -> Iterator[Any]:
            yield welcome()
            yield action_request(LEAD, "r1")
            fake.read_reply(requests)

        fake = FakeArena(one_request)
        server = serve(fake, address)
        try:
            assert process.wait(timeout=30) == 0, log.read_text()
        finally:
            server.stop(None)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert [reply.request_id for reply in fake.replies] == ["r1"]
    text = log.read_text()
    assert re.search(r"connection to unix:\S+ failed \(UNAVAILABLE: .*\); reconnecting in", text)
    assert "the server closed the stream; done" in text


# ---- the rule helpers, and a bot whose callback throws ----------------------------------------


def test_the_cpp_rule_helpers_agree_with_the_engine(sdk_test: Path, tmp_path: Path) -> None:
    """Every position of seeded random matches of both games, answered by one process; the
    guide's C++ example (compiled into ``sdk_test`` from docs/bot-guide.md) chooses as its
    Python example does."""
    positions = tmp_path / "positions.jsonl"
    expected = write_positions(positions, with_example=True)
    done = subprocess.run(
        [str(sdk_test), "rules", str(positions)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert_same_answers(done.stdout, expected, positions)


def two_requests(fake: FakeArena, number: int, requests: Any, context: Any) -> Iterator[Any]:
    """A match start and two requests, each answered (or the bot gone), then the end."""
    yield welcome()
    yield started("m-throws")
    for request_id in ("r1", "r2"):
        yield action_request(LEAD, request_id, "m-throws")
        try:
            fake.read_reply(requests)
        except StopIteration:  # the bot ended its stream
            return
    yield ended("m-throws")


def test_a_callback_that_throws_ends_the_bot_with_its_what(sdk_test: Path, tmp_path: Path) -> None:
    fake, done = run_against(sdk_test, tmp_path, two_requests, "throwing-bot")
    assert done.returncode == 1, done.stderr
    assert fake.replies == []  # no legal move sent in its place
    [logged] = problems(done.stderr)
    assert logged.endswith(
        "the bot threw on request r1 (match m-throws, seat 1); ending the bot (with "
        "Options::keep_going it would go on): deliberate bug in the bot"
    ), logged
    assert (
        "sdk_test: the bot threw on request r1 (match m-throws, seat 1): deliberate bug in the bot"
        in done.stderr
    )
    # A hook is a callback too.
    (tmp_path / "hook").mkdir()
    fake, done = run_against(
        sdk_test, tmp_path / "hook", two_requests, "throwing-bot", "--in", "on_match_start"
    )
    assert done.returncode == 1, done.stderr
    assert "sdk_test: the bot's on_match_start hook threw: deliberate bug in on_match_start" in (
        done.stderr
    )


def test_with_keep_going_a_throwing_bot_plays_on_saying_so_each_time(
    sdk_test: Path, tmp_path: Path
) -> None:
    fake, done = run_against(sdk_test, tmp_path, two_requests, "throwing-bot", "--keep-going")
    assert done.returncode == 0, done.stderr
    assert [reply.request_id for reply in fake.replies] == ["r1", "r2"]
    legal = [wire.encode_game_action("belote", action) for action in LEAD.legal_actions()]
    assert all(reply.action == legal[0] for reply in fake.replies)  # the first legal action
    said = problems(done.stderr)
    assert [line.split(" bisca.client: ", 1)[1] for line in said] == [
        f"the bot threw on request {request_id} (match m-throws, seat 1); keep_going: sending a "
        "legal action instead: deliberate bug in the bot"
        for request_id in ("r1", "r2")
    ], done.stderr


NO_ACTION = (
    "request {id} (match m-throws, seat 1): the bot answered {{}}, which is not an action of the "
    "game (an empty GameAction: does every path of the bot return one of "
    "request.legal_actions()?); "
)


def test_a_bot_that_answers_no_action_ends_as_one_that_throws(
    sdk_test: Path, tmp_path: Path
) -> None:
    """An empty GameAction was replaced by a legal one with only a log line: a bot that never
    answered an action passed every check.  It is a bug, under the keep_going rule."""
    fake, done = run_against(sdk_test, tmp_path, two_requests, "throwing-bot", "--in", "answer")
    assert done.returncode == 1, done.stderr
    assert fake.replies == []
    [logged] = problems(done.stderr)
    assert logged.endswith(
        NO_ACTION.format(id="r1") + "ending the bot (with Options::keep_going it would go on)"
    ), logged
    assert (
        "sdk_test: the bot answered {} on request r1 (match m-throws, seat 1), which is not an "
        "action of the game" in done.stderr
    )
    (tmp_path / "kept").mkdir()
    fake, done = run_against(
        sdk_test, tmp_path / "kept", two_requests, "throwing-bot", "--in", "answer", "--keep-going"
    )
    assert done.returncode == 0, done.stderr
    legal = wire.encode_game_action("belote", LEAD.legal_actions()[0])
    assert [(reply.request_id, reply.action) for reply in fake.replies] == [
        ("r1", legal),
        ("r2", legal),
    ]
    assert [line.split(" bisca.client: ", 1)[1] for line in problems(done.stderr)] == [
        NO_ACTION.format(id=request_id) + "keep_going: sending a legal action instead"
        for request_id in ("r1", "r2")
    ], done.stderr


def placed(fake: FakeArena, number: int, requests: Any, context: Any) -> Iterator[Any]:
    """A match that ends with seat 0 third (rank 2, from 0)."""
    yield welcome()
    yield started("m-placed")
    message = ended("m-placed")
    message.match_ended.seats.add(seat=0, score=185, rank=2)
    message.match_ended.seats.add(seat=1, score=300, rank=0)
    yield message


def test_the_end_of_a_match_is_logged_with_the_rank_counted_from_1(
    sdk_test: Path, tmp_path: Path
) -> None:
    _fake, done = run_against(sdk_test, tmp_path, placed, "first-bot")
    assert done.returncode == 0, done.stderr
    assert "match m-placed MATCH_STATUS_FINISHED: seat 0 scored 185, rank 3" in done.stderr


# ---- the guide's example -----------------------------------------------------------------------


def test_the_guides_cpp_bot_plays_a_match(cpp_bot: Path, tmp_path: Path) -> None:
    """The guide's way, command for command: ``bisca new-bot cpp mine``, the guide's code saved
    over ``mine/my_bot.cpp``, ``cmake -S mine -B mine/build && cmake --build mine/build``, then
    its Bestia match.  In the build folder, not /tmp, for the sandbox to see the bot."""
    folder = BUILD / "guide" / "mine"
    shutil.rmtree(folder, ignore_errors=True)
    written = subprocess.run(
        [sys.executable, "-m", "bisca.server.cli", "new-bot", "cpp", str(folder)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert written.returncode == 0, written.stdout + written.stderr
    (folder / "my_bot.cpp").write_text(guide_block("cpp", "// my_bot.cpp:"))
    cmake("-S", str(folder), "-B", str(folder / "build"))
    built = subprocess.run(
        ["cmake", "--build", str(folder / "build")],
        capture_output=True,
        text=True,
        timeout=BUILD_TIMEOUT_S,
    )
    assert built.returncode == 0, built.stdout[-4000:] + built.stderr[-4000:]
    assert "warning:" not in built.stdout + built.stderr, built.stdout[-4000:]  # none at all
    done = subprocess.run(
        [
            *(sys.executable, "-m", "bisca.server.cli", "match", "--game", "bestia"),
            *MATCH_OPTIONS["bestia"],
            *("--seed", "32", "--timeout-policy", "forfeit"),
            *("--bot", str(folder / "build" / "my_bot"), "--bot", "greedy", "--bot", str(cpp_bot)),
            *("--bot", "random", "--data", str(tmp_path)),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    rows = seat_rows(done.stdout)
    assert [row["end"] for row in rows] == ["completed"] * 4, done.stdout
    (match_dir,) = (tmp_path / "matches").iterdir()
    output = (match_dir / "seat0.stdout.log").read_text()
    assert output == f"{match_dir.name}: MATCH_STATUS_FINISHED, deal verified\n", output
