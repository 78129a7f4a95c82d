"""The person's Belote table after review 53 (an accessibility audit): on a small phone the
hand shows above the turn bar while the person bids; the deal's end at the default pace says
"Game over", not that the table is gone; the review lines (bids, last trick) name the seats
by their place and the cards in words; focus lands on the table once it shows after "Sit
down"; the prompt names the seat awaited by its place, never the person's own."""

from __future__ import annotations

import re

from playwright.sync_api import Browser, expect

from .test_browser import SEED, Site, _context, my_turn_or_end
from .test_table_access import Seated, _answer, _play_to_the_end
from .test_table_layout import _finish_by_socket

#: A deal where the person bids in round one (only diamonds, the turned card, may be taken).
BID_SEED = 5
#: Each card of the person's hand: whether the middle of its visible strip shows the card
#: itself (not the turn bar over it), and whether it lies wholly above the bar and on screen.
HAND_SEEN_JS = """() => {
  const bar = document.querySelector('.turn').getBoundingClientRect();
  const cards = [...document.querySelectorAll('.seat.mine .hand .card')];
  return cards.map((card, i) => {
    const r = card.getBoundingClientRect();
    const next = cards[i + 1] ? cards[i + 1].getBoundingClientRect().left : r.right;
    const hit = document.elementFromPoint((r.left + next) / 2, (r.top + r.bottom) / 2);
    return { card: card.dataset.card, shown: card.contains(hit),
             above: r.top >= 0 && r.bottom <= bar.top + 1 };
  });
}"""


def test_the_hand_shows_above_the_turn_bar_while_bidding_on_a_small_phone(
    browser: Browser, site: Site
) -> None:
    """360x640 in Italian (the tallest turn bar: five bids and the prompt), at the person's
    bid: every card of its hand is on screen above the sticky turn bar (review 53 #1: each
    showed 6 px of 70, the bar over it)."""
    seated = Seated(
        browser,
        site[1],
        viewport={"width": 360, "height": 640},
        touch=True,
        speed="instant",
        seed=BID_SEED,
        language="it",
    )
    page = seated.page
    assert not my_turn_or_end(page)
    expect(page.locator(".actions button").first).to_be_focused()
    cards = page.evaluate(HAND_SEEN_JS)
    assert len(cards) >= 5 and all(c["shown"] and c["above"] for c in cards), cards
    _finish_by_socket(page, site[1])
    seated.leave()


def test_the_end_at_the_default_pace_says_game_over(browser: Browser, site: Site) -> None:
    """The last trick at the default pace (its hold still running when the server closes the
    socket): the turn bar says "Game over", not "This table is gone" (review 53 #2)."""
    seated = Seated(browser, site[1], viewport={"width": 390, "height": 844}, speed="instant")
    page = seated.page
    while not my_turn_or_end(page):
        if page.locator(".seat.mine .card").count() == 1:
            page.evaluate("localStorage.removeItem('bisca.speed')")  # the default pace
        _answer(page)
    page.wait_for_timeout(500)  # the socket's close, after the end
    expect(page.locator(".prompt")).to_have_text("Game over")
    seated.leave()


def test_the_review_lines_name_seats_by_place_and_cards_in_words(
    browser: Browser, site: Site
) -> None:
    """The bids and the last trick under the felt, the one place to review them once their
    announcements are said: the seats by their place and the cards in words, in English and in
    Italian — no seat numbers, no suit symbols (review 53 #3: "1:A♠ 2:9♦", "1: pass")."""
    seated = Seated(browser, site[1], viewport={"width": 390, "height": 844}, speed="instant")
    page = seated.page
    assert not my_turn_or_end(page)
    _answer(page)  # the first trick completes
    assert not my_turn_or_end(page)
    bids, trick = page.locator(".table-info .bids"), page.locator(".table-info .last-trick")
    expect(bids).to_contain_text(
        re.compile(r"(the opponent on your left|your partner): (pass|take)")
    )
    expect(trick).to_contain_text(re.compile(r"your partner: \w+ of \w+"))
    expect(trick).to_contain_text(re.compile(r"you: \w+ of \w+"))
    page.evaluate("localStorage.setItem('bisca.language', 'it')")
    page.locator(".seat.mine .card.playable").first.click()  # redrawn, in Italian now
    expect(bids).to_contain_text("l'avversario alla tua sinistra: passo")
    expect(trick).to_contain_text(re.compile(r"il tuo compagno: \w+ di \w+"))
    for line in (bids, trick):
        assert not re.search(r"[♠♥♦♣]|\d", line.inner_text()), line.inner_text()
    _finish_by_socket(page, site[1])
    seated.leave()


def test_focus_is_on_the_table_once_it_shows_after_sit_down(browser: Browser, site: Site) -> None:
    """Sitting down by the keyboard (the form's button goes with its page): focus lands on the
    table's panel as soon as it shows, not on the page's body until the first turn (review 53
    #4: 0.5 to 1.5 s there, nothing said)."""
    context = _context(browser, viewport={"width": 390, "height": 844})
    page = context.new_page()
    page.goto(f"{site[1]}/play?seed={SEED}")
    page.focus("button.sit-down")
    page.keyboard.press("Enter")
    page.wait_for_selector(".table", state="attached")
    focused = page.evaluate("document.activeElement.id || document.activeElement.tagName")
    assert focused == "panel-table", focused
    _finish_by_socket(page, site[1])
    context.close()


#: Every text the turn bar's prompt showed, kept in ``window.prompts``.
PROMPTS_JS = """
window.prompts = [];
new MutationObserver(() => {
  const prompt = document.querySelector('.prompt');
  if (prompt && prompt.textContent && window.prompts.at(-1) !== prompt.textContent)
    window.prompts.push(prompt.textContent);
}).observe(document, { subtree: true, childList: true, characterData: true });
"""


def test_the_prompt_names_the_seat_awaited_by_its_place(browser: Browser, site: Site) -> None:
    """While the others play, the prompt names the seat it waits for as the table says it
    ("your partner"), never by its bot's generated name, and never tells the person to wait
    for its own seat (review 53 #5: "Waiting for seat 0 (person-…)")."""
    seated = Seated(
        browser,
        site[1],
        viewport={"width": 390, "height": 844},
        speed="fast",
        scripts=(PROMPTS_JS,),
    )
    page = seated.page
    assert not my_turn_or_end(page)
    prompts = page.evaluate("window.prompts")
    waits = [p for p in prompts if p.startswith("Waiting for ")]
    assert any(re.match("Waiting for (your partner|the opponent on your)", p) for p in waits)
    assert not any(re.search(r"seat \d|greedy|person-", p) for p in prompts), prompts
    page.evaluate("localStorage.setItem('bisca.speed', 'instant')")
    _play_to_the_end(page)
    seated.leave()
