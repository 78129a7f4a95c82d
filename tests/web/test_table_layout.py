"""The person's Belote table as the screen shows it: on a phone on its side and at 200 % zoom
the trick, the hand and Confirm are seen together at the person's turn (and portrait phones and
the desktop still show them); bids the round excludes look disabled, the selected one is marked
with contrast; the controls around the table are at least 24 px tall; in forced colours the
selected card is outlined; at a tablet's width the tricks won are legible and the others' cards
stay on the felt.

Two tables for the module (a card turn, a bid turn), each reused across viewports and played to
its end, so it holds no bots once the module is done.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from playwright.sync_api import Browser, Page

from .support import socket_frames
from .test_api import ws
from .test_browser import ALL_PASS_SEED, SEED, Site, _context, _fits, _sit, my_turn_or_end

#: A phone on its side (two), and 1280x900 at 200 % zoom.
SHORT = (
    {"width": 640, "height": 360},
    {"width": 844, "height": 390},
    {"width": 640, "height": 450},
)
#: Screens the table fitted already (portrait phones, the desktop): they still do.
TALL = (
    {"width": 360, "height": 740},
    {"width": 390, "height": 844},
    {"width": 1200, "height": 900},
)
#: Where the trick's cards, the person's hand, the turn bar and Confirm are, in the viewport.
BOXES_JS = """() => {
  const box = (elements) => {
    const rects = [...elements].map((e) => e.getBoundingClientRect());
    return { top: Math.min(...rects.map((r) => r.top)),
             bottom: Math.max(...rects.map((r) => r.bottom)), count: rects.length };
  };
  return { height: innerHeight,
           trick: box(document.querySelectorAll('.trick .card')),
           hand: box(document.querySelectorAll('.seat.mine .hand .card')),
           turn: box([document.querySelector('.turn')]),
           confirm: box([document.querySelector('button.confirm')]) };
}"""
#: What a new turn does (table.js ``drawTable``): focus a card of the hand, which scrolls it
#: into view; from the top of the page, as when the table first shows.
NEW_TURN_JS = """() => {
  window.scrollTo(0, 0);
  const card = document.querySelector('.seat.mine .hand .card[tabindex="0"]');
  card.blur();
  card.focus();
}"""


def _play_to_the_end(page: Page) -> None:
    """The person plays its first playable card (or passes) to the end of the deal."""
    page.emulate_media(forced_colors="none")
    page.set_viewport_size({"width": 1200, "height": 900})
    while not my_turn_or_end(page):
        request = page.get_attribute(".table", "data-request")
        bid = page.locator(".actions button[data-action=pass]")
        choice = bid if bid.count() else page.locator(".seat.mine .card.playable").first
        if "selected" not in str(choice.get_attribute("class")):
            choice.click()
        page.click("button.confirm")
        page.wait_for_selector(f".table:not([data-request='{request}'])")


def _finish_by_socket(page: Page, url: str) -> None:
    """Close the person's page and play the rest of its table to the end over the table's
    socket, as the page does, each request answered with its first legal action: a table
    finished (its bots freed, its match logged for its replay) without the browser drawing the
    rest of the deal, which the tests that play whole deals on the page measure.  In a thread
    of its own: Playwright's sync API holds this thread's event loop."""
    table = page.url.split("/play/")[1].split("?")[0]
    token = page.evaluate("(table) => sessionStorage.getItem(`bisca.table.${table}`)", table)
    page.close()
    play = f"{ws(url)}/api/tables/{table}/play"
    with ThreadPoolExecutor(1) as thread:
        frames = thread.submit(socket_frames, play, {"token": token}, "", 500).result()
    assert any("matchEnded" in frame.get("server", {}) for frame in frames), frames[-3:]


def _table(browser: Browser, url: str, seed: int, viewport: dict[str, int]) -> Iterator[Page]:
    """A table of ``seed`` at the person's first turn, at instant speed; played to its end
    afterwards."""
    context = _context(browser, viewport=viewport, has_touch=True)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(f"{url}/play")
    page.evaluate(
        "localStorage.setItem('bisca.speed', 'instant');"
        " localStorage.setItem('bisca.language', 'en')"
    )
    _sit(page, url, query=f"seed={seed}")
    assert not my_turn_or_end(page), f"seed {seed}: the deal ended before the person's turn"
    yield page
    _finish_by_socket(page, url)
    context.close()
    assert not errors, f"the page raised: {errors}"


@pytest.fixture(scope="module")
def card_turn(browser: Browser, site: Site) -> Iterator[Page]:
    """The person's first turn of seed 7 (a card to play, three on the trick), first shown on
    a phone on its side."""
    yield from _table(browser, site[1], SEED, SHORT[0])


@pytest.fixture(scope="module")
def bid_turn(browser: Browser, site: Site) -> Iterator[Page]:
    """The person's first bid of the deal everybody passes, on a phone."""
    yield from _table(browser, site[1], ALL_PASS_SEED, TALL[1])


