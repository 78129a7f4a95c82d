"""``bisca ladder show`` and ``bisca ladder stderr`` against a league app in process: the
public view and the owner's, every version side by side, ``--json``, and each refusal as one
line naming what was refused (exit 1, no traceback); and the tables of a rated version.  The
ladder's real matches read through them: ``tests/cli/test_league_server.py``."""

from __future__ import annotations

import json
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from bisca.engine import GAMES
from bisca.server.accounts import Registration, SubmissionLimits, connect_version
from bisca.server.cli import main
from bisca.server.cli._ladder import ladder_lines, versions_lines
from bisca.server.datadir import DataDir
from bisca.server.league import PACE_WINDOW, LadderSettings
from bisca.server.records import SeatEnd, SeatRecord
from bisca.server.store import SeatOutput, TokenKind, stamp
from bisca.server.web import _recent
from bisca.server.web._ladder import NOT_KEPT
from tests.support.league import PASSWORD, active_version, starter_bot

from .league_app import LeagueApp, league_app


@pytest.fixture
def app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[LeagueApp]:
    monkeypatch.delenv("BISCA_ACCOUNT_TOKEN", raising=False)
    with league_app(tmp_path / "data", Registration.OPEN) as running:
        store = running.accounts.store
        for name in ("alice", "bob"):
            store.accounts.create(name, PASSWORD)
        active_version(
            store, tmp_path / "data" / "submissions", "alice", starter_bot(tmp_path / "abot")
        )
        yield running


def token_of(app: LeagueApp, account: str) -> list[str]:
    return ["--token", app.accounts.store.accounts.new_token(account, TokenKind.API, "test")[1]]


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_a_version_s_ladder_public_and_its_owner_s(
    app: LeagueApp, capsys: pytest.CaptureFixture[str]
) -> None:
    server = ["--server", app.url]
    code, out, _ = run(capsys, "ladder", "show", "abot", "1", *server)
    assert code == 0
    assert out.startswith("abot v1: active (hosted, owner alice); it plays the ladder as abot.v1")
    assert (
        "not rated yet" in out and "its owner's alone" in out and "bisca ladder stderr" not in out
    )
    code, out, _ = run(capsys, "ladder", "show", "abot", "v1", *server, *token_of(app, "alice"))
    assert code == 0 and "in its 0 matches: 0 timeouts, 0 illegal moves, 0 crashes" in out
    assert f"bisca ladder stderr abot 1 MATCH --server {app.url}" in out
    code, out, _ = run(capsys, "ladder", "show", "abot", "1", "--json", *server)
    page = json.loads(out)
    assert page["version"]["player"] == "abot.v1" and page["counts"] is None
    code, out, _ = run(capsys, "ladder", "show", "abot", *server, *token_of(app, "alice"))
    assert code == 0 and "abot on the ladder" in out and "not rated" in out and "crashes" in out
    code, out, _ = run(capsys, "ladder", "show", "abot", "--json", *server)
    assert [p["version"]["label"] for p in json.loads(out)["versions"]] == ["abot v1"]


def test_each_refusal_is_one_line_naming_what_was_refused(
    app: LeagueApp, capsys: pytest.CaptureFixture[str]
) -> None:
    server = ["--server", app.url]
    alice, bob = token_of(app, "alice"), token_of(app, "bob")
    refusals = {
        ("show", "abot", "3"): "bisca ladder show: abot v3's ladder: not found (404): "
        "no version 3 of a bot named 'abot'",
        ("show", "nobot"): "bisca ladder show: nobot's versions: not found (404): "
        "no bot named 'nobot' in this league",
        ("stderr", "abot", "1", "m-1", *bob): "bisca ladder stderr: abot v1's stderr in match "
        "m-1: refused (403): abot v1's build log, reports and logs are its owner's alone",
        ("stderr", "abot", "1", "m-1", *alice): "bisca ladder stderr: abot v1's stderr in match "
        "m-1: not found (404): abot v1 played no match 'm-1'",
        ("stderr", "abot", "1", "../../bisca.sqlite3", *alice): "bisca ladder stderr: abot v1's "
        "stderr in match ../../bisca.sqlite3: not found (404): abot v1 played no match "
        "'../../bisca.sqlite3'",
        ("stderr", "abot", "1", "m-1"): "bisca ladder stderr: abot v1's stderr in match m-1: "
        "no API token: give --token or set BISCA_ACCOUNT_TOKEN",
    }
    for argv, line in refusals.items():
        code, out, err = run(capsys, "ladder", *argv, *server)
        assert (code, out) == (1, ""), argv
        assert err.startswith(line) and err.count("\n") == 1, err
    with pytest.raises(SystemExit) as usage:
        main(["ladder", "show", "abot", "one", *server])
    assert usage.value.code == 2
    assert "a version is a number such as 2 or v2, not 'one'" in capsys.readouterr().err


