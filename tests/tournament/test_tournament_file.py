"""Tournament files: bad ones are refused before anything runs, naming the line; good ones
plan every match deterministically."""

from __future__ import annotations

import itertools
from collections import Counter
from pathlib import Path

import pytest

from bisca.server.errors import TournamentFileError
from bisca.server.store import StoredTournament
from bisca.server.tournament import (
    derive_seed,
    key_line,
    load_tournament,
    parse_tournament,
    planned_seed,
)
from tests.support.commands import bisca

from .support import TournamentFile, tournament_text

FIVE = tuple((name, "random") for name in ("a", "b", "c", "d", "e"))


def refused(text: str) -> TournamentFileError:
    with pytest.raises(TournamentFileError) as caught:
        parse_tournament(text, "t.toml")
    return caught.value


def line_of(text: str, fragment: str) -> int:
    return next(n for n, line in enumerate(text.splitlines(), 1) if fragment in line)


@pytest.mark.parametrize(
    ("change", "fragment", "problem"),
    [
        (('game = "belote"', 'game = "poker"'), 'game = "poker"', "unknown game 'poker'"),
        (('game = "belote"', "game = []"), "game = []", "unknown game []"),
        (('game = "belote"', "game = {}"), "game = {}", "unknown game {}"),
        (("deals = 1", "deals = 0"), "deals = 0", "deals must be 1..1000"),
        (("deals = 1", "dealz = 1"), "dealz = 1", "unknown setting(s) dealz"),
        (("concurrency = 2", "concurrency = 0"), "concurrency = 0", "concurrency must be"),
        (("concurrency = 2", "concurrency = true"), "concurrency = true", "concurrency must be"),
        (("move_ms = 3000", 'policy = "sometimes"'), "policy", "unknown timeout policy"),
        (("move_ms = 3000", "move_ms = 3000\nspeed = 2"), "speed = 2", "unknown clock key"),
        (("seed = 7", "sed = 7"), "sed = 7", "unknown key 'sed'"),
        (('name = "t"', 'name = "a b"'), 'name = "a b"', "name must be"),
        (('command = "random"', 'command = ""'), 'command = ""', "needs command"),
        (('command = "random"', 'command = "python \'unclosed"'), "unclosed", "bad command"),
        (('name = "random"', 'name = "greedy"  # again'), "# again", "two bots are named"),
        (("seed = 7", 'format = "swiss"'), 'format = "swiss"', "unknown format"),
        (("seed = 7", 'challenger = "greedy"'), "challenger", "only a gauntlet"),
    ],
)
def test_bad_files_are_refused_with_the_line(
    change: tuple[str, str], fragment: str, problem: str
) -> None:
    text = tournament_text().replace(*change, 1)
    error = refused(text)
    assert problem in error.problem
    assert error.line == line_of(text, fragment), str(error)
    assert str(error).startswith(f"t.toml:{error.line}: ")


def test_syntax_errors_carry_the_toml_line() -> None:
    text = tournament_text().replace("seed = 7", "seed = = 7")
    error = refused(text)
    assert error.line == line_of(text, "seed = = 7")
    assert "not valid TOML" in error.problem


def test_semantic_errors_between_keys() -> None:
    text = tournament_text(duplicate=True, per_pairing=3)
    error = refused(text)
    assert "multiple of 2" in error.problem
    assert error.line == line_of(text, "matches_per_pairing")
    text = tournament_text(bots=(("only", "random"),))
    assert "at least two bots" in refused(text).problem
    text = tournament_text(extra='format = "gauntlet"')
    error = refused(text)
    assert "challenger" in error.problem and error.line == line_of(text, "gauntlet")
    text = tournament_text(extra='format = "gauntlet"\nchallenger = "nobody"')
    assert refused(text).line == line_of(text, "nobody")
    text = tournament_text("bestia", settings="seats = 5")
    error = refused(text)
    assert "cannot share the 5 seats" in error.problem
    text = tournament_text("bestia", settings="seats = 6", extra="bots_per_match = 4")
    assert "must divide the 6 seats" in refused(text).problem
    text = "name = 'x'\n"
    assert refused(text).line is None and "no game" in refused(text).problem


def test_key_line_finds_tables_arrays_and_dotted_keys() -> None:
    text = (
        "game = 'belote'\n"
        "settings.deals = 2\n"
        "[clock]\n"
        "# policy = 'commented'\n"
        "policy = 'x'\n"
        "[[bots]]\n"
        "name = 'a'\n"
        "[[bots]]\n"
        "name = 'b'\n"
        "command = 'c'\n"
    )
    assert key_line(text, ("game",)) == 1
    assert key_line(text, ("settings", "deals")) == 2
    assert key_line(text, ("clock", "policy")) == 5
    assert key_line(text, ("clock", "move_ms")) == 3
    assert key_line(text, ("bots",)) == 6
    assert key_line(text, ("bots", 1, "name")) == 9
    assert key_line(text, ("bots", 1, "command")) == 10
    assert key_line(text, ("bots", 0, "command")) == 6
    assert key_line(text, ("nothing",)) is None


