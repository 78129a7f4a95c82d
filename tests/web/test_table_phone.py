"""A Bestia table of five, six or seven seats on a phone held upright (review 45b M4): the
seats' labels stay apart, the person's raised cards never cover its own name, and a new card
turn shows the whole felt with the person's cards and name above the turn bar. A table of its
own per seat count, played to its end (the layout module's two tables are the arena's cap of
tables per visitor)."""

from __future__ import annotations

import pytest
from playwright.sync_api import Browser, Locator, Page

from .test_browser import BESTIA_SEED, Site, _context, _sit, my_turn_or_end
from .test_table_layout import NEW_TURN_JS, TALL, _play_to_the_end

#: Every label of the table (each seat's name and tricks won) and the person's raised cards, as
#: boxes in the viewport; the felt, the person's cards and name, and the turn bar.
LABELS_JS = """() => {
  const box = (e) => { const r = e.getBoundingClientRect();
                       return [r.left, r.top, r.right, r.bottom]; };
  const labels = [...document.querySelectorAll('.seat')].flatMap((seat) =>
    ['seat-name', 'seat-tricks'].map((part) =>
      [`seat ${seat.dataset.seat}'s ${part}`, box(seat.querySelector('.' + part))]));
  const raised = [...document.querySelectorAll('.seat.mine .hand .card.selected')].map(box);
  const mine = [...document.querySelectorAll('.seat.mine .hand .card, .seat.mine .seat-name')];
  return { labels, raised, name: box(document.querySelector('.seat.mine .seat-name')),
           felt: box(document.querySelector('.felt')), mine: mine.map(box),
           turn: box(document.querySelector('.turn')) };
}"""


def _meet(a: list[float], b: list[float]) -> bool:
    return a[0] < b[2] - 0.5 and b[0] < a[2] - 0.5 and a[1] < b[3] - 0.5 and b[1] < a[3] - 0.5


def _labels_apart(page: Page, where: str) -> None:
    """No seat's label lies on another seat's, nor a raised card of the person's on its name."""
    boxes = page.evaluate(LABELS_JS)
    labels = boxes["labels"]
    on_each_other = [
        f"{a} / {b}"
        for i, (a, box_a) in enumerate(labels)
        for b, box_b in labels[i + 1 :]
        if a.split("'")[0] != b.split("'")[0] and _meet(box_a, box_b)
    ]
    assert not on_each_other, f"{where}: labels on each other: {on_each_other} ({labels})"
    covered = [card for card in boxes["raised"] if _meet(card, boxes["name"])]
    assert not covered, f"{where}: a raised card covers the person's name: {covered} {boxes}"


def _press(page: Page, card: Locator) -> None:
    """Press a card of the hand (selecting it redraws the table for the viewport now); by the
    script, as the turn bar may lie over it."""
    card.evaluate("(button) => button.click()")


@pytest.mark.parametrize("seats", [5, 6, 7])
def test_a_bestia_tables_labels_stay_apart_on_a_phone(
    browser: Browser, site: Site, seats: int
) -> None:
    """Bestia's 5, 6 and 7 seats on an upright phone (review 45b M4): no seat's name or tricks
    won lies on another seat's, the person's raised cards (the exchange's, the card selected)
    never cover its own name, and a new card turn shows the whole felt (the seats across the
    table) with the person's cards and name above the turn bar, even from the page's bottom."""
    context = _context(browser, viewport=TALL[0], has_touch=True)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    _sit(page, site[1], f"seed={BESTIA_SEED}", "bestia", seats=seats, language="en")
    exchanged = False
    while not my_turn_or_end(page):
        request = str(page.get_attribute(".table", "data-request"))
        phase = page.locator(".phase-help").inner_text().split(":")[0]
        bids = page.locator(".actions button:not(.illegal)")
        kinds = [bids.nth(i).get_attribute("data-action") for i in range(bids.count())]
        playable = page.locator(".seat.mine .card.playable")
        if kinds:
            preferred = next((k for k in ("steal", "open", "assist", "call") if k in kinds), "pass")
            bids.nth(kinds.index(preferred) if preferred in kinds else 0).click()
        elif phase == "Exchange":
            for size in TALL[:2]:
                page.set_viewport_size(size)
                _press(page, playable.nth(0))
                _press(page, playable.nth(1))
                _labels_apart(page, f"{seats} seats, the exchange at {size}")
                _press(page, playable.nth(0))
                _press(page, playable.nth(1))
            exchanged = True
        elif phase == "Play" and exchanged:
            break
        else:
            _press(page, playable.first)
        page.click("button.confirm")
        page.wait_for_selector(f".table:not([data-request='{request}'])")
    assert exchanged and page.locator(".phase-help").inner_text().startswith("Play"), (
        f"seed {BESTIA_SEED}, {seats} seats: no exchange, or no card turn after it"
    )
    for size in TALL[:2]:
        page.set_viewport_size(size)
        _press(page, page.locator(".seat.mine .card.playable").first)
        _labels_apart(page, f"{seats} seats, a card turn at {size}")
        page.evaluate(NEW_TURN_JS.replace("window.scrollTo(0, 0)", "window.scrollTo(0, 1e5)"))
        boxes = page.evaluate(LABELS_JS)
        border = 6  # the felt's: its seats are inside it
        assert boxes["felt"][1] >= -border, (
            f"{seats} seats at {size}: the felt's top is off {boxes}"
        )
        lowest = max(box[3] for box in boxes["mine"])
        assert lowest <= boxes["turn"][1] + 1, (
            f"{seats} seats at {size}: the person's cards or name under the turn bar {boxes}"
        )
    _play_to_the_end(page)
    context.close()
    assert not errors, f"the page raised: {errors}"
