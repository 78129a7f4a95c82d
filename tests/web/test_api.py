"""The JSON API of the browser app, every endpoint, good and bad input, against a real
``bisca serve --http`` process on a data directory a real tournament played into."""

from __future__ import annotations

import contextlib
import gzip
import json
import subprocess
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path

import pytest

from bisca.server.datadir import DataDir
from bisca.server.logs import read_log
from bisca.server.store import Store
from bisca.server.web import PACING_ALLOWANCE_MS, PERSON_CLOCK, to_json
from tests.support.arena import Arena
from tests.support.commands import BISCA, bisca
from tests.support.waiting import poll

from .support import call, copy_data_dir, socket_frames, socket_send

Site = tuple[Arena, str]
#: Seat 3 deals, so the person (seat 0) bids first: the bidding round always asks them, and
#: the takes it excludes are always shown (the bots' choices cannot take the bid before).
BELOTE_TABLE = {
    "request": {
        "game": "GAME_BELOTE",
        "settings": {"belote": {"deals": 1, "firstDealer": 3}},
        "bots": ["", "greedy", "random", "greedy"],
        "seed": "7",
    }
}


def ws(url: str) -> str:
    return url.replace("http://", "ws://")


def test_info_names_the_games(site: Site) -> None:
    _, url = site
    status, body = call(f"{url}/api/info")
    assert status == 200 and body["arena"] is True
    assert body["accounts"] is False  # no league open to strangers: no account pages
    assert [g["name"] for g in body["games"]] == ["belote", "bestia"]


def test_leaderboard_is_the_stores(site: Site, data_dir: Path) -> None:
    _, url = site
    status, body = call(f"{url}/api/leaderboard/belote")
    assert status == 200
    with Store.in_directory(data_dir) as store:
        rows = store.ratings.leaderboard("belote")
        standings = store.matches.standings("belote")
    shown = body["leaderboard"]["rows"]
    assert [(r["botName"], r["matches"]) for r in shown] == [(r.bot, r.matches) for r in rows]
    assert shown[0]["mu"] == pytest.approx(rows[0].mu)
    for row in rows:
        tally = standings.tallies[row.bot]
        assert body["standings"]["bots"][row.bot] == {
            "wins": tally.wins,
            "draws": tally.draws,
            "losses": tally.losses,
            "meanMargin": standings.mean_margin(row.bot),
            "incidents": asdict(standings.incidents[row.bot]),
        }
    greedy = body["standings"]["headToHead"]["greedy"]["random"]
    assert greedy == {
        "wins": standings.head_to_head["greedy"]["random"].wins,
        "draws": standings.head_to_head["greedy"]["random"].draws,
        "losses": standings.head_to_head["greedy"]["random"].losses,
        "mean_margin": standings.head_to_head["greedy"]["random"].mean_margin,
    }
    status, history = call(f"{url}/api/leaderboard/belote/history?bot=greedy")
    assert status == 200 and history["history"]
    assert {point["bot"] for point in history["history"]} == {"greedy"}


@pytest.mark.parametrize(
    ("path", "status", "words"),
    [
        ("/api/leaderboard/chess", 404, "no game 'chess'"),
        ("/api/leaderboard/chess/history", 404, "no game 'chess'"),
        ("/api/matches?page=0", 400, "page: expected a whole number"),
        ("/api/matches?pageSize=1000", 400, "pageSize"),
        ("/api/matches?page=%C2%B2", 400, "page: expected a whole number"),
        ("/api/matches?page=" + "9" * 5000, 400, "page: expected a whole number"),
        ("/api/matches?status=sleeping", 400, "status: 'sleeping' is not one of"),
        ("/api/matches?game=go", 404, "no game 'go'"),
        ("/api/matches?tournament=nope", 404, "no tournament named 'nope'"),
        ("/api/matches/m-nothing", 404, "no match 'm-nothing'"),
        ("/api/matches/m-nothing/replay", 404, "no match 'm-nothing'"),
        ("/api/tables/bots?game=go", 404, "no game 'go'"),
        ("/api/nothing", 404, "Not Found: GET /api/nothing"),
        ("/static/nothing.js", 404, "no file 'nothing.js'"),
        ("/static/../_api.py", 404, ""),
    ],
)
def test_bad_requests_get_a_4xx_with_a_message(
    site: Site, path: str, status: int, words: str
) -> None:
    _, url = site
    got, body = call(f"{url}{path}")
    assert got == status
    assert words in body["error"]
    assert "Traceback" not in body["error"]