def test_the_cli_refuses_a_broken_file_before_anything_runs(tmp_path: Path) -> None:
    path = tmp_path / "broken.toml"
    path.write_text(tournament_text().replace("deals = 1", "deals = -3"))
    data = tmp_path / "data"
    done = bisca("tournament", "run", str(path), "--data", str(data))
    assert done.returncode == 2
    assert f"{path}:{line_of(path.read_text(), 'deals = -3')}: belote settings:" in done.stderr
    assert not data.exists()
    missing = bisca("tournament", "check", str(tmp_path / "nope.toml"))
    assert missing.returncode == 2 and "no such tournament file" in missing.stderr


def test_check_says_how_the_deals_are_seeded(tmp_path: Path) -> None:
    path = tmp_path / "t.toml"
    path.write_text(tournament_text())  # seed = 7
    done = bisca("tournament", "check", str(path))
    assert done.returncode == 0, done.stderr
    assert "seed 7: a bot that tries every seed up to it finds it from its own cards" in done.stdout
    path.write_text(tournament_text().replace("seed = 7", f"seed = {2**62 + 5}"))
    assert "finds it" not in bisca("tournament", "check", str(path)).stdout
    path.write_text(tournament_text().replace("seed = 7\n", ""))
    done = bisca("tournament", "check", str(path))
    assert "seeds: drawn at random when it is first run, then kept with its plan" in done.stdout
    assert "t-0001  seed (drawn when run)" in done.stdout, done.stdout


def test_round_robin_plan(tournament_file: TournamentFile) -> None:
    spec = load_tournament(tournament_file(bots=FIVE, per_pairing=4))
    slots = spec.plan()
    pairings = list(itertools.combinations("abcde", 2))
    assert len(slots) == len(pairings) * 4 == 40
    assert len({s.planned_id for s in slots}) == 40 and slots[0].planned_id == "t-0001"
    assert len({s.seed for s in slots}) == 40  # no duplicate deals: every match its own deal
    for pairing, group in enumerate(pairings):
        mine = [s for s in slots if s.pairing == pairing]
        assert [s.bots for s in mine] == [
            (group[0], group[1], group[0], group[1]),
            (group[1], group[0], group[1], group[0]),
        ] * 2
    assert spec.plan() == slots  # deterministic
    # Every bot holds every seat equally often.
    held = Counter((bot, number) for s in slots for number, bot in enumerate(s.bots))
    assert set(held.values()) == {8}


def test_duplicate_plan_shares_deals_across_seatings_and_pairings(
    tournament_file: TournamentFile,
) -> None:
    spec = load_tournament(
        tournament_file(
            game="bestia", settings="seats = 4", bots=FIVE[:4], per_pairing=8, duplicate=True
        )
    )
    assert spec.bots_per_match == 4
    slots = spec.plan()
    assert len(slots) == 8
    assert [s.seating for s in slots] == [0, 1, 2, 3] * 2
    assert [s.seed for s in slots] == [slots[0].seed] * 4 + [slots[4].seed] * 4
    assert slots[0].seed != slots[4].seed
    for first in (0, 4):
        deal_set = slots[first : first + 4]
        for bot in "abcd":
            assert sorted(s.bots.index(bot) for s in deal_set) == [0, 1, 2, 3]
    assert slots[1].bots == ("b", "c", "d", "a")


def test_gauntlet_plan(tournament_file: TournamentFile) -> None:
    spec = load_tournament(
        tournament_file(bots=FIVE, extra='format = "gauntlet"\nchallenger = "c"', per_pairing=2)
    )
    slots = spec.plan()
    assert spec.pairings() == [("c", "a"), ("c", "b"), ("c", "d"), ("c", "e")]
    assert len(slots) == 8
    assert all("c" in s.bots for s in slots)
    bestia = load_tournament(
        tournament_file(
            game="bestia",
            settings="seats = 4",
            bots=FIVE,
            extra='format = "gauntlet"\nchallenger = "a"\nbots_per_match = 2',
        )
    )
    assert len(bestia.pairings()) == 4


@pytest.mark.parametrize("bots", [2, 3, 5, 8])
@pytest.mark.parametrize(
    ("game", "settings", "extra"),
    [
        ("belote", "deals = 1", ""),
        ("bestia", "seats = 4", ""),
        ("bestia", "seats = 4", "bots_per_match = 2"),
        ("belote", "deals = 1", 'format = "gauntlet"\nchallenger = "b0"'),
        ("bestia", "seats = 6", 'format = "gauntlet"\nchallenger = "b1"\nbots_per_match = 3'),
    ],
)
def test_the_pairings_counted_are_the_pairings_made(
    bots: int, game: str, settings: str, extra: str
) -> None:
    """The plan's bound is checked on :meth:`pairing_count`, counted without making the
    pairings (review s57c: 100 bots at six seats made 1.2 billion before the bound was
    checked): the count is every plan's number of pairings, each shape counted out."""
    named = tuple((f"b{number}", "random") for number in range(bots))
    try:
        spec = parse_tournament(
            tournament_text(game, settings=settings, bots=named, extra=extra), "t.toml"
        )
    except TournamentFileError:
        return  # (fewer bots than a match seats: refused, whatever the count)
    assert spec.pairing_count() == len(spec.pairings()) == len(set(spec.pairings()))


