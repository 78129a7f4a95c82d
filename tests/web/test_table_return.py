"""Coming back to the person's table (review 45b L2): a reload keeps the card, the bid or the
exchange's cards selected for the open turn, and says in one line where the game stands; a page
without this tab's mark (another tab, a reload before the first catch-up) shows a game already
under way as it stands rather than pacing and announcing it again, while the page that opened
the table still plays its deal from the start."""

from __future__ import annotations

import re

from playwright.sync_api import Browser, Page, expect

from .test_browser import (
    ALL_PASS_SEED,
    ANNOUNCED_JS,
    BESTIA_SEED,
    PHONES,
    Site,
    _context,
    _sit,
    my_turn_or_end,
)
from .test_table_access import SHOWN_REQUESTS_JS, Seated, _answer, _play_to_the_end


def _pressed(page: Page) -> list[str]:
    """What is selected: the hand's cards and the bids pressed."""
    return list(
        page.evaluate(
            """() => [...document.querySelectorAll(
                 '.seat.mine .hand button[aria-pressed=true], .actions button[aria-pressed=true]')]
               .map((b) => b.dataset.card || b.dataset.key)"""
        )
    )


def _reload(page: Page, request: str, turn: str = "Your turn: ") -> list[str]:
    """Reload at the open turn ``request``: what the page said coming back (until ``turn``,
    the turn's announcement)."""
    page.reload()
    expect(page.locator(".table")).to_have_attribute("data-request", request)
    page.wait_for_function(
        "(turn) => window.announced.some((line) => line.startsWith(turn))", arg=turn
    )
    return list(page.evaluate("window.announced"))


def test_a_reload_keeps_the_bid_and_the_card_selected_and_says_where_the_game_is(
    browser: Browser, site: Site
) -> None:
    _, url = site
    # A bid: the deal everybody passes.
    seated = Seated(
        browser,
        url,
        viewport=PHONES[1],
        speed="instant",
        seed=ALL_PASS_SEED,
        scripts=(ANNOUNCED_JS,),
    )
    page = seated.page
    assert not my_turn_or_end(page)
    request = str(page.get_attribute(".table", "data-request"))
    page.locator(".actions button[data-action=pass]").click()
    chosen = _pressed(page)
    assert len(chosen) == 1, chosen
    said = _reload(page, request)
    expect(page.locator(".actions button[aria-pressed=true]")).to_have_count(1)
    assert _pressed(page) == chosen, "the bid selected was forgotten"
    assert said[0] == "Back at the table: deal 1, bidding, round 1; your turn.", said
    assert len(said) == 2 and said[1].startswith("Your turn: "), said
    _play_to_the_end(page)
    seated.leave()
    # A card: seed 7's first turn.
    seated = Seated(browser, url, viewport=PHONES[1], speed="instant", scripts=(ANNOUNCED_JS,))
    page = seated.page
    assert not my_turn_or_end(page)
    request = str(page.get_attribute(".table", "data-request"))
    page.locator(".seat.mine .card.playable").first.click()
    chosen = _pressed(page)
    assert len(chosen) == 1, chosen
    said = _reload(page, request)
    expect(page.locator(".seat.mine .card.selected")).to_have_count(1)
    assert _pressed(page) == chosen, "the card selected was forgotten"
    assert re.fullmatch(r"Back at the table: deal 1, trick 1; your turn\.", said[0]), said
    page.click("button.confirm")
    page.wait_for_selector(f".table:not([data-request='{request}'])")
    _play_to_the_end(page)
    seated.leave()


def test_a_reload_keeps_the_exchanges_cards_in_italian(browser: Browser, site: Site) -> None:
    _, url = site
    context = _context(browser, viewport=PHONES[0], has_touch=True)
    context.add_init_script(ANNOUNCED_JS)
    page = context.new_page()
    _sit(page, url, f"seed={BESTIA_SEED}", "bestia", language="it")
    reloaded = False
    while not my_turn_or_end(page):
        request = str(page.get_attribute(".table", "data-request"))
        bids = page.locator(".actions button:not(.illegal)")
        kinds = [bids.nth(i).get_attribute("data-action") for i in range(bids.count())]
        playable = page.locator(".seat.mine .card.playable")
        if kinds:
            preferred = next((k for k in ("open", "assist", "call") if k in kinds), "pass")
            bids.nth(kinds.index(preferred) if preferred in kinds else 0).click()
        elif page.locator(".phase-help").inner_text().startswith("Accomodo"):
            if not reloaded:
                playable.nth(0).click()
                playable.nth(2).click()
                chosen = sorted(_pressed(page))
                said = _reload(page, request, "Tocca a te: ")
                expect(page.locator(".seat.mine .card.selected")).to_have_count(2)
                assert sorted(_pressed(page)) == chosen, "the exchange's cards were forgotten"
                assert re.fullmatch(
                    r"Di nuovo al tavolo: mano \d+, accomodo; tocca a te\.", said[0]
                ), said
                reloaded = True
        else:
            playable.first.click()
        page.click("button.confirm")
        page.wait_for_selector(f".table:not([data-request='{request}'])")
    assert reloaded, f"seed {BESTIA_SEED}: the person never exchanged"
    context.close()


def test_a_page_without_the_tabs_mark_shows_the_game_as_it_stands(
    browser: Browser, site: Site
) -> None:
    """The page that opened the table paces its deal and says it from the start; another
    page of it opened mid-deal without this tab's mark (or a reload before the first
    catch-up) shows the open turn at once, says where the game stands and nothing else."""
    _, url = site
    seated = Seated(
        browser, url, viewport=PHONES[1], speed="normal", scripts=(ANNOUNCED_JS, SHOWN_REQUESTS_JS)
    )
    first = seated.page
    for _ in range(2):
        assert not my_turn_or_end(first)
        _answer(first)
    assert not my_turn_or_end(first)
    said = first.evaluate("window.announced")
    assert said[0].startswith("The turned card is "), said  # the deal said from its start
    request = str(first.get_attribute(".table", "data-request"))
    session = first.evaluate(
        "JSON.stringify(Object.fromEntries(Object.entries(sessionStorage)"
        ".filter(([key]) => !key.endsWith('.seen'))))"
    )
    second = seated.context.new_page()
    second.goto(f"{url}/play")
    second.evaluate(
        "(saved) => { sessionStorage.clear();"
        " for (const [k, v] of Object.entries(JSON.parse(saved))) sessionStorage.setItem(k, v); }",
        session,
    )
    second.goto(first.url)
    expect(second.locator(".table")).to_have_attribute("data-request", request, timeout=5_000)
    assert second.evaluate("window.shownRequests") == [request], "a stale turn was shown"
    said = second.evaluate("window.announced")
    assert len(said) == 2 and said[0].startswith("Back at the table: deal 1, "), said
    assert said[1].startswith("Your turn: "), said
    first.evaluate("localStorage.setItem('bisca.speed', 'instant')")
    second.close()
    _play_to_the_end(first)
    seated.leave()
