"""The Node.js client end to end: Node bots (``clients/node``) and Python bots playing full
matches through a real ``bisca serve`` process, over TCP and a unix socket, and through
``bisca match``; plus the client's own ``node --test`` suites."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import pytest

from bisca.v1 import arena_pb2 as pb
from bisca.v1 import bestia_pb2
from tests.support.arena import Arena, clock, start_arena, stop_arena
from tests.support.commands import bisca, seat_rows
from tests.support.waiting import poll_until

from .rules_positions import assert_same_answers, guide_example, write_positions

ROOT = Path(__file__).resolve().parents[2]
NODE_CLIENT = ROOT / "clients" / "node"
RANDOM_JS = NODE_CLIENT / "bots" / "random.js"
GREEDY_JS = NODE_CLIENT / "bots" / "belote_greedy.js"
FINISHED = pb.MATCH_STATUS_FINISHED
FINISHED_LINE = "MATCH_STATUS_FINISHED"


@dataclass
class NodeArena:
    """A server listening on loopback TCP and on a unix socket."""

    arena: Arena
    unix_address: str
    logs: list[Path]

    def node_bot(
        self, token: str, script: Path, *args: str, unix: bool = False, **env: str
    ) -> Path:
        """Launch a Node sample bot as a process; returns the file its stderr goes to."""
        log = self.arena.tmp / f"node-{len(self.logs)}.stderr.log"
        self.logs.append(log)
        address = self.unix_address if unix else self.arena.address
        with open(log, "wb") as stderr:
            process = subprocess.Popen(
                [node(), str(script), *args],
                env={**os.environ, "BISCA_ADDRESS": address, "BISCA_TOKEN": token, **env},
                stdout=subprocess.DEVNULL,
                stderr=stderr,
            )
        self.arena.bots.append(process)
        return log


def node() -> str:
    path = shutil.which("node")
    assert path, "Node.js (node) is needed for the Node client's tests"
    return path


@pytest.fixture(scope="module")
def node_client() -> Path:
    """The Node client with its dependencies (``make test`` installs them; a bare pytest run
    on a fresh clone installs them here the same way, from the lock file)."""
    if not (NODE_CLIENT / "node_modules" / "@grpc" / "grpc-js").is_dir():
        npm = shutil.which("npm")
        assert npm, "npm is needed to install the Node client's dependencies"
        subprocess.run(
            [npm, "ci", "--silent", "--no-audit", "--no-fund"], cwd=NODE_CLIENT, check=True
        )
    return NODE_CLIENT


@pytest.fixture(scope="module")
def node_arena(tmp_path_factory: pytest.TempPathFactory, node_client: Path) -> Iterator[NodeArena]:
    tmp = tmp_path_factory.mktemp("node-arena")
    arena, addresses = start_arena(tmp, "--unix", str(tmp / "arena.sock"))
    yield NodeArena(arena, addresses[1], [])
    stop_arena(arena)


def assert_all_completed(info: pb.MatchInfo, seats: int) -> None:
    assert info.status == FINISHED, info.reason
    assert len(info.results) == seats
    for result in info.results:
        assert result.end == pb.SEAT_END_COMPLETED, (result.bot_name, result.forfeit_reason)
        assert result.timeouts == 0 and result.defaults_played == 0, result


def logged_the_end(log: Path) -> bool:
    return FINISHED_LINE in log.read_text()


def problems(log: Path) -> list[str]:
    return [line for line in log.read_text().splitlines() if " ERROR " in line]


def test_the_node_rule_helpers_agree_with_the_engine(node_client: Path, tmp_path: Path) -> None:
    """Every position of seeded random matches of both games, answered by one Node process;
    the guide's Node example chooses as its Python example does."""
    positions = tmp_path / "positions.jsonl"
    expected = write_positions(positions, with_example=True)
    code = guide_example("js")
    assert "require('./clients/node')" in code
    example = tmp_path / "rules_example.js"
    example.write_text(
        code.replace("'./clients/node'", repr(str(node_client))) + "module.exports = { play };\n"
    )
    done = subprocess.run(
        [node(), str(node_client / "test" / "rules_positions.js"), str(positions), str(example)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert_same_answers(done.stdout, expected, positions)


def test_belote_two_node_bots_against_two_python_bots(node_arena: NodeArena) -> None:
    arena = node_arena.arena
    names, logs = [], []
    for seat in range(4):
        name, token = arena.register("belote-mixed")
        names.append(name)
        if seat == 0:
            logs.append(node_arena.node_bot(token, GREEDY_JS))
        elif seat == 2:
            logs.append(node_arena.node_bot(token, RANDOM_JS, "--seed", "2"))
        else:
            arena.sample_bot(token, "greedy" if seat == 1 else "random", "belote")
    match_id = arena.create("belote", names, seed=21, clock=clock(3000, 10_000, "forfeit"))
    info = arena.wait(match_id, timeout=60)
    assert_all_completed(info, 4)
    scores = [r.score for r in info.results]
    assert scores[0] == scores[2] and scores[1] == scores[3]  # teams {0, 2} and {1, 3}
    assert info.steps > 4 * 32  # four deals of 32 cards played, and the bids
    for log in logs:
        # The bot logs its match's end after the server has recorded it: wait for the line.
        poll_until(f"{log.name} logs the match's end", partial(logged_the_end, log))
        text = log.read_text()
        assert "started: GAME_BELOTE" in text
        assert not problems(log) and "rejected" not in text


def test_bestia_three_node_bots_among_five_seats(node_arena: NodeArena) -> None:
    arena = node_arena.arena
    names, logs = [], []
    for seat in range(5):
        name, token = arena.register("bestia-mixed")
        names.append(name)
        if seat in (0, 2, 4):
            logs.append(node_arena.node_bot(token, RANDOM_JS, "--seed", str(seat)))
        else:
            arena.sample_bot(token, "greedy" if seat == 1 else "random", "bestia")
    settings = pb.GameSettings(bestia=bestia_pb2.Settings(seats=5, rounds=1))
    match_id = arena.create(
        "bestia", names, settings=settings, seed=22, clock=clock(3000, 10_000, "forfeit")
    )
    info = arena.wait(match_id, timeout=60)
    assert_all_completed(info, 5)
    assert sum(r.score for r in info.results) == 0  # chips only change hands
    for log in logs:
        assert "started: GAME_BESTIA" in log.read_text() and not problems(log)


def test_an_illegal_answer_is_rejected_and_corrected_over_a_unix_socket(
    node_arena: NodeArena,
) -> None:
    # Seat 0's first 3 requests are answered with a card it does not hold first; each
    # rejection is answered again with a legal action within the same request.
    arena = node_arena.arena
    names = []
    log = None
    for seat in range(4):
        name, token = arena.register("rejected")
        names.append(name)
        if seat == 0:
            log = node_arena.node_bot(token, RANDOM_JS, unix=True, BISCA_RANDOM_ILLEGAL="3")
        else:
            arena.sample_bot(token, "random", "belote")
    assert log is not None
    match_id = arena.create(
        "belote",
        names,
        seed=23,
        clock=clock(3000, 0, "forfeit"),
        settings=pb.GameSettings(belote={"deals": 1}),
    )
    info = arena.wait(match_id, timeout=60)
    assert_all_completed(info, 4)
    text = log.read_text()
    assert node_arena.unix_address.startswith("unix:")
    rejections = re.findall(r"rejected \(REJECT_CODE_ILLEGAL_ACTION\): .*; 2 attempt", text)
    assert len(rejections) == 3, text
    assert not problems(log)


def local_match(seed: int, bots: list[str], data: Path) -> subprocess.CompletedProcess[str]:
    """``bisca match`` of one Belote deal, forfeit on a timeout, between the four ``bots``
    (commands or sample bot names); it must succeed with every seat completed."""
    argv = ["match", "--game", "belote", "--deals", "1", "--seed", str(seed)]
    argv += ["--timeout-policy", "forfeit", *(word for bot in bots for word in ("--bot", bot))]
    done = bisca(*argv, "--data", str(data), timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    rows = seat_rows(done.stdout)
    assert [row["end"] for row in rows] == ["completed"] * 4, done.stdout
    return done


def test_bisca_match_runs_node_bots_that_exit_when_the_match_ends(
    node_client: Path, tmp_path: Path
) -> None:
    # Each Node bot runs under sh, which reports how node exited: a bot that did not exit on
    # its own would be killed (with its sh) after the match and report nothing.
    def wrapped(script: Path) -> str:
        return f"sh -c '{node()} {script}; echo node-exit=$? >&2'"

    done = local_match(24, [wrapped(GREEDY_JS), "greedy", wrapped(RANDOM_JS), "random"], tmp_path)
    assert ", finished," in done.stdout
    (match_dir,) = (tmp_path / "matches").iterdir()
    for seat in (0, 2):
        log = (match_dir / f"seat{seat}.stderr.log").read_text()
        assert "the server closed the stream; done" in log
        assert log.rstrip().endswith("node-exit=0"), log[-2000:]


def guide_block(language: str, first_line: str) -> str:
    """The code block of ``docs/bot-guide.md`` in ``language`` that starts with ``first_line``."""
    guide = (ROOT / "docs" / "bot-guide.md").read_text()
    blocks = re.findall(rf"```{language}\n(.*?)```", guide, re.DOTALL)
    found = [block for block in blocks if block.startswith(first_line)]
    assert len(found) == 1, f"the guide has no {language} block starting {first_line!r}"
    return found[0]


def test_the_guides_python_and_node_bots_play_a_match(node_client: Path, tmp_path: Path) -> None:
    tmp_path.chmod(0o755)  # the sandboxed bots run as users of their own: they must read it
    python_bot = tmp_path / "mybot.py"
    python_bot.write_text(guide_block("python", '"""mybot.py:'))
    node_bot = tmp_path / "mybot.js"
    code = guide_block("js", "// mybot.js:")
    assert "require('./clients/node')" in code  # run from the repository root, as it says
    node_bot.write_text(code.replace("'./clients/node'", repr(str(node_client))))
    python = f"{sys.executable} {python_bot}"
    local_match(25, [python, f"{node()} {node_bot}", python, "greedy"], tmp_path / "data")
    (match_dir,) = (tmp_path / "data" / "matches").iterdir()
    assert "finished: SeatResult(seat=0" in (match_dir / "seat0.stdout.log").read_text()
    node_output = (match_dir / "seat1.stdout.log").read_text()
    assert re.search(r"MATCH_STATUS_FINISHED, \d+ tricks seen", node_output), node_output
