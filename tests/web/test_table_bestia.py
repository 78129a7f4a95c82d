"""A Bestia table as a screen reader says it (review 45b M3, L4): each turn announced with the
decision it asks (the rubata, the dealer's discard, opening, assisting: not "select a bid" nor
"confirm the play"), the person's own moves in the second person, the briscola stolen, the
discards and the other seats' exchanges (by count) said, each hand's end said with its summary,
the end and the summaries naming the seats by their place, never by a bot's generated name; the
exchange's "stand pat" shown as a choice, not in the error's colour."""

from __future__ import annotations

import re

from playwright.sync_api import Browser, Page, expect

from .test_browser import ANNOUNCED_JS, PHONES, Site, my_turn_or_end
from .test_table_access import Seated

#: Five seats, one round, the form's greedy bots: the person deals the first hand and is
#: offered the rubata (it steals, then discards), later opens, assists and exchanges.
SEATS = 5
SEED = 364
#: The announcement of every Bestia decision before review 46, whichever was asked.
GENERIC = "Your turn: Select a bid, then confirm it."


def _turn_said(page: Page) -> str:
    said = page.evaluate("window.announced")
    return next(line for line in reversed(said) if line.startswith("Your turn: "))


def test_what_a_screen_reader_hears_at_a_bestia_table(browser: Browser, site: Site) -> None:
    _, url = site
    seated = Seated(
        browser,
        url,
        viewport=PHONES[1],
        touch=True,
        speed="instant",
        language="en",
        seed=SEED,
        game="bestia",
        seats=SEATS,
        scripts=(ANNOUNCED_JS,),
    )
    page = seated.page
    discarded = exchanged = decided = False
    while not my_turn_or_end(page):
        request = str(page.get_attribute(".table", "data-request"))
        phase = page.locator(".phase-help").inner_text().split(":")[0]
        turn = _turn_said(page)
        bids = page.locator(".actions button:not(.illegal)")
        kinds = [bids.nth(i).get_attribute("data-action") for i in range(bids.count())]
        if kinds:
            # The decision by its name and help: "Your turn: Rubata. The dealer may take …".
            assert turn.startswith(f"Your turn: {phase}. "), (turn, phase)
            expect(page.locator(".prompt")).to_have_text(f"Your turn — {phase}")
            preferred = next((k for k in ("steal", "open", "assist", "call") if k in kinds), "pass")
            bids.nth(kinds.index(preferred) if preferred in kinds else 0).click()
            decided = True
        elif phase == "Dealer's discard":
            assert turn == "Your turn: Select a card to discard, then confirm.", turn
            expect(page.locator(".prompt")).to_contain_text("discard")
            page.locator(".seat.mine .card.playable").first.click()
            discarded = True
        elif phase == "Exchange":
            # Nothing selected: standing pat, an allowed choice, in the text's colour.
            expect(page.locator(".reason")).to_have_text("stand pat")
            colours = page.evaluate(
                "[getComputedStyle(document.querySelector('.reason')).color,"
                " getComputedStyle(document.querySelector('.turn')).color]"
            )
            assert colours[0] == colours[1], f"stand pat is not in the text's colour: {colours}"
            playable = page.locator(".seat.mine .card.playable")
            playable.nth(0).click()
            playable.nth(1).click()
            exchanged = True
        else:
            assert turn == "Your turn: Select a card, then confirm the play.", turn
            page.locator(".seat.mine .card.playable").first.click()
        page.click("button.confirm")
        page.wait_for_selector(f".table:not([data-request='{request}'])")
    assert decided and discarded and exchanged, f"seed {SEED}: a kind of turn never came"
    page.wait_for_function(
        "() => window.announced.includes(document.querySelector('.verdict-line').textContent)"
    )
    said = page.evaluate("window.announced")
    text = "\n".join(said)
    assert GENERIC not in said, text
    assert re.search(r"^You steal the briscola \w+ of ", text, re.M), text
    assert re.search(r"^You discard \w+ of [^,]+, \w+ of ", text, re.M), text  # the exchange's
    assert re.search(r"^(You open \(batto\)|You assist)\.$", text, re.M), text
    assert re.search(r"^Seat [1-4] (changes [1-4] cards?|keeps the cards)\.$", text, re.M), text
    ends = [line for line in said if line.startswith("Hand ") and " is over. " in line]
    assert ends and any("Seat 0 (you): " in line for line in ends), ends
    assert "greedy" not in text, text
    for shown in (".result", ".hand-summary"):
        expect(page.locator(shown)).not_to_contain_text("greedy")
    expect(page.locator(".result li").first).to_have_text(re.compile(r"^seat 0 \(you\): "))
    seated.leave()
