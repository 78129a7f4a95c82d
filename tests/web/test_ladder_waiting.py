"""Why the ladder leaves a version waiting, on its pages in the browser (each version's card
on the bot's page, which anybody may read; the version's own page, its owner's, says the same
through the same code), in the page's language: its pace, too few different bots
active in a game, its bot offline (``waiting`` of ``GET .../ladder``, which ``bisca ladder
show`` prints in the server's words)."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Browser, expect

from bisca.engine import GAMES
from bisca.server.accounts import Registration, SubmissionLimits, connect_version
from bisca.server.league import LadderSettings
from bisca.server.store import AccountStatus
from tests.cli.league_app import league_app
from tests.support.league import PASSWORD, active_version, starter_bot

from .test_browser import _context

pytestmark = pytest.mark.system


def test_a_versions_pages_say_why_the_ladder_leaves_it_waiting(
    browser: Browser, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    games = {"belote": GAMES["belote"].settings({})}
    with league_app(data, Registration.OPEN, games=games, ladder=LadderSettings(1)) as app:
        store = app.accounts.store
        uploads = data / "submissions"
        for account, bot in (("alice", "abot"), ("bob", "bbot"), ("carol", "cbot")):
            store.accounts.create(account, PASSWORD)
            active_version(store, uploads, account, starter_bot(tmp_path / bot))
        store.accounts.create("dave", PASSWORD)
        connect_version(store, SubmissionLimits(), "dave", "dbot")  # offline
        store.matches.create("m-1", "belote", {}, 1, ["abot.v1", "x", "y", "z"], {})
        page = _context(browser).new_page()

        page.goto(f"{app.url}/bots/abot")
        waiting = page.locator(".version[data-version='1'] .waiting")
        expect(waiting).to_have_count(2)
        expect(waiting.nth(0)).to_have_attribute("data-why", "pace")
        expect(waiting.nth(0)).to_contain_text(
            "Waiting: it started 1 matches in the last hour, the ladder's pace (1 an hour); "
            "it may be drawn again from "
        )
        expect(waiting.nth(1)).to_have_text(
            "Waiting: the Belote ladder needs bots of 4 different accounts active; 3 have one."
        )

        page.goto(f"{app.url}/bots/dbot")
        card = page.locator(".version[data-version='1'] .waiting")
        expect(card).to_have_text(
            "Waiting: a connected version plays Belote while its bot is online; it is not."
        )

        page.evaluate("localStorage.setItem('bisca.language', 'it')")
        page.goto(f"{app.url}/bots/bbot")
        expect(page.locator(".version[data-version='1'] .waiting")).to_have_text(
            "In attesa: la scala di Belote richiede bot attivi di 4 account diversi; "
            "3 ne hanno uno."
        )

        # A suspended account's version is active, but never drawn: said, and alone (operator
        # review: its page blamed too few accounts).
        store.accounts.set_status("carol", AccountStatus.SUSPENDED)
        page.goto(f"{app.url}/bots/cbot")
        card = page.locator(".version[data-version='1'] .waiting")
        expect(card).to_have_attribute("data-why", "account")
        expect(card).to_have_text(
            "In attesa: il suo account è sospeso; "
            "la scala non sorteggia nessuna delle sue versioni."
        )
        page.evaluate("localStorage.setItem('bisca.language', 'en')")
        page.reload()
        expect(card).to_have_text(
            "Waiting: its account is suspended; the ladder draws none of its versions."
        )
