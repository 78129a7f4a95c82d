"""Match logs end to end: real local matches write them; replay verifies, shows and exports
them; corruption is caught at the step it touches; a killed match leaves a .partial log."""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
from pathlib import Path

import pytest

from bisca import wire
from bisca.engine import GAMES, Card
from bisca.server import cli
from bisca.server.cli import (
    EXIT_DIVERGES,
    EXIT_INCOMPLETE,
    EXIT_OK,
    EXIT_UNREADABLE,
    EXIT_UNTRUSTED,
)
from bisca.server.datadir import DataDir, log_file
from bisca.server.logs import LogWriter, ServerKey, read_log, verify
from bisca.server.store import Store
from bisca.v1 import log_pb2
from tests.support.commands import BISCA, bisca, rogue
from tests.support.waiting import poll_until

SHAPES = {
    "belote": ["--deals", "2"],
    "bestia4": ["--rounds", "1"],
    "bestia5": ["--rounds", "1"],
    "bestia6": ["--rounds", "1"],
    "bestia7": ["--rounds", "1"],
}


def _here(*argv: str) -> tuple[int, str]:
    """``bisca ARGV`` in this process (the same code path, without a process): its exit code
    and its output.  The command line itself runs as a process in
    :func:`test_every_log_verifies_and_the_store_knows_it` and the tests of ``--interactive``,
    a killed match and a closed pipe."""
    output = io.StringIO()
    with contextlib.redirect_stdout(output):
        code = cli.main(list(argv))
    return code, output.getvalue()


def _show(*argv: str) -> str:
    """``bisca replay show ...`` in this process (the same code path, without a process)."""
    code, shown = _here("replay", "show", *argv)
    assert code == 0
    return shown


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """One finished match per game shape, played by sample bot processes."""
    data = tmp_path_factory.mktemp("logs")
    found = {}
    for shape, options in SHAPES.items():
        game = "belote" if shape == "belote" else "bestia"
        seats = 4 if game == "belote" else int(shape[-1])
        bots = []
        for seat in range(seats):
            bots += ["--bot", "greedy" if seat % 2 else "random"]
        argv = ["match", "--game", game, *bots, *options, "--seed", str(seats), "--data", str(data)]
        result = bisca(*argv, check=True)
        match_id = re.search(r"match (m-[0-9a-f]+)", result.stdout)
        assert match_id, result.stdout + result.stderr
        found[shape] = log_file(data / "matches" / match_id.group(1), match_id.group(1))
        # Where the log is, and how to see why a bot lost (review s58e).
        assert f"match log: {found[shape]}\n" in result.stdout, result.stdout
        assert f" replay show {found[shape]} --data {data}\n" in result.stdout, result.stdout
    return found


def test_every_log_verifies_and_the_store_knows_it(logs: dict[str, Path]) -> None:
    data = logs["belote"].parents[2]
    result = bisca("replay", "verify", *map(str, logs.values()), "--data", str(data), check=True)
    assert result.returncode == EXIT_OK, result.stdout
    assert result.stdout.count(": OK,") == len(logs)
    store = Store.in_directory(logs["belote"].parents[2])
    for path in logs.values():
        record = store.matches.get(path.parent.name)
        assert record is not None and record.log_path == str(path)
        footer = read_log(path).footer_record
        assert footer is not None and record.log_hash == footer.chain.hex()


def _rewrite(path: Path, entries: list[log_pb2.LogEntry]) -> None:
    """Write entries as a fresh, correctly chained log in place of the old one (a forger who
    recomputes hashes, and signs with a key of their own)."""
    path.unlink()
    writer = LogWriter(path, ServerKey.generate())
    kept = [e for e in entries if e.WhichOneof("kind") != "signature"]
    for entry in kept[:-1]:
        writer.write(entry)
    footer = log_pb2.LogFooter()
    footer.CopyFrom(kept[-1].footer)
    writer.complete(footer)


def _copy(source: Path, tmp_path: Path, name: str) -> Path:
    target = tmp_path / name / f"{name}.binlog"
    target.parent.mkdir()
    shutil.copy(source, target)
    return target


def test_one_changed_byte_breaks_the_chain_at_its_record(
    logs: dict[str, Path], tmp_path: Path
) -> None:
    path = _copy(logs["belote"], tmp_path, "byte")
    log = read_log(path)
    target = next(
        r for r in log.records if r.entry.WhichOneof("kind") == "step" and r.entry.step.step == 20
    )
    data = bytearray(path.read_bytes())
    offset = data.find(target.entry_bytes) + len(target.entry_bytes) // 2
    data[offset] ^= 0x01
    path.write_bytes(bytes(data))
    verdict = verify(path)
    assert not verdict.ok
    assert verdict.record == target.index
    assert "hash chain" in verdict.problem or "damaged" in verdict.problem