def _rgba(colour: str) -> tuple[float, float, float, float]:
    numbers = [float(n) for n in re.findall(r"[\d.]+", colour)]
    assert len(numbers) in (3, 4), colour
    return (numbers[0], numbers[1], numbers[2], numbers[3] if len(numbers) == 4 else 1.0)


def _over(top: str, below: str) -> tuple[float, float, float]:
    """The colour ``top`` (maybe translucent) composited over the opaque ``below``."""
    *fg, alpha = _rgba(top)
    bg = _rgba(below)[:3]
    return (
        fg[0] * alpha + bg[0] * (1 - alpha),
        fg[1] * alpha + bg[1] * (1 - alpha),
        fg[2] * alpha + bg[2] * (1 - alpha),
    )


def _contrast(a: tuple[float, ...], b: tuple[float, ...]) -> float:
    """WCAG's contrast ratio of two sRGB colours (0..255)."""

    def luminance(rgb: tuple[float, ...]) -> float:
        linear = [
            c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4
            for c in (v / 255 for v in rgb[:3])
        ]
        return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]

    high, low = sorted((luminance(a), luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def _style(page: Page, selector: str) -> dict[str, Any]:
    return dict(
        page.evaluate(
            """(selector) => {
              const s = getComputedStyle(document.querySelector(selector));
              return { opacity: s.opacity, decoration: s.textDecorationLine, cursor: s.cursor,
                       borderColor: s.borderTopColor, borderWidth: parseFloat(s.borderTopWidth),
                       borderStyle: s.borderTopStyle, outlineStyle: s.outlineStyle,
                       outlineWidth: parseFloat(s.outlineWidth), background: s.backgroundColor,
                       color: s.color };
            }""",
            selector,
        )
    )


def _seen_together(page: Page, where: str) -> None:
    """The trick's cards, the person's hand and Confirm are in the viewport at once, none of
    them under the sticky turn bar, and nothing scrolls sideways."""
    boxes = page.evaluate(BOXES_JS)
    trick, hand, turn, confirm = (boxes[k] for k in ("trick", "hand", "turn", "confirm"))
    assert trick["count"] == 3 and hand["count"] == 8, boxes
    assert trick["top"] >= 0, f"{where}: the trick is scrolled off the top ({boxes})"
    assert trick["bottom"] <= turn["top"], f"{where}: the trick is under the turn bar ({boxes})"
    assert hand["top"] >= 0, f"{where}: the hand is scrolled off the top ({boxes})"
    assert hand["bottom"] <= turn["top"] + 1, f"{where}: the hand is under the turn bar ({boxes})"
    assert confirm["top"] >= 0 and confirm["bottom"] <= boxes["height"], f"{where}: {boxes}"
    _fits(page, where)


def test_the_trick_the_hand_and_confirm_are_seen_together_on_a_short_screen(
    card_turn: Page,
) -> None:
    """On a phone on its side and at 200 % zoom the felt is bounded by the screen's height:
    at the person's turn the cards to answer, the hand and Confirm are all in view; portrait
    phones and the desktop show them as before."""
    page = card_turn
    size = SHORT[0]
    _seen_together(page, f"{size['width']}x{size['height']}, as the turn showed")
    for size in (*SHORT, *TALL):
        page.set_viewport_size(size)
        page.evaluate(NEW_TURN_JS)
        _seen_together(page, f"{size['width']}x{size['height']}")


def test_the_selected_card_is_outlined_in_forced_colours(card_turn: Page) -> None:
    """Forced colours drop the selected card's glow: a border (or an outline) marks it."""
    page = card_turn
    page.set_viewport_size(TALL[1])
    page.emulate_media(forced_colors="active")
    try:
        card = page.locator(".seat.mine .card.playable").first
        if "selected" not in str(card.get_attribute("class")):
            card.click()
        page.evaluate("document.activeElement.blur()")  # no focus ring: the mark alone
        style = _style(page, ".seat.mine .card.selected")
        marked = (style["borderStyle"] != "none" and style["borderWidth"] >= 2) or (
            style["outlineStyle"] != "none" and style["outlineWidth"] >= 2
        )
        assert marked, f"the selected card has no border nor outline in forced colours: {style}"
    finally:
        page.emulate_media(forced_colors="none")


def test_the_controls_around_the_table_are_at_least_24_px_tall(card_turn: Page) -> None:
    """The speed select, the language select, the Display summary and the menu's links."""
    page = card_turn
    page.set_viewport_size(TALL[1])
    heights = page.evaluate(
        """() => ['.speed select', 'select.languages', 'details.display summary', 'nav a']
          .flatMap((selector) => [...document.querySelectorAll(selector)].map((e) =>
            [selector + ' ' + e.textContent.trim().slice(0, 20),
             e.getBoundingClientRect().height]))"""
    )
    assert len(heights) >= 8, heights
    small = [(what, height) for what, height in heights if height < 24]
    assert not small, f"under 24 px tall: {small}"


def test_tricks_won_are_legible_and_the_cards_stay_on_the_felt_at_a_tablets_width(
    card_turn: Page,
) -> None:
    """At 768 px the person's tricks won fall below the felt, on the page's cream: a dark pill
    keeps them legible; the left and right seats' card backs stay on the felt."""
    page = card_turn
    page.set_viewport_size({"width": 768, "height": 1024})
    page_background = page.evaluate("getComputedStyle(document.body).backgroundColor")
    for seat in range(4):
        style = _style(page, f".seat[data-seat='{seat}'] .seat-tricks")
        pill = _over(style["background"], page_background)
        ratio = _contrast(_over(style["color"], "rgb(" + ",".join(map(str, pill)) + ")"), pill)
        assert ratio >= 4.5, f"seat {seat}'s tricks won: {ratio:.2f}:1 on the page ({style})"
    outside = page.evaluate(
        """() => {
          const felt = document.querySelector('.felt').getBoundingClientRect();
          return [...document.querySelectorAll('.seat:not(.mine) .hand')]
            .map((hand) => [hand.dataset.seat, hand.getBoundingClientRect()])
            .filter(([, r]) => r.left < felt.left - 0.5 || r.right > felt.right + 0.5)
            .map(([seat, r]) => `seat ${seat}: ${Math.round(r.left)}..${Math.round(r.right)}`
              + ` on a felt ${Math.round(felt.left)}..${Math.round(felt.right)}`);
        }"""
    )
    assert not outside, f"card backs off the felt: {outside}"
    _fits(page, "the table at 768 px")


def test_bids_show_which_are_excluded_and_which_is_selected(bid_turn: Page) -> None:
    """A bid the round excludes looks disabled (dimmed or struck, no pointer); the selected
    bid is marked by a border of 3:1 against the turn bar, in forced colours too."""
    page = bid_turn
    illegal = ".actions button.illegal"
    legal = ".actions button[data-action=pass]"
    assert page.locator(illegal).count(), f"seed {ALL_PASS_SEED}: no bid is excluded"
    excluded, allowed = _style(page, illegal), _style(page, legal)
    looks_disabled = float(excluded["opacity"]) < 1 or "line-through" in excluded["decoration"]
    assert looks_disabled, f"an excluded bid looks like an allowed one: {excluded}"
    assert excluded["cursor"] == "not-allowed", excluded
    page.click(legal)
    page.mouse.move(1, 1)
    page.evaluate("document.activeElement.blur()")  # no focus ring: the mark alone
    selected = _style(page, ".actions button[aria-pressed=true]")
    bar = _rgba(page.evaluate("getComputedStyle(document.querySelector('.turn')).backgroundColor"))
    ratio = _contrast(_rgba(selected["borderColor"]), bar)
    assert selected["borderWidth"] >= 2 and ratio >= 3, (
        f"the selected bid's border: {selected['borderWidth']} px at {ratio:.2f}:1 ({selected})"
    )
    assert selected["background"] != allowed["background"], "the selected bid is not filled"
    page.emulate_media(forced_colors="active")
    try:
        forced = _style(page, ".actions button[aria-pressed=true]")
        assert forced["borderStyle"] != "none" and forced["borderWidth"] >= 2, forced
    finally:
        page.emulate_media(forced_colors="none")


def test_deal_again_is_a_button_at_least_24_px_tall(bid_turn: Page) -> None:
    """The end of the all-pass deal offers Deal again: a button like the others, tall enough."""
    page = bid_turn
    _play_to_the_end(page)
    page.set_viewport_size(TALL[1])
    again = page.locator("button.deal-again")
    box = again.bounding_box()
    assert box is not None and box["height"] >= 24, f"Deal again: {box}"
    style = _style(page, "button.deal-again")
    assert style["borderStyle"] != "none" and style["cursor"] == "pointer", style
