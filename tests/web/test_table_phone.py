"""The table's pages on every screen: the person's table, the live page of its match (a
spectator's) and the match's replay, with Bestia's four to seven seats and Belote's four, each
seat's name and tricks won clear of the other seats' labels and of every card on the felt (the
seats' hands, the trick's, the person's raised ones: review 45b M4 on an upright phone; seven
seats on a phone on its side and a raised card over the person's own name on a tablet and a
desktop, review 49; seven seats on the live page of a 568x320 phone, review 50), the person's
own label whole and on the felt (review 50: cut to "you ·…" on its bottom border at 320x568),
measured as the screen changes with no redraw (the stylesheet places the seats); the same with
the text enlarged to 200 % (WCAG 1.4.4) on a 320 px phone upright, phones on their side and
the desktop, the page no wider than the screen (WCAG 1.4.10); each seat a group named for it (a
screen reader read a seat's tricks won and the next seat's name as one run of text, review
50); on an upright phone a new card turn shows the whole felt with the person's cards and name
above the turn bar. A table of its own per game and seat count, played to its end (the layout
module's two tables are the arena's cap of tables per visitor)."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from playwright.sync_api import Browser, Locator, Page, expect

from .test_browser import (
    BESTIA_SEED,
    SEED,
    Site,
    _context,
    _fits,
    _match_of,
    _sit,
    _watch,
    my_turn_or_end,
)
from .test_table_layout import NEW_TURN_JS, SHORT, TALL, _finish_by_socket

#: A tablet held upright.
TABLET = {"width": 768, "height": 1024}
#: The smallest phone, on its side and upright (review 50: seven seats on the live page at
#: 568x320, the person's label cut on the felt's border at 320x568).
SMALL = ({"width": 568, "height": 320}, {"width": 320, "height": 568})
#: Every screen the table is measured on: phones on their side (where the table is first
#: drawn), upright phones, a tablet, the desktop.
VIEWPORTS = (*SHORT, SMALL[0], SMALL[1], *TALL[:2], TABLET, TALL[2])
#: The screens the table is measured on with its text enlarged to 200 %: the smallest phone
#: upright (WCAG 1.4.10's 320 px) and on its side, a phone on its side, the tablet (where the
#: person's tricks won once lay past the felt's border) and the desktop.
LARGE_TEXT_VIEWPORTS = (SMALL[1], SMALL[0], SHORT[0], TABLET, TALL[2])
#: The replay's step measured (early in the deal: every hand face up, as the replay shows them).
REPLAY_STEP = 20
#: Every label of the table (each seat's name and tricks won, with its seat) and every card on
#: the felt (the seats' hands, the person's raised ones marked, the trick's), as boxes in the
#: viewport; the felt, the person's cards and name, and the turn bar.
LABELS_JS = """() => {
  const box = (e) => { const r = e.getBoundingClientRect();
                       return [r.left, r.top, r.right, r.bottom]; };
  const seats = [...document.querySelectorAll('.seat')];
  const labels = seats.flatMap((seat) => ['seat-name', 'seat-tricks'].map((part) =>
    [seat.dataset.seat, `seat ${seat.dataset.seat}'s ${part}`,
     box(seat.querySelector('.' + part))]));
  const hands = seats.flatMap((seat) => [...seat.querySelectorAll('.hand .card')].map((card) =>
    [`a card of seat ${seat.dataset.seat}${card.matches('.selected') ? ' (raised)' : ''}`,
     box(card)]));
  const trick = [...document.querySelectorAll('.trick .card')].map((card) =>
    [card.matches('.turned') ? 'the turned card' : `seat ${card.dataset.seat}'s card on the trick`,
     box(card)]);
  const mine = [...document.querySelectorAll('.seat.mine .hand .card, .seat.mine .seat-name')];
  const felt = document.querySelector('.felt');
  const f = box(felt);
  const own = [...document.querySelectorAll('.seat.mine .seat-name, .seat.mine .seat-tricks')];
  const turn = document.querySelector('.turn');
  return { labels, cards: [...hands, ...trick], felt: f, mine: mine.map(box),
           turn: turn && box(turn),
           inside: [f[0] + felt.clientLeft, f[1] + felt.clientTop,
                    f[0] + felt.clientLeft + felt.clientWidth,
                    f[1] + felt.clientTop + felt.clientHeight],
           own: own.map((label) => [label.textContent, box(label),
                                    label.scrollWidth > label.clientWidth + 1]) };
}"""
#: Belote's seats 0 to 3 as the person at seat 0 hears them (format.js tableVoice): the
#: seats' groups are named so.
BELOTE_SEATS_HEARD = (
    "seat 0 (you)",
    "the opponent on your left",
    "your partner",
    "the opponent on your right",
)
#: Each seat's role and name for assistive technology.
SEAT_GROUPS_JS = """() => [...document.querySelectorAll('.felt .seat')].map(
  (seat) => [seat.getAttribute('role'), seat.getAttribute('aria-label')])"""


#: The names of Belote's side seats (1 and 3) shown cut short (an ellipsis for their end).
CUT_SIDE_NAMES_JS = """() => [...document.querySelectorAll(
    '.seat[data-seat="1"] .seat-name, .seat[data-seat="3"] .seat-name')]
  .filter((name) => name.scrollWidth > name.clientWidth + 1).map((name) => name.textContent)"""


def _meet(a: list[float], b: list[float]) -> bool:
    return a[0] < b[2] - 0.5 and b[0] < a[2] - 0.5 and a[1] < b[3] - 0.5 and b[1] < a[3] - 0.5


def _labels_apart(page: Page, where: str) -> None:
    """No seat's label lies on another seat's, nor on any card (a raised card of the person's
    on its own name among them), the person's own name and tricks won are whole and inside the
    felt's border, and the page is no wider than the screen."""
    boxes = page.evaluate(LABELS_JS)
    labels = boxes["labels"]
    on_labels = [
        f"{a} / {b}"
        for i, (seat_a, a, box_a) in enumerate(labels)
        for seat_b, b, box_b in labels[i + 1 :]
        if seat_a != seat_b and _meet(box_a, box_b)
    ]
    on_cards = [
        f"{label} / {card}"
        for _, label, label_box in labels
        for card, card_box in boxes["cards"]
        if _meet(label_box, card_box)
    ]
    assert not on_labels, f"{where}: labels on each other: {on_labels} {boxes}"
    assert not on_cards, f"{where}: labels under cards: {on_cards} {boxes}"
    inside = boxes["inside"]
    for text, box, cut in boxes["own"]:
        assert not cut, f"{where}: the person's label {text!r} cut short {boxes}"
        assert (
            box[0] >= inside[0] - 1
            and box[1] >= inside[1] - 1
            and box[2] <= inside[2] + 1
            and box[3] <= inside[3] + 1
        ), f"{where}: the person's label {text!r} off the felt {box} {inside}"
    _fits(page, where)