def test_a_recorded_log_cut_short_is_untrusted_not_incomplete(
    logs: dict[str, Path], tmp_path: Path
) -> None:
    """A finished match's log, cut after the store recorded it whole, is not a match still
    being written: against the store's record it is untrusted (review s57c called it
    incomplete); the same bytes without the record are truncated, as before."""
    data = logs["belote"].parents[2]
    match_id = logs["belote"].parent.name
    whole = logs["belote"].read_bytes()
    cut = tmp_path / match_id / f"{match_id}.binlog"
    cut.parent.mkdir()
    cut.write_bytes(whole[: len(whole) // 2])
    code, stdout = _here("replay", "verify", str(cut), "--data", str(data))
    assert code == EXIT_UNTRUSTED, stdout
    assert (
        f"{cut}: UNTRUSTED: match {match_id}: the store records a complete log of match " in stdout
    )
    assert "this one ends before it, cut after the match was recorded" in stdout
    assert "key is not trusted" not in stdout
    code, stdout = _here("replay", "verify", str(cut), "--key", _key_of(data))
    assert code == EXIT_INCOMPLETE and f"{cut}: TRUNCATED: " in stdout


def _key_of(data: Path) -> str:
    code, printed = _here("key", "--data", str(data))
    assert code == EXIT_OK
    return printed.strip()


def test_a_changed_action_is_caught_at_its_step(logs: dict[str, Path], tmp_path: Path) -> None:
    path = _copy(logs["belote"], tmp_path, "action")
    entries = list(read_log(path).entries())
    steps = [e.step for e in entries if e.WhichOneof("kind") == "step"]
    step = next(s for s in steps if s.step >= 30 and len(s.legal_actions) > 1)
    step.action.CopyFrom(next(a for a in step.legal_actions if a != step.action))
    _rewrite(path, entries)
    verdict = verify(path)
    assert not verdict.ok and verdict.step == step.step, verdict.lines()
    assert "event" in verdict.problem or "observation" in verdict.problem


def test_a_changed_seed_is_caught_at_the_deal(logs: dict[str, Path], tmp_path: Path) -> None:
    path = _copy(logs["bestia5"], tmp_path, "seed")
    entries = list(read_log(path).entries())
    header = entries[0].header
    header.seed += 1
    _rewrite(path, entries)
    verdict = verify(path)  # the deal's commitment no longer matches the seed
    assert not verdict.ok and verdict.record == 0 and "commitment" in verdict.problem
    # A forger who recomputes the commitment too (the salt is in the log) meets the deal.
    header.deal_commitment = wire.deal_commitment(header.deal_salt, header.seed, header.match_id)
    _rewrite(path, entries)
    verdict = verify(path)
    assert not verdict.ok
    assert verdict.record == 1 and verdict.step is None  # the first events: the deal
    code, stdout = _here("replay", "verify", str(path))
    assert code == EXIT_DIVERGES
    assert "DIVERGES at record 1" in stdout and "expected:" in stdout


def test_a_changed_result_is_caught_at_the_footer(logs: dict[str, Path], tmp_path: Path) -> None:
    path = _copy(logs["bestia7"], tmp_path, "result")
    entries = list(read_log(path).entries())
    entries[-2].footer.seats[0].score += 10  # the record before the signature
    _rewrite(path, entries)
    verdict = verify(path)
    assert not verdict.ok and verdict.record == len(entries) - 2
    assert "result differs" in verdict.problem


def test_export_json_holds_every_record(logs: dict[str, Path]) -> None:
    code, exported = _here("replay", "export", str(logs["bestia4"]), "--json")
    assert code == 0
    document = json.loads(exported)
    assert document["complete"] is True
    kinds = [
        next(k for k in r if k in ("header", "step", "events", "footer", "signature"))
        for r in document["records"]
    ]
    assert kinds[0] == "header" and kinds[-2:] == ["footer", "signature"] and "step" in kinds
    assert document["records"][0]["header"]["game"] == "GAME_BESTIA"


def _cards_seen_by(path: Path, seat: int, steps: int) -> set[str]:
    """Every card seat ``seat`` legitimately saw in the first ``steps`` steps, by replaying the
    engine on the log's actions (events sent to the seat, and its observations)."""
    from tests.engine.battery import cards_in

    log = read_log(path)
    header = log.header
    assert header is not None
    game = wire.game_name(header.game)
    state = GAMES[game].new_match(wire.decode_game_settings(game, header.settings), header.seed)

    def labels(since: int) -> set[str]:
        # Only the events new since the last look: the earlier ones are already counted.
        values = (state.events_for(seat, since), state.observation(seat))
        return {card.label for card in cards_in(values)}

    seen = labels(0)
    applied = 0
    for entry in log.entries():
        if entry.WhichOneof("kind") == "step" and applied <= steps:
            since = state.event_count
            state.apply(wire.decode_game_action(game, entry.step.action))
            applied += 1
            seen |= labels(since)
    return seen


@pytest.mark.parametrize("shape", ["belote", "bestia5", "bestia7"])
def test_show_as_a_seat_prints_only_cards_that_seat_saw(logs: dict[str, Path], shape: str) -> None:
    path = logs[shape]
    deck = _deck(shape)
    seats = 4 if shape == "belote" else int(shape[-1])
    for upto in (2, 6, 12, 30, 10_000):
        everything = _labels(_show(str(path), "--step", str(upto)), deck)
        for seat in range(seats):
            printed = _labels(_show(str(path), "--seat", str(seat), "--step", str(upto)), deck)
            allowed = _cards_seen_by(path, seat, upto)
            assert printed <= allowed, (upto, seat, printed - allowed)
            if upto == 2:
                # Early on a seat sees far less than the omniscient view shows.
                assert len(printed) < len(everything)


def _deck(shape: str) -> set[str]:
    from bisca.engine.belote import DECK as BELOTE
    from bisca.engine.bestia import DECK as BESTIA

    deck: tuple[Card, ...] = BELOTE if shape == "belote" else BESTIA
    return {card.label for card in deck}


def _labels(text: str, deck: set[str]) -> set[str]:
    return {word for word in re.findall(r"[0-9JQKA]+[^\s,;:()\[\]]", text) if word in deck}


def test_show_step_and_interactive(logs: dict[str, Path]) -> None:
    path = str(logs["belote"])
    short = bisca("replay", "show", path, "--step", "3", check=True).stdout
    assert "step 3:" in short and "step 4:" not in short
    session = bisca("replay", "show", path, "--interactive", input="n\nn\np\n17\nq\n", timeout=60)
    screens = re.findall(r"— (start|end|step \d+)", session.stdout)
    # A jump to step 17 shows step 17, titled by its own number.
    assert screens == ["start", "step 0", "step 1", "step 0", "step 17"], session.stdout
    last = len([e for e in read_log(logs["belote"]).entries() if e.WhichOneof("kind") == "step"])
    assert f"— step 17 (steps 0 to {last - 1}) —" in session.stdout


@pytest.mark.parametrize("shape", ["belote", "bestia5"])
def test_a_seat_view_shows_what_the_seat_was_asked_with(logs: dict[str, Path], shape: str) -> None:
    """At each of its steps a seat's view shows its hand, the trick on the table and the
    actions it was offered, exactly as the request the log keeps."""
    path = logs[shape]
    game = "belote" if shape == "belote" else "bestia"
    text = _show(str(path), "--seat", "1")
    legend = "♠ spades" if game == "belote" else "C coppe (cups)"
    assert legend in text  # the legend of the card letters
    shown = re.findall(r"^  seat 1 sees: hand (.*?); trick on the table: (.*?); ", text, re.M)
    offered = re.findall(r"^  offered (\d+): (.*)$", text, re.MULTILINE)
    expected = []
    for entry in read_log(path).entries():
        if entry.WhichOneof("kind") == "step" and entry.step.seat == 1:
            _, observation = wire.decode_game_observation(entry.step.observation)
            hand = " ".join(card.label for card in observation.hand) or "none"
            expected.append((hand, len(entry.step.legal_actions)))
    assert expected and len(shown) == len(offered) == len(expected)
    pairs = zip(shown, offered, strict=True)
    assert [(hand, int(count)) for (hand, _), (count, _) in pairs] == expected
    played = [trick for _, trick in shown if trick != "none"]
    assert played and all(re.fullmatch(r"(seat \d \S+)(, seat \d \S+)*", t) for t in played)


def test_a_killed_match_leaves_a_partial_log_reported_incomplete(tmp_path: Path) -> None:
    # Its record to /dev/null: the bot's folder is read-only in its sandbox.
    slow_bot = shlex.join(rogue(Path("/dev/null"), "sleep_ms=50"))
    match = subprocess.Popen(
        [
            *BISCA,
            "match",
            "--game",
            "belote",
            "--bot",
            slow_bot,
            "--bot",
            "random",
            "--bot",
            "random",
            "--bot",
            "random",
            "--seed",
            "1",
            "--data",
            str(tmp_path / "data"),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )

    def partial_log() -> Path | None:
        candidates = list((tmp_path / "data").glob("matches/*/*.binlog.partial"))
        if candidates and len(read_log(candidates[0]).records) > 12:
            return candidates[0]
        return None

    partial = poll_until("a partial log of more than 12 records", partial_log, timeout=60)
    os.killpg(match.pid, signal.SIGKILL)
    match.wait()
    assert partial.exists() and not partial.with_suffix("").exists()
    verdict = verify(partial)
    assert verdict.ok and not verdict.complete and verdict.steps > 0
    code, stdout = _here("replay", "verify", str(partial))
    assert code == EXIT_INCOMPLETE
    assert "INCOMPLETE" in stdout
    assert "incomplete" in _show(str(partial))


def test_export_into_a_pipe_that_closes_early_is_quiet(logs: dict[str, Path]) -> None:
    """``bisca replay export LOG | head``: JSON by default, and no BrokenPipe traceback."""
    command = f"{shlex.join([*BISCA, 'replay', 'export', str(logs['belote'])])} | head -c 10"
    result = subprocess.run(["sh", "-c", command], capture_output=True, text=True, timeout=120)
    assert result.stdout.startswith("{")
    assert "Traceback" not in result.stderr and "BrokenPipe" not in result.stderr, result.stderr


def test_people_count_tricks_deals_hands_and_places_from_one(logs: dict[str, Path]) -> None:
    belote = _show(str(logs["belote"]))
    assert "— deal 1 (dealer seat" in belote and "— deal 0 " not in belote
    assert "trick 1 won by seat" in belote and "trick 0 won" not in belote
    assert re.search(r"score \d+, place 1, completed", belote)
    # Partners share their place, as the server's log line says it (operator review 55,
    # finding 13: "place 2" there was "rank 3" here): a losing Belote team is 2nd, not 3rd.
    placed = dict(re.findall(r"  seat (\d) \S+: score -?\d+, place (\d)", belote))
    assert sorted(placed) == ["0", "1", "2", "3"], belote
    assert placed["0"] == placed["2"] and placed["1"] == placed["3"]
    assert set(placed.values()) <= {"1", "2"}
    bestia = _show(str(logs["bestia4"]))
    assert "— hand 1 (dealer seat" in bestia and "— hand 0 " not in bestia
    # And inside a result: a deal's or a hand's number printed where it ends, as at its start.
    assert "deal scored: result deal number 1," in belote and "deal number 0" not in belote
    assert "hand ended: result hand number 1," in bestia and "hand number 0" not in bestia


def test_a_folder_whose_server_keeps_its_store_elsewhere_is_not_taken_for_its_records(
    logs: dict[str, Path], tmp_path: Path
) -> None:
    """Review s59a, F4: with the server's store in PostgreSQL (or a SQLite file elsewhere),
    ``replay verify --data DATA`` read no record of the matches and said OK of logs whose
    matches the store records failed.  It says which store to verify against, untrusted."""
    copy = tmp_path / "data"
    shutil.copytree(logs["belote"].parents[2], copy)
    DataDir(copy).store_note.write_text("postgresql://bisca@db.example/league\n")
    log = copy / "matches" / logs["belote"].parent.name / logs["belote"].name
    code, stdout = _here("replay", "verify", str(log), "--data", str(copy))
    assert code == EXIT_UNTRUSTED, stdout
    assert "server keeps its store in postgresql://bisca@db.example/league" in stdout, stdout
    assert "give --store with that URL" in stdout, stdout


def test_verify_all_audits_every_finished_match_and_names_a_missing_log(
    logs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Review s59a, F5: a finished match's log deleted was flagged by nothing unless someone
    asked for that very match.  ``--all --data DIR`` verifies every finished match the store
    records and names the one whose log is gone."""
    copy = tmp_path / "data"
    shutil.copytree(logs["belote"].parents[2], copy)
    code, stdout = _here("replay", "verify", "--all", "--data", str(copy))
    assert code == EXIT_OK, stdout
    assert stdout.count(": OK, match ") == len(SHAPES), stdout
    gone = copy / "matches" / logs["bestia5"].parent.name / logs["bestia5"].name
    gone.unlink()
    code, stdout = _here("replay", "verify", "--all", "--data", str(copy))
    assert code == EXIT_UNREADABLE, stdout
    assert f"{gone}: MISSING: the store records match {gone.parent.name} finished" in stdout
    assert stdout.count(": OK, match ") == len(SHAPES) - 1, stdout
    with pytest.raises(SystemExit):
        cli.main(["replay", "verify", "--all", "--data", str(copy), str(logs["belote"])])
    assert "--all takes --data DIR alone" in capsys.readouterr().err