def test_match_list_filters_and_pages(site: Site, data_dir: Path) -> None:
    _, url = site
    with Store.in_directory(data_dir) as store:
        every = store.matches.find(None, 1000)
    status, body = call(f"{url}/api/matches?tournament=web-league&status=finished&pageSize=4")
    assert status == 200
    finished = [m for m in every if m.id.startswith("web-league") and m.status.value == "finished"]
    assert body["total"] == len(finished) and len(body["list"]["matches"]) == 4
    status, second = call(f"{url}/api/matches?tournament=web-league&pageSize=4&page=2")
    assert {m["matchId"] for m in second["list"]["matches"]}.isdisjoint(
        m["matchId"] for m in body["list"]["matches"]
    )
    status, random = call(f"{url}/api/matches?bot=random&game=belote&pageSize=100")
    assert random["total"] == sum("random" in m.bots for m in every if m.game == "belote")
    assert all("random" in m["bots"] for m in random["list"]["matches"])
    # The site is shared: Bestia tables of the browser tests may have played in it.
    status, bestia = call(f"{url}/api/matches?game=bestia")
    assert bestia["total"] == sum(m.game == "bestia" for m in every)
    one = body["list"]["matches"][0]
    status, info = call(f"{url}/api/matches/{one['matchId']}")
    assert status == 200 and info["match"]["status"] == "MATCH_STATUS_FINISHED"
    assert [r["botName"] for r in info["match"]["results"]] == one["bots"]


def test_replay_is_verified_and_each_frame_holds_the_logged_observation(
    site: Site, data_dir: Path
) -> None:
    _, url = site
    status, body = call(f"{url}/api/matches/web-league-0001/replay")
    assert status == 200, body
    assert body["verdict"]["trusted"] is True and body["verdict"]["signedBy"].startswith("ed25519:")
    # The answer is anybody's: the log named by its file, not by the server's folders.
    assert body["verdict"]["lines"][0].startswith("web-league-0001.binlog: OK"), body["verdict"]
    assert str(data_dir) not in json.dumps(body)
    log = read_log(data_dir / "matches" / "web-league-0001" / "web-league-0001.binlog")
    steps = [entry.step for entry in log.entries() if entry.WhichOneof("kind") == "step"]
    frames = body["frames"]
    assert len(frames) == len(steps) + 1 and frames[-1]["decision"] is None
    for frame, step in zip(frames, steps, strict=False):
        assert frame["decision"]["seat"] == step.seat
        assert frame["observations"][step.seat] == to_json(step.observation)
        assert frame["decision"]["action"] == to_json(step.action)