def _labels_apart_on_every_screen(
    page: Page, where: str, screens: Sequence[dict[str, int]] = VIEWPORTS
) -> None:
    """_labels_apart on each of ``screens`` in turn, as a phone turned over or a window resized
    shows the table: the page is not drawn again."""
    for size in screens:
        page.set_viewport_size(size)
        _labels_apart(page, f"{where} at {size['width']}x{size['height']}")


def _labels_apart_with_large_text(page: Page, where: str) -> None:
    """_labels_apart on each of LARGE_TEXT_VIEWPORTS with the text enlarged to 200 % (the
    root's font size, as a browser's text size sets it: WCAG 1.4.4), then at 100 % again."""
    page.evaluate("document.documentElement.style.fontSize = '200%'")
    _labels_apart_on_every_screen(page, f"{where}, text at 200 %", LARGE_TEXT_VIEWPORTS)
    page.evaluate("document.documentElement.style.fontSize = ''")


def _labels_apart_everywhere(page: Page, where: str) -> None:
    """Each seat a group named for it; _labels_apart on every screen, at 100 % and with the
    text at 200 %."""
    _seats_are_groups(page, where)
    _labels_apart_on_every_screen(page, where)
    _labels_apart_with_large_text(page, where)


def _seats_are_groups(page: Page, where: str, names: Sequence[str] = ()) -> None:
    """Each seat is a group named for it (by ``names`` when given, seat by seat), so a screen
    reader tells one seat's name, cards and tricks won from the next seat's."""
    groups = page.evaluate(SEAT_GROUPS_JS)
    labels = [label for _, label in groups]
    assert all(role == "group" and label for role, label in groups), f"{where}: {groups}"
    assert len(set(labels)) == len(labels), f"{where}: seats named alike {labels}"
    if names:
        assert labels == list(names), f"{where}: {labels}"
    for label in labels:  # as the accessibility tree has them
        expect(page.locator(".felt").get_by_role("group", name=label, exact=True)).to_have_count(1)