def test_a_version_says_why_the_ladder_leaves_it_waiting(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Review 45 (M3): a Belote ladder pairs 4 different bots; with 3 active, nothing was
    played for minutes and ``ladder show`` said only "active".  A second version of a bot
    does not count as another bot; a connected version counts while it is online."""
    monkeypatch.delenv("BISCA_ACCOUNT_TOKEN", raising=False)
    monkeypatch.setattr(_recent, "FRESH_S", 0.0)  # the store changes between two asks
    data = tmp_path / "data"
    games = {"belote": GAMES["belote"].settings({})}
    with league_app(data, Registration.OPEN, games=games) as app:
        store = app.accounts.store
        for name in ("alice", "bob", "carol", "dave"):
            store.accounts.create(name, PASSWORD)
        uploads = data / "submissions"
        for account, bot in (("alice", "abot"), ("bob", "bbot"), ("carol", "cbot")):
            active_version(store, uploads, account, starter_bot(tmp_path / bot))
        active_version(store, uploads, "alice", tmp_path / "abot")  # abot v2: the same bot
        connect_version(store, SubmissionLimits(), "dave", "dbot")  # offline
        server = ["--server", app.url]
        said = "waiting: the belote ladder needs bots of 4 different accounts active; 3 have one"

        code, out, _ = run(capsys, "ladder", "show", "abot", "1", *server)
        assert code == 0 and out.splitlines()[1] == said, out
        code, out, _ = run(capsys, "ladder", "show", "abot", "1", "--json", *server)
        assert json.loads(out)["waiting"] == [
            {"why": "bots", "game": "belote", "seats": 4, "bots": 3, "reason": said}
        ]
        code, out, _ = run(capsys, "ladder", "show", "abot", *server)
        assert f"abot v1: {said}" in out and f"abot v2: {said}" in out, out
        code, out, _ = run(capsys, "ladder", "show", "dbot", "1", *server)
        assert (
            "waiting: a connected version plays belote while its bot is online; it is not"
        ) in out

        active_version(store, uploads, "dave", starter_bot(tmp_path / "ebot"))  # a 4th bot
        code, out, _ = run(capsys, "ladder", "show", "abot", "1", "--json", *server)
        assert json.loads(out)["waiting"] == []
        code, out, _ = run(capsys, "ladder", "show", "abot", "1", *server)
        assert "waiting" not in out


#: A rated version's page, as ``GET /api/bots/BOT/versions/N/ladder`` answers its owner.
RATED = {
    "version": {"bot": "abot", "version": 2, "label": "abot v2", "player": "abot.v2",
                "owner": "alice", "kind": "hosted", "state": "active"},
    "ratings": [{"game": "belote", "mu": 26.1, "sigma": 6.2, "conservative": 7.5, "matches": 2}],
    "history": [
        {"game": "belote", "match_id": "m-1", "rank": 1, "result": 0.0, "mu": 24.0, "sigma": 7.0},
        {"game": "belote", "match_id": "m-2", "rank": 0, "result": 1.0, "mu": 26.1, "sigma": 6.2},
    ],
    "matches": [
        {"match_id": "m-2", "game": "belote", "status": "finished",
         "finished_at": "2026-12-02T14:03:11.000Z", "players": ["abot.v2", "bbot.v1"],
         "seats": [0, 2], "score": 82, "place": 1, "forfeited": False, "stderr": "/api/..."},
        {"match_id": "m-1", "game": "belote", "status": "finished",
         "finished_at": "2026-12-02T14:01:00.000Z", "players": ["bbot.v1", "abot.v2"],
         "seats": [1, 3], "score": 0, "place": 2, "forfeited": True, "stderr": "/api/..."},
    ],
    "counts": {"matches": 2, "timeouts": 3, "illegal_moves": 1, "crashes": 1, "defaults": 4,
               "forfeits": 1},
}  # fmt: skip


def test_a_rated_version_as_tables() -> None:
    lines = ladder_lines(RATED, 1)
    text = "\n".join(lines)
    assert lines[0] == "abot v2: active (hosted, owner alice); it plays the ladder as abot.v2"
    [rating] = [line.split() for line in lines if line.strip().startswith("belote ")][:1]
    assert rating == ["belote", "7.50", "26.10", "6.20", "2"]
    assert "belote rating history (μ−3σ after each rated match, oldest first): 3.00 → 7.50" in text
    assert (
        "in its 2 matches: 3 timeouts, 1 illegal moves, 1 crashes, 4 defaults, 1 forfeits" in text
    )
    assert "its 1 newest matches (--matches N for more)" in text
    assert "m-2" in text and "2026-12-02 14:03:11" in text and "abot.v2, bbot.v1" in text
    assert "m-1" not in text  # the newest match alone
    assert "finished (forfeited)" in "\n".join(ladder_lines(RATED, 10))

    side_by_side = versions_lines("abot", [RATED, {**RATED, "ratings": [], "counts": None}])
    rows = [line.split() for line in side_by_side if line.strip().startswith("abot v2")]
    assert rows[0] == [
        "abot",
        "v2",
        "active",
        "belote",
        "7.50",
        "26.10",
        "6.20",
        "2",
        "3",
        "1",
        "1",
        "4",
        "1",
    ]
    assert rows[1] == ["abot", "v2", "active", "-", "not", "rated"]


def test_a_version_held_back_by_its_pace_says_until_when(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A version that started ``matches_per_hour`` matches in the last hour waits: its page
    says so and from when the ladder may draw it again (the oldest of them an hour on)."""
    monkeypatch.delenv("BISCA_ACCOUNT_TOKEN", raising=False)
    monkeypatch.setattr(_recent, "FRESH_S", 0.0)  # the store changes between two asks
    data = tmp_path / "data"
    games = {"belote": GAMES["belote"].settings({})}
    with league_app(data, Registration.OPEN, games=games, ladder=LadderSettings(2)) as app:
        store = app.accounts.store
        uploads = data / "submissions"
        for account, bot in (
            ("alice", "abot"),
            ("bob", "bbot"),
            ("carol", "cbot"),
            ("dave", "dbot"),
        ):
            store.accounts.create(account, PASSWORD)
            active_version(store, uploads, account, starter_bot(tmp_path / bot))
        seated = ["abot.v1", "bbot.v1", "cbot.v1", "dbot.v1"]
        store.matches.create("m-1", "belote", {}, 1, seated, {})
        server = ["--server", app.url]
        code, out, _ = run(capsys, "ladder", "show", "abot", "1", "--json", *server)
        assert json.loads(out)["waiting"] == []  # one match of its two an hour

        store.matches.create("m-2", "belote", {}, 2, [*seated[:2], "x", "y"], {})
        first = store.matches.get("m-1")
        assert first is not None
        until = datetime.fromisoformat(first.created_at) + PACE_WINDOW
        said = (
            "waiting: it started 2 matches in the last hour, the ladder's pace (2 an hour); "
            f"it may be drawn again from {until:%H:%M} UTC"
        )
        code, out, _ = run(capsys, "ladder", "show", "abot", "1", *server)
        assert code == 0 and out.splitlines()[1] == said, out
        code, out, _ = run(capsys, "ladder", "show", "bbot", "1", "--json", *server)
        pace, others_held = json.loads(out)["waiting"]
        assert pace == {
            "why": "pace", "pace": 2, "played_last_hour": 2, "until": stamp(until), "reason": said
        }  # fmt: skip
        assert (others_held["why"], others_held["free"]) == ("others", 2)  # alice's is held too
        # cbot is below its pace, but a table needs three other accounts free, and alice's and
        # bob's versions are at theirs: said, with when the first is free again (review s58e:
        # a version sent once the others had played their hour waited an hour, saying nothing).
        others = (
            "waiting: the belote ladder needs bots of 3 other accounts that may be drawn now; "
            "1 has one (the others played their 2 matches of the hour, or rest); the first may "
            f"be drawn again from {until:%H:%M} UTC"
        )
        code, out, _ = run(capsys, "ladder", "show", "cbot", "1", "--json", *server)
        assert json.loads(out)["waiting"] == [
            {"why": "others", "game": "belote", "needed": 3, "free": 1, "pace": 2,
             "until": stamp(until), "reason": others}
        ]  # fmt: skip
        store.matches.create("m-3", "belote", {}, 3, ["cbot.v1", "dbot.v1", "x", "y"], {})
        code, out, _ = run(capsys, "ladder", "show", "cbot", "1", *server)
        assert code == 0 and others.replace("1 has one", "0 have one") in out, out


def test_a_versions_output_is_held_while_a_match_of_the_same_deal_is_not_over(
    app: LeagueApp, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Review 52: a pairing's rotations share a deal, and a bot that writes the cards it is
    shown gave its owner every hand of the rotations still to be played through its stderr of
    a finished one, while their replays stayed closed.  Its stderr and its stdout are held as
    the replay is."""
    store = app.accounts.store
    bots = ["abot.v1", "x.v1", "y.v1", "z.v1"]
    clock = {"move_ms": 1000, "bank_ms": 0, "policy": "default"}
    store.matches.create("m-first", "belote", {}, 77, bots, clock, seals_twins=True)
    store.matches.create("m-second", "belote", {}, 77, bots[1:] + bots[:1], clock)
    store.matches.mark_running("m-first")
    store.matches.finish(
        "m-first",
        32,
        [SeatRecord(n, b, "", 0, 1, SeatEnd.COMPLETED, "", 0, 0) for n, b in enumerate(bots)],
    )
    written = {"stderr": "my hand: 7H 8H 9H\n", "stdout": "printed: 7H 8H 9H\n"}
    store.logs.put_output(
        [SeatOutput("m-first", 0, written["stderr"].encode(), written["stdout"].encode())]
    )
    for stream in written:
        argv = ["ladder", stream, "abot", "1", "m-first", "--server", app.url]
        code, out, err = run(capsys, *argv, *token_of(app, "alice"))
        assert (code, out) == (1, "")
        assert err == (
            f"bisca ladder {stream}: abot v1's {stream} in match m-first: refused (403): match "
            f"m-second is dealt the same cards and is not over; abot v1's {stream} in m-first "
            "opens when it is\n"
        )
    store.matches.fail("m-second", "its bots never came")
    for stream, text in written.items():
        argv = ["ladder", stream, "abot", "1", "m-first", "--server", app.url]
        code, out, _ = run(capsys, *argv, *token_of(app, "alice"))
        assert code == 0 and out == f"--- abot.v1, seat 0 ---\n{text}"
    # To a terminal, without what would drive it (a bot's bytes: the clipboard, the title);
    # redirected, as the bot wrote them.
    escape = "\x1b]52;c;cHduZWQ=\x07\x1b[2Jmy hand\n"
    store.logs.put_output([SeatOutput("m-first", 0, b"", escape.encode())])
    argv = ["ladder", "stdout", "abot", "1", "m-first", "--server", app.url]
    code, out, _ = run(capsys, *argv, *token_of(app, "alice"))
    assert code == 0 and out == f"--- abot.v1, seat 0 ---\n{escape}"
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    code, out, _ = run(capsys, *argv, *token_of(app, "alice"))
    assert code == 0 and out == "--- abot.v1, seat 0 ---\nmy hand\n"
    # A seat whose stdout the store did not keep (its match played before it did) is read
    # beside the match, where this machine played it; else it says none was kept.
    store.logs.put_output([SeatOutput("m-first", 0, b"my hand\n", None)])
    code, out, _ = run(capsys, *argv, *token_of(app, "alice"))
    assert (
        code == 0
        and out == f"--- abot.v1, seat 0 ---\n(no stdout is kept for this seat: {NOT_KEPT})\n"
    )
    match_dir = DataDir(store.data_dir).match_dir("m-first")
    match_dir.mkdir(parents=True, exist_ok=True)
    (match_dir / "seat0.stdout.log").write_bytes(b"x" * 70_000 + b"printed here\n")
    (match_dir / "seat0.stderr.log").write_bytes(b"not this one\n")
    code, out, _ = run(capsys, *argv, *token_of(app, "alice"))
    assert code == 0 and out.startswith("--- abot.v1, seat 0 ---\nxxx"), out[:100]
    assert out.endswith("printed here\n") and len(out) == len("--- abot.v1, seat 0 ---\n") + 65_536
    # Forgotten by the store (``output_days``), a match that is over shows nothing, whatever
    # is beside it (review s56: such files were shown for good).
    store.logs.forget_output(datetime.now(UTC) + timedelta(days=1), 64)
    for stream in ("stdout", "stderr"):
        argv = ["ladder", stream, "abot", "1", "m-first", "--server", app.url]
        code, out, _ = run(capsys, *argv, *token_of(app, "alice"))
        assert out == f"--- abot.v1, seat 0 ---\n(no {stream} is kept for this seat: {NOT_KEPT})\n"

    # The version's page links both streams for its owner alone; no other stream is served.
    code, out, _ = run(capsys, "ladder", "show", "abot", "1", "--json", "--server", app.url)
    listed = next(m for m in json.loads(out)["matches"] if m["match_id"] == "m-first")
    assert (listed["stderr"], listed["stdout"]) == (None, None)
    argv = ["ladder", "show", "abot", "1", "--json", "--server", app.url, *token_of(app, "alice")]
    code, out, _ = run(capsys, *argv)
    listed = next(m for m in json.loads(out)["matches"] if m["match_id"] == "m-first")
    path = "/api/bots/abot/versions/1/matches/m-first/"
    assert (listed["stderr"], listed["stdout"]) == (path + "stderr", path + "stdout")
    [_, token] = token_of(app, "alice")
    request = urllib.request.Request(
        f"{app.url.rstrip('/')}{path}stdin", headers={"Authorization": f"Bearer {token}"}
    )
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=30)
    assert refused.value.code == 404
