"""The ladder of a real ``bisca serve`` on a real SQLite file: the active versions of its
accounts play rated matches by themselves, hosted ones beside a connected one (the starter
bot on the Python SDK, a process of its own that dials in with its version's token), and
each version's page shows its rating, rating history, matches and counts; its stderr of a
match answers its owner and the operator only (403 for another account)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from bisca.server.accounts import SubmissionLimits, connect_version
from bisca.server.cli._serve import DUPLICATE_WARNING
from bisca.server.store import Store, TokenKind
from tests.support.arena import Arena, start_server, stop_arena
from tests.support.commands import BISCA
from tests.support.league import PASSWORD, active_version, starter_bot
from tests.support.waiting import poll_until
from tests.web.support import app_url

BOTS = ("ada", "bob", "cy", "dee")
LADDER = ("--ladder", "matches_per_hour=6", "--ladder", "duplicate=false", "--ladder", "poll_s=0.5")


@dataclass
class League:
    arena: Arena
    url: str
    tokens: dict[str, str]
    admin: str


def ask(url: str, token: str | None = None) -> tuple[int, bytes]:
    headers = {} if token is None else {"Authorization": f"Bearer {token}"}
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=30) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as problem:
        return problem.code, problem.read()


def page(league: League, player: str, token: str | None = None) -> dict[str, object]:
    bot, version = player.split(".v")
    status, body = ask(f"{league.url}/api/bots/{bot}/versions/{version}/ladder", token)
    assert status == 200, body
    found: dict[str, object] = json.loads(body)
    return found


@pytest.fixture(scope="module")
def league(tmp_path_factory: pytest.TempPathFactory) -> Iterator[League]:
    tmp = tmp_path_factory.mktemp("ladder-server")
    data = tmp / "league"
    tokens = {}
    with Store(data / "bisca.sqlite3") as store:
        for name in BOTS:
            store.accounts.create(name, PASSWORD)
            tokens[name] = store.accounts.new_token(name, TokenKind.API, "test")[1]
            active_version(store, data / "submissions", name, starter_bot(tmp / f"{name}bot"))
        # Made as `bisca account connect zed` makes it (that command: the test below), before
        # the server starts, so that it is online from the ladder's first draws.
        store.accounts.create("zed", PASSWORD)
        tokens["zed"] = store.accounts.new_token("zed", TokenKind.API, "test")[1]
        _, zed_token = connect_version(store, SubmissionLimits(), "zed", "zedbot")
    arena, _ = start_server(
        tmp,
        data,
        *["serve", "--listen", "127.0.0.1:0", "--http", "127.0.0.1:0", "--data", str(data)],
        *["--registration", "open", "--league", "belote:deals=1"],
        *LADDER,
    )
    try:
        zed = starter_bot(tmp / "zedbot")
        arena.launch(zed_token, sys.executable, str(zed / "my_bot.py"))
        admin = (data / "admin.token").read_text().strip()
        yield League(arena, app_url(arena), tokens, admin)
    finally:
        stop_arena(arena)


def test_every_active_version_plays_rated_matches_by_itself(league: League) -> None:
    def rated() -> bool | None:
        pages = [page(league, f"{name}bot.v1") for name in BOTS]
        return all(p["ratings"] and p["history"] for p in pages) or None

    assert poll_until("every version is rated", rated, timeout=240)
    seen = page(league, "adabot.v1")
    [rating] = seen["ratings"]  # type: ignore[misc]
    assert rating["game"] == "belote" and rating["matches"] >= 1
    # The newest finished one: the ladder plays on, so a newer one may be waiting.
    match = next(m for m in seen["matches"] if m["status"] == "finished")  # type: ignore[union-attr]
    assert "adabot.v1" in match["players"]
    assert seen["counts"] is None and match["stderr"] is None  # anybody's view


def test_a_versions_stderr_is_its_owners_and_the_operators_alone(league: League) -> None:
    def finished(token: str | None = None) -> list[dict[str, str]] | None:
        found = page(league, "adabot.v1", token)["matches"]
        return [m for m in found if m["status"] == "finished"] or None  # type: ignore[union-attr]

    poll_until("ada played", finished, timeout=240)
    own = page(league, "adabot.v1", league.tokens["ada"])
    counts = own["counts"]
    assert isinstance(counts, dict) and counts["matches"] >= 1 and counts["crashes"] == 0
    [match, *_] = finished(league.tokens["ada"]) or []
    link = league.url + match["stderr"]
    status, body = ask(link, league.tokens["ada"])
    assert status == 200 and body.startswith(b"--- adabot.v1, seat ")
    assert ask(link, league.admin)[0] == 200
    status, body = ask(link, league.tokens["bob"])
    assert status == 403 and b"its owner's alone" in body
    assert ask(link)[0] == 401
    other = link.replace(match["match_id"], "no-such-match")
    assert ask(other, league.tokens["ada"])[0] == 404
    climbing = link.replace(match["match_id"], "..%2F..%2Fbisca.sqlite3")
    status, body = ask(climbing, league.tokens["ada"])
    assert status == 404 and b"SQLite" not in body


def test_a_connected_bot_plays_rated_ladder_matches_beside_hosted_ones(league: League) -> None:
    def rated() -> list[object] | None:
        found = page(league, "zedbot.v1")["history"]
        return found if isinstance(found, list) and found else None

    [first, *_] = poll_until("the connected bot is rated", rated, timeout=240)
    assert isinstance(first, dict)
    status, body = ask(f"{league.url}/api/bots/zedbot/versions/1/ladder")
    assert status == 200
    [match] = [m for m in json.loads(body)["matches"] if m["match_id"] == first["match_id"]]
    assert match["status"] == "finished" and len(match["players"]) == 4
    assert {player.split(".")[0] for player in match["players"]} & {f"{n}bot" for n in BOTS}


def test_bisca_account_connect_makes_an_active_connected_version(league: League) -> None:
    made = subprocess.run(
        [*BISCA, "account", "connect", "adabot", "--server", league.url],
        env={**os.environ, "BISCA_ACCOUNT_TOKEN": league.tokens["ada"]},
        capture_output=True,
        text=True,
        check=False,
    )
    assert made.returncode == 0, made.stderr
    lines = made.stdout.splitlines()
    assert lines[0].startswith("adabot v2: connected, active; it plays the ladder as adabot.v2")
    assert lines[2].startswith("bisca_")  # its bot token, once
    seen = page(league, "adabot.v2")["version"]
    assert isinstance(seen, dict) and (seen["kind"], seen["state"]) == ("connected", "active")
    taken = subprocess.run(
        [*BISCA, "account", "connect", "adabot", "--server", league.url],
        env={**os.environ, "BISCA_ACCOUNT_TOKEN": league.tokens["bob"]},
        capture_output=True,
        text=True,
        check=False,
    )
    assert taken.returncode == 1 and "the bot name 'adabot' is taken" in taken.stderr
    bad = urllib.request.Request(
        f"{league.url}/api/bots/no.dots/connect",
        data=b"{}",
        method="POST",
        headers={
            "Authorization": f"Bearer {league.tokens['bob']}",
            "Content-Type": "application/json",
        },
    )
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(bad, timeout=30)
    assert refused.value.code == 400 and b"bad bot name 'no.dots'" in refused.value.read()


@pytest.mark.parametrize("duplicate", ["true", "false"])
def test_a_ladder_with_duplicate_deals_is_served_with_a_warning(
    tmp_path: Path, duplicate: str
) -> None:
    """Review s58d: a hosted bot carried a deal from one rotation to the next through the
    machine's page cache; duplicate deals are off by default and said at the start when on."""
    data = tmp_path / "data"
    arena, _ = start_server(
        tmp_path,
        data,
        *["serve", "--listen", "127.0.0.1:0", "--http", "127.0.0.1:0", "--data", str(data)],
        *["--registration", "open", "--league", "belote:deals=1"],
        *["--ladder", f"duplicate={duplicate}", "--ladder", "poll_s=3600"],
        *["--metrics", "127.0.0.1:0"],  # its line comes after the ladder's
    )
    try:
        assert arena.process.stdout is not None
        said: list[str] = []
        while not said or not said[-1].startswith("metrics on "):
            said.append(arena.process.stdout.readline().strip())
            assert said[-1], f"the server ended: {said}"
        assert "ladder: active versions play 12 matches an hour" in said, said
        assert (DUPLICATE_WARNING in said) is (duplicate == "true"), said
    finally:
        stop_arena(arena)