def _watch_labels_apart(browser: Browser, site: Site, page: Page, where: str) -> None:
    """The live page of the person's match (a spectator's, at instant pace) as the person's
    table is: _labels_apart_everywhere."""
    arena, url = site
    live = _watch(browser, url, arena, _match_of(page), speed="instant", viewport=VIEWPORTS[0])
    errors: list[str] = []
    live.on("pageerror", lambda error: errors.append(str(error)))
    live.wait_for_selector(".felt .seat")
    _labels_apart_everywhere(live, f"{where}, the live page")
    live.context.close()
    assert not errors, f"the live page raised: {errors}"


def _replay_labels_apart(page: Page, site: Site, match: str, where: str) -> None:
    """The replay of the person's match (every hand face up), at REPLAY_STEP:
    _labels_apart_everywhere."""
    replay = page.context.new_page()
    errors: list[str] = []
    replay.on("pageerror", lambda error: errors.append(str(error)))
    replay.goto(f"{site[1]}/matches/{match}?step={REPLAY_STEP}")
    replay.wait_for_selector(".table[data-step] .felt .seat")
    _labels_apart_everywhere(replay, f"{where}, the replay")
    replay.close()
    assert not errors, f"the replay raised: {errors}"


#: The turn bar: its height, the screen's, and how it is placed (sticky at the screen's bottom,
#: or static under the table: "unstuck").
TURN_BAR_JS = """() => { const turn = document.querySelector('.turn');
  return { height: turn.offsetHeight, screen: window.innerHeight,
           unstuck: turn.classList.contains('unstuck'),
           position: getComputedStyle(turn).position }; }"""


def _turn_bar_unstuck_only_when_tall(page: Page, where: str) -> None:
    """The turn bar sticks to the screen's bottom unless it is taller than half the screen
    (Bestia's help with the text at 200 % on a phone on its side), where it would hide the
    table: then it stays under the table (app.js ``unstick``), and sticks again once the
    screen or the text changes back; measured on every screen at 100 % and at 200 %."""
    seen = set()
    for scale, screens in (("200%", LARGE_TEXT_VIEWPORTS), ("", VIEWPORTS)):
        page.evaluate(f"document.documentElement.style.fontSize = '{scale}'")
        for size in screens:
            page.set_viewport_size(size)
            # The class follows the bar's height through a ResizeObserver, a frame later.
            page.wait_for_function(
                f"() => {{ const bar = ({TURN_BAR_JS})();"
                " return bar.unstuck === bar.height > bar.screen / 2; }"
            )
            bar = page.evaluate(TURN_BAR_JS)
            at = f"{where} at {size['width']}x{size['height']}, text {scale or '100%'}: {bar}"
            assert bar["position"] == ("static" if bar["unstuck"] else "sticky"), at
            seen.add(bar["unstuck"])
    assert seen == {True, False}, f"{where}: the bar was never {'un' * (False in seen)}stuck"


def _press(page: Page, card: Locator) -> None:
    """Press a card of the hand; by the script, as the turn bar may lie over it."""
    card.evaluate("(button) => button.click()")