def test_a_person_plays_a_table_through_the_socket(site: Site) -> None:
    arena, url = site
    status, table = call(f"{url}/api/tables", BELOTE_TABLE)
    assert status == 201, table
    assert table["seat"] == 0 and table["seats"][0].startswith("person-")
    play = f"{ws(url)}/api/tables/{table['table']}/play"
    # A wrong token is refused; the game waits for its person meanwhile.
    refused = socket_send(play, [{"token": "bisca_table_wrong"}])
    assert refused[0]["status"] == 401 and "wrong or missing table token" in refused[0]["error"]
    status, body = call(f"{url}/api/matches/{table['matchId']}/replay")
    assert status == 409 and "watch it live" in body["error"]
    # Bad replies are refused with a message, and the game goes on.
    frames = socket_send(
        play,
        [{"token": table["token"]}, "not json", {"reply": {"requestId": "r0-nothing"}}],
        errors=2,
    )
    errors = [f for f in frames if "error" in f]
    assert any("message: not JSON" in e["error"] for e in errors)
    assert any("is not the open request" in e["error"] for e in errors)
    # Watching it needs the spectator token; the omniscient view, the admin's.
    watch = f"{ws(url)}/api/matches/{table['matchId']}/watch"
    nobody = socket_send(watch, [{"token": "", "request": {}}])
    assert nobody[0]["status"] == 401
    spectator = (arena.data_dir / "spectator.token").read_text().strip()
    peeking = socket_send(watch, [{"token": spectator, "request": {"omniscient": True}}])
    assert peeking[0]["status"] == 403
    watched = socket_send(watch, [{"token": spectator, "request": {}}])
    assert watched[0]["update"]["start"]["live"] is True
    # Played to the end by answering every request with its first legal action.
    frames = socket_frames(play, {"token": table["token"]}, until="matchEnded", replies=200)
    ended = [f["server"]["matchEnded"] for f in frames if "matchEnded" in f.get("server", {})]
    assert ended and ended[0]["status"] == "MATCH_STATUS_FINISHED"
    # The table's bots are told the match is over (their streams closed) and exit by
    # themselves, as a local match's do: none is killed at the end of its grace.
    bot_logs = [
        DataDir(arena.data_dir).match_dir(table["matchId"]) / f"seat{seat}.stderr.log"
        for seat in (1, 2, 3)
    ]
    done = "the server closed the stream; done"
    assert poll(lambda: all(log.exists() and done in log.read_text() for log in bot_logs), 60), [
        log.read_text()[-400:] for log in bot_logs if log.exists()
    ]
    # The person is not charged for the page's pacing: the referee's move time is the
    # person's plus the allowance the page may hold a question back for, both told the page.
    summary = next(f["table"] for f in frames if "table" in f)
    assert summary["clock"] == {
        "moveMs": PERSON_CLOCK.move_ms,
        "bankMs": PERSON_CLOCK.bank_ms,
    }
    assert summary["pacingMs"] == PACING_ALLOWANCE_MS > 0
    first = next(
        f["server"]["actionRequest"] for f in frames if "actionRequest" in f.get("server", {})
    )
    assert first["observation"]["belote"]["phase"] == "PHASE_BIDDING_ROUND_1", first
    move_ms = int(first["clock"]["moveMs"])
    assert PERSON_CLOCK.move_ms < move_ms <= PERSON_CLOCK.move_ms + PACING_ALLOWANCE_MS
    illegal = [f["illegal"] for f in frames if "illegal" in f]
    reasons = [a["reason"] for i in illegal for a in i["actions"]]
    assert reasons and all(reasons)  # the referee's own words for the cards held back
    # Each with a code the page translates: none reaches the person in the referee's English.
    uncoded = [a for i in illegal for a in i["actions"] if not a.get("code")]
    assert not uncoded, uncoded
    # The takes the bidding round excludes, with their reason as a code the page translates.
    takes = [a for i in illegal for a in i["actions"] if "take" in a["action"]["belote"]]
    assert takes and {a["code"] for a in takes} <= {"round1-take", "round2-take"}
    status, info = call(f"{url}/api/matches/{table['matchId']}")
    assert info["match"]["status"] == "MATCH_STATUS_FINISHED"
    with Store.in_directory(arena.data_dir) as store:
        record = store.matches.get(table["matchId"])
    assert record is not None and not record.rated  # a person's game counts in no leaderboard
    status, replay = call(f"{url}/api/matches/{table['matchId']}/replay")
    assert status == 200 and replay["verdict"]["trusted"]


@pytest.mark.parametrize(
    ("change", "status", "words"),
    [
        ({"bots": ["", "greedy", "greedy"]}, 400, "has 4 seats"),
        ({"bots": ["", "", "greedy", "greedy"]}, 400, "exactly one seat is the person's"),
        ({"bots": ["", "nobody", "greedy", "greedy"]}, 409, "'nobody' is neither a sample bot"),
        ({"settings": {"belote": {"deals": 0}}}, 400, "settings:"),
        ({"clock": {"moveMs": 0}}, 400, "clock: move time must be"),
        ({"game": "GAME_CHESS"}, 400, "not a bisca.v1.CreateMatchRequest"),
        ({"seed": "-1"}, 400, "not a bisca.v1.CreateMatchRequest"),
    ],
)
def test_bad_tables_are_refused(
    site: Site, change: dict[str, object], status: int, words: str
) -> None:
    _, url = site
    request = {**BELOTE_TABLE["request"], **change}
    got, body = call(f"{url}/api/tables", {"request": request})
    assert got == status, body
    assert words in body["error"]