def test_a_plan_of_billions_of_pairings_is_refused_before_one_is_made() -> None:
    """Review s57c: a 4 KB file, 100 Bestia bots at six seats, ran out of memory making its
    1.2 billion pairings; it is refused at once, naming the count."""
    named = tuple((f"b{number}", "random") for number in range(100))
    text = tournament_text("bestia", settings="seats = 6", bots=named, per_pairing=1)
    with pytest.raises(TournamentFileError, match="that plans 1192052400 matches; the most is"):
        parse_tournament(text, "t.toml")


def test_seeds_are_stable() -> None:
    # SHA-256 based: the same on every machine and Python version.
    assert derive_seed(7, "set", 0) == derive_seed(7, "set", 0) < 2**63
    assert derive_seed(7, "set", 0) != derive_seed(8, "set", 0)


def test_a_tournament_without_a_seed_is_dealt_from_a_secret_one_kept_with_its_plan() -> None:
    """Review 48: the default seed derived from the name, which every match id shows: a bot
    computed it and knew every hand."""
    spec = parse_tournament(tournament_text().replace("seed = 7\n", ""), "t.toml")
    assert spec.seed is None
    first, other = planned_seed(spec, None), planned_seed(spec, None)
    assert first.seed != other.seed  # drawn, 63 bits
    assert {s.seed for s in first.plan()}.isdisjoint(s.seed for s in other.plan())
    kept = StoredTournament("t", "belote", "t.toml", "", first.seed)
    assert planned_seed(spec, kept).plan() == first.plan()  # a resumed run, a worker
    # A plan stored before seeds were kept was dealt from the name's.
    older = planned_seed(spec, StoredTournament("t", "belote", "t.toml", ""))
    assert older.seed == derive_seed(0, "name", "t")
    given = parse_tournament(tournament_text(), "t.toml")  # seed = 7: the same deals anywhere
    assert planned_seed(given, None) == given == planned_seed(given, kept)
    with pytest.raises(ValueError, match="drawn when it is planned"):
        spec.plan()


def test_the_sandbox_and_its_limits_are_read_from_the_file(tmp_path: Path) -> None:
    folder = tmp_path / "mine"
    folder.mkdir()
    text = tournament_text(extra="sandbox = true\n[limits]\nmemory_mb = 1024\ncpu_s = 60")
    text += f'\n[[bots]]\nname = "mine"\ncommand = "random"\ndir = "{folder}"\n'
    text += "limits = { memory_mb = 4096, processes = 32 }\n"
    spec = parse_tournament(text, str(tmp_path / "t.toml"))
    assert spec.sandbox is True
    assert (spec.limits.memory_mb, spec.limits.cpu_s) == (1024, 60)
    mine = next(bot for bot in spec.bots if bot.name == "mine")
    assert mine.dir == folder.resolve()
    assert (mine.limits.memory_mb, mine.limits.processes, mine.limits.cpu_s) == (4096, 32, 60)
    others = [bot for bot in spec.bots if bot.name != "mine"]
    assert all(bot.limits == spec.limits and bot.dir is None for bot in others)
    assert parse_tournament(tournament_text(extra="sandbox = false"), "t.toml").sandbox is False


@pytest.mark.parametrize(
    ("extra", "fragment", "problem"),
    [
        ('sandbox = "no"', "sandbox", "sandbox must be true or false"),
        ("[limits]\nmemory_gb = 2", "memory_gb", "unknown limit 'memory_gb'"),
        ("[limits]\nmemory_mb = 0", "memory_mb = 0", "memory_mb must be a whole number"),
        ("[limits]\ncpu_s = true", "cpu_s = true", "cpu_s must be a whole number"),
    ],
)
def test_bad_sandbox_settings_are_refused_with_the_line(
    extra: str, fragment: str, problem: str
) -> None:
    text = tournament_text(extra=extra)
    error = refused(text)
    assert problem in error.problem, error
    assert error.line == line_of(text, fragment), error


def test_a_bot_dir_that_is_no_folder_is_refused(tmp_path: Path) -> None:
    text = (
        tournament_text() + f'\n[[bots]]\nname = "x"\ncommand = "random"\ndir = "{tmp_path}/nope"\n'
    )
    error = refused(text)
    assert "no folder" in error.problem and error.line == line_of(text, "nope")