def _new_turn_in_view(page: Page, where: str) -> None:
    """On an upright phone a new card turn shows the whole felt (the seats across the table)
    with the person's cards and name above the turn bar, even from the page's bottom."""
    for size in TALL[:2]:
        page.set_viewport_size(size)
        page.evaluate(NEW_TURN_JS.replace("window.scrollTo(0, 0)", "window.scrollTo(0, 1e5)"))
        boxes = page.evaluate(LABELS_JS)
        border = 6  # the felt's: its seats are inside it
        assert boxes["felt"][1] >= -border, f"{where} at {size}: the felt's top is off {boxes}"
        lowest = max(box[3] for box in boxes["mine"])
        assert lowest <= boxes["turn"][1] + 1, (
            f"{where} at {size}: the person's cards or name under the turn bar {boxes}"
        )


@pytest.mark.parametrize("seats", [4, 5, 6, 7])
def test_a_bestia_tables_labels_stay_apart_on_every_screen(
    browser: Browser, site: Site, seats: int
) -> None:
    """Bestia's 4 to 7 seats, at the exchange (two cards raised) and at the first card turn
    after it (one raised), on phones on their side (seven seats: review 49), upright phones
    (review 45b M4), a tablet and the desktop (a raised card over the person's name: review
    49): no seat's name or tricks won lies on another seat's or on a card, the person's label
    whole on the felt, at 100 % and with the text at 200 %; the same on the live page of the
    match (review 50: seven seats at 568x320) and on its replay; each seat a group; the turn
    bar stuck to the screen's bottom unless taller than half of it; and an upright phone's new
    card turn shows the whole felt with the person's cards and name above the turn bar."""
    context = _context(browser, viewport=VIEWPORTS[0], has_touch=True)
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
            _press(page, playable.nth(0))
            _press(page, playable.nth(1))
            _labels_apart_on_every_screen(page, f"{seats} seats, the exchange")
            _labels_apart_with_large_text(page, f"{seats} seats, the exchange")
            _turn_bar_unstuck_only_when_tall(page, f"{seats} seats, the exchange")
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
    _press(page, page.locator(".seat.mine .card.playable").first)
    _labels_apart_everywhere(page, f"{seats} seats, a card turn")
    _watch_labels_apart(browser, site, page, f"{seats} seats, a card turn")
    _new_turn_in_view(page, f"{seats} seats")
    match = _match_of(page)
    _finish_by_socket(page, site[1])
    _replay_labels_apart(page, site, match, f"{seats} seats")
    context.close()
    assert not errors, f"the page raised: {errors}"


def test_a_belote_tables_labels_stay_apart_on_every_screen(browser: Browser, site: Site) -> None:
    """Belote's person's first turn of seed 7 (three cards on the trick, eight in the hand,
    one raised) on every screen: no seat's name or tricks won lies on another seat's or on a
    card (review 49: the raised card over the person's name on a tablet and a desktop), the
    person's label whole on the felt, at 100 % and with the text at 200 %; the same on the
    live page and the replay; each seat a group, at the person's table named as the person
    hears the seats ("your partner")."""
    context = _context(browser, viewport=VIEWPORTS[0], has_touch=True)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    _sit(page, site[1], f"seed={SEED}", language="en")
    assert not my_turn_or_end(page), f"seed {SEED}: the deal ended before the person's turn"
    assert page.locator(".trick .card").count() == 3, f"seed {SEED}: not three cards on the trick"
    _press(page, page.locator(".seat.mine .card.playable").first)
    _seats_are_groups(page, "Belote", BELOTE_SEATS_HEARD)
    _labels_apart_on_every_screen(page, "Belote, a card turn")
    # The last screen, the desktop's, has room for the side seats' names whole (review 50:
    # they were cut short there, a label kept inside the felt).
    assert page.viewport_size == VIEWPORTS[-1]
    assert not page.evaluate(CUT_SIDE_NAMES_JS), "names cut short on the desktop"
    _labels_apart_with_large_text(page, "Belote, a card turn")
    _watch_labels_apart(browser, site, page, "Belote, a card turn")
    match = _match_of(page)
    _finish_by_socket(page, site[1])
    _replay_labels_apart(page, site, match, "Belote")
    context.close()
    assert not errors, f"the page raised: {errors}"