def test_a_body_that_is_not_json_is_refused(site: Site) -> None:
    _, url = site
    status, body = call(f"{url}/api/tables", raw=b"{nope")
    assert status == 400 and body["error"].startswith("body: not JSON")
    status, body = call(f"{url}/api/tables", raw=b"[1]")
    assert status == 400 and body["error"] == "body: expected a JSON object"


@contextlib.contextmanager
def bisca_web(data: Path) -> Iterator[str]:
    """``bisca web --data DATA`` (no arena) for the block: the app's URL."""
    process = subprocess.Popen(
        [*BISCA, "web", "--data", str(data), "--http", "127.0.0.1:0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert line.startswith("browser app on http://127.0.0.1:"), line + process.stderr.read()
        yield line.split()[3].rstrip("/")
    finally:
        process.terminate()
        process.wait(timeout=15)


def test_bisca_web_shows_a_data_directory_without_an_arena(data_dir: Path) -> None:
    with bisca_web(data_dir) as url:
        status, body = call(f"{url}/api/leaderboard/belote")
        assert status == 200 and body["leaderboard"]["rows"]
        status, replay = call(f"{url}/api/matches/web-league-0002/replay")
        assert status == 200 and replay["verdict"]["trusted"]
        status, refused = call(f"{url}/api/tables", BELOTE_TABLE)
        assert status == 409 and "no arena runs in this process" in refused["error"]
    missing = bisca("web", "--data", str(data_dir / "nothing"), "--http", "127.0.0.1:0")
    assert missing.returncode == 1 and "no Bisca data in" in missing.stderr
    bad = bisca("web", "--data", str(data_dir), "--http", "nowhere")
    assert bad.returncode == 2 and "expected HOST:PORT" in bad.stderr


def test_a_data_directory_moved_elsewhere_shows_its_replays(data_dir: Path, tmp_path: Path) -> None:
    """The store names each match's log by its whole path: a data directory moved (or
    restored from a backup elsewhere) replays its matches from the logs it holds."""
    copy_data_dir(data_dir, tmp_path / "before")
    moved = (tmp_path / "before").rename(tmp_path / "moved")
    with bisca_web(moved) as url:
        status, replay = call(f"{url}/api/matches/web-league-0002/replay")
        assert status == 200 and replay["verdict"]["trusted"], replay
        # A log that is nowhere is still said so.
        DataDir(moved).match_log("web-league-0003").unlink()
        status, body = call(f"{url}/api/matches/web-league-0003/replay")
        assert status == 409 and "web-league-0003" in body["error"], body


def test_answers_are_compressed_and_a_wrong_page_is_the_apps(site: Site, data_dir: Path) -> None:
    _, url = site

    def fetch(path: str, **headers: str) -> tuple[int, dict[str, str], bytes]:
        request = urllib.request.Request(f"{url}{path}", headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return response.status, dict(response.headers), response.read()
        except urllib.error.HTTPError as error:
            return error.code, dict(error.headers), error.read()

    match_id = "web-league-0003"
    status, headers, body = fetch(f"/api/matches/{match_id}/replay", **{"Accept-Encoding": "gzip"})
    assert status == 200 and headers.get("Content-Encoding") == "gzip"
    plain = gzip.decompress(body)
    assert len(body) * 4 < len(plain), (len(body), len(plain))
    status, headers, body = fetch("/static/app.js", **{"Accept-Encoding": "gzip, deflate"})
    assert status == 200 and headers.get("Content-Encoding") == "gzip"
    assert b"render()" in gzip.decompress(body)
    # A file the browser has: 304, not said to be compressed (else the browser drops it).
    modified = headers["Last-Modified"]
    status, headers, body = fetch(
        "/static/app.js", **{"Accept-Encoding": "gzip", "If-Modified-Since": modified}
    )
    assert status == 304 and "Content-Encoding" not in headers and not body
    # Without Accept-Encoding: as it is.
    status, headers, _ = fetch(f"/api/matches/{match_id}/replay")
    assert status == 200 and "Content-Encoding" not in headers
    # A browser's wrong link is the app's page (which says so), the API's stays JSON.
    status, headers, body = fetch("/no/such/page", Accept="text/html,application/xhtml+xml")
    assert status == 404 and headers["Content-Type"].startswith("text/html") and b"app.js" in body
    status, headers, body = fetch("/api/nothing", Accept="text/html")
    assert status == 404 and headers["Content-Type"].startswith("application/json")
