"""The browser app in Debian's chromium, headless, driven by Playwright: a person plays a
whole Belote deal by clicking, the replay viewer shows a seat's hand as the log says, a live
match updates without a reload, and the leaderboard shows what ``bisca leaderboard`` prints.

One browser for the module.  Screenshots go to ``tests/web/artifacts/`` (git-ignored).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect, sync_playwright

from bisca.server.logs import read_log
from bisca.server.web import to_json
from tests.support.arena import Arena
from tests.support.commands import bisca

from .conftest import CHROMIUM, CHROMIUM_ARGS

Site = tuple[Arena, str]
#: The deal the person plays: with this seed the first legal card each turn leaves the person
#: holding cards it may not play at some turn (the test fails, saying so, if it ever did not).
SEED = 7
WAIT_MS = 60_000


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    page = context.new_page()
    page.set_default_timeout(WAIT_MS)
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    yield page
    context.close()
    assert not errors, f"the page raised: {errors}"


def my_turn_or_end(page: Page) -> bool:
    """Wait for the person's next request (or the end); ``True`` when it is the end."""
    page.wait_for_selector(".table[data-request]:not([data-request='']), .result:not([hidden])")
    return page.locator(".result:not([hidden])").count() > 0


def test_a_person_plays_a_whole_deal(page: Page, site: Site, artifacts: Path) -> None:
    arena, url = site
    page.goto(f"{url}/play?seed={SEED}")
    page.click("button.sit-down")
    page.wait_for_url(re.compile(r"/play/t-"))
    refused = False
    turns = 0
    live: Page | None = None
    updates_seen = 0
    while not my_turn_or_end(page):
        request = page.get_attribute(".table", "data-request")
        illegal = page.locator(".seat.mine .card.illegal")
        if not refused and illegal.count():
            # A greyed card says why on hover/tap; confirmed anyway, the referee refuses it.
            illegal.first.click()
            expect(page.locator(".notice")).to_contain_text("Not allowed:")
            page.screenshot(path=str(artifacts / "table-illegal-selected.png"))
            page.click("button.confirm")
            expect(page.locator(".notice.refused")).to_contain_text("Refused by the referee:")
            expect(page.locator(".notice.refused")).to_contain_text("attempts left")
            page.screenshot(path=str(artifacts / "table-refused.png"))
            refused = True
            page.wait_for_selector(f".table:not([data-request='{request}'])")
            continue
        bids = page.locator(".actions button")
        if bids.count():
            bids.last.click()  # take when offered (the last bid), so the deal is played
        else:
            page.locator(".seat.mine .card:not(.illegal)").first.click()
        page.click("button.confirm")
        turns += 1
        if turns == 2:
            live = page.context.new_page()
            match_id = _match_of(page)
            live.goto(f"{url}/live/{match_id}")
            live.fill("input[name=token]", (arena.data_dir / "spectator.token").read_text().strip())
            live.click("form.watch button")
            live.wait_for_selector(".table[data-updates]")
            updates_seen = int(live.get_attribute(".table", "data-updates") or 0)
        page.wait_for_selector(f".table:not([data-request='{request}'])")
    assert refused, f"seed {SEED} never left the person a card it may not play"
    assert live is not None
    # The spectator's page moved on by itself while the person played.
    live.wait_for_function(
        f"Number(document.querySelector('.table').dataset.updates) > {updates_seen}"
    )
    expect(live.locator(".live-status")).to_contain_text("over")
    live.screenshot(path=str(artifacts / "live-match.png"))
    expect(page.locator(".result")).to_contain_text("Game over")
    expect(page.locator(".result .verdict-line")).to_contain_text("Your team")
    page.screenshot(path=str(artifacts / "table-game-over.png"))
    match_id = _match_of(page)
    # The finished game is in the match list, and replays step by step.
    page.click("nav a[href='/matches']")
    expect(page.locator(f"tr[data-match='{match_id}']")).to_be_visible()
    page.click(f"tr[data-match='{match_id}'] a")
    expect(page.locator(".verdict")).to_have_attribute("data-trusted", "true")
    page.click("button.forward")
    expect(page.locator(".table")).to_have_attribute("data-step", "1")
    page.click("button.forward")
    expect(page.locator(".table")).to_have_attribute("data-step", "2")
    page.click("button.back")
    expect(page.locator(".table")).to_have_attribute("data-step", "1")
    assert "step=1" in page.url
    page.screenshot(path=str(artifacts / "replay-person-game.png"))


def _match_of(page: Page) -> str:
    return str(page.get_attribute(".table", "data-match"))


def test_the_replay_shows_a_seats_hand_as_the_log_says(
    page: Page, site: Site, data_dir: Path, artifacts: Path
) -> None:
    _, url = site
    log = read_log(data_dir / "matches" / "web-league-0003" / "web-league-0003.binlog")
    steps = [e.step for e in log.entries() if e.WhichOneof("kind") == "step"]
    step = steps[len(steps) // 2]
    page.goto(f"{url}/matches/web-league-0003?step={step.step}&seat={step.seat}")
    hand = page.locator(f".seat[data-seat='{step.seat}'] .hand .card")
    expect(hand.first).to_be_visible()
    shown = [hand.nth(i).get_attribute("data-card") for i in range(hand.count())]
    logged = to_json(step.observation)["belote"]["hand"]
    assert shown == [f"{card['suit']}/{card['rank']}" for card in logged]
    # Only that seat's hand is face up in its view; every other hand is backs.
    other = (step.seat + 1) % 4
    assert page.locator(f".seat[data-seat='{other}'] .hand .card:not(.back)").count() == 0
    expect(page.locator(".decision .answered")).to_be_visible()
    page.screenshot(path=str(artifacts / "replay-seat-view.png"))
    page.select_option("select[name=seat]", "")
    assert page.locator(f".seat[data-seat='{other}'] .hand .card:not(.back)").count() > 0
    page.set_viewport_size({"width": 390, "height": 844})  # a phone
    page.screenshot(path=str(artifacts / "replay-phone.png"), full_page=True)


def test_the_leaderboard_shows_what_bisca_leaderboard_prints(
    page: Page, site: Site, data_dir: Path, artifacts: Path
) -> None:
    _, url = site
    printed = bisca("leaderboard", "--game", "belote", "--data", str(data_dir), check=True).stdout
    page.goto(f"{url}/leaderboard/belote")
    rows = page.locator("table.leaderboard tbody tr")
    expect(rows.first).to_be_visible()
    shown = [" ".join(rows.nth(i).inner_text().split()) for i in range(rows.count())]
    lines = [" ".join(line.split()) for line in printed.splitlines()]
    for row in shown:
        assert row in lines, f"{row!r} is not a line of:\n{printed}"
    assert len(shown) == 3
    expect(page.locator("table.h2h")).to_be_visible()
    expect(page.locator("svg.chart polyline")).to_have_count(3)
    page.click("button[data-language=it]")
    expect(page.locator("h1")).to_have_text("Classifica di Belote")
    page.screenshot(path=str(artifacts / "leaderboard-it.png"), full_page=True)
    page.click("button[data-language=en]")
