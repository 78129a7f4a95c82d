"""The person's table as a keyboard and a screen reader meet it (review 45): a reload mid-deal
shows the game as it stands (the open turn, not the deal played again with stale turns), a
trick held until tapped goes on from the keyboard and never hides the result, and a reply to a
turn already over is told in the page's own words."""

from __future__ import annotations

import json
import re
from collections.abc import Callable

from playwright.sync_api import Browser, Page, Route, WebSocketRoute, expect

from bisca.server.web._table import MAX_PAGES_PER_TABLE

from .test_browser import (
    ALL_PASS_SEED,
    ANNOUNCED_JS,
    PHONES,
    SEED,
    Site,
    _context,
    _sit,
    my_turn_or_end,
)

#: Every value the table's ``data-request`` took, in order, kept in ``window.shownRequests``
#: (the turns the page showed the person).
SHOWN_REQUESTS_JS = """
window.shownRequests = [];
new MutationObserver((changes) => {
  for (const change of changes) {
    const value = change.target.getAttribute('data-request');
    if (change.target.classList.contains('table') && value) window.shownRequests.push(value);
  }
}).observe(document, { subtree: true, attributes: true, attributeFilter: ['data-request'] });
"""


def _answer(page: Page) -> str:
    """Answer the person's open turn with its first allowed card or bid, by the keyboard;
    returns the request answered."""
    request = str(page.get_attribute(".table", "data-request"))
    if page.locator(".actions button").count():
        page.wait_for_function("document.activeElement.closest('.actions') !== null")
        for _ in range(page.locator(".actions button").count()):
            if page.evaluate("document.activeElement.getAttribute('aria-disabled')") is None:
                break
            page.keyboard.press("ArrowRight")
    else:
        page.wait_for_function("document.activeElement.closest('.seat.mine .hand') !== null")
    page.keyboard.press("Enter")
    page.keyboard.press("Enter")
    page.wait_for_selector(f".table:not([data-request='{request}'])")
    return request


def _play_to_the_end(page: Page) -> None:
    while not my_turn_or_end(page):
        _answer(page)


class Seated:
    """A person seated at a fresh table of ``game`` (``seed``; ``seats`` of them, else the
    form's) in a context of its own: the page at the pace ``speed`` and in ``language``,
    ``scripts`` run in every page first, and ``prepare(page)`` before sitting down (routes);
    :meth:`leave` closes it and fails on any error the page raised."""

    def __init__(
        self,
        browser: Browser,
        url: str,
        *,
        viewport: dict[str, int],
        speed: str,
        seed: int = SEED,
        scripts: tuple[str, ...] = (),
        language: str = "",
        touch: bool = False,
        prepare: Callable[[Page], None] | None = None,
        game: str = "belote",
        seats: int | None = None,
    ) -> None:
        self.context = _context(browser, viewport=viewport, has_touch=touch)
        for script in scripts:
            self.context.add_init_script(script)
        self.page = self.context.new_page()
        self.errors: list[str] = []
        self.page.on("pageerror", lambda error: self.errors.append(str(error)))
        if prepare is not None:
            prepare(self.page)
        self.page.goto(f"{url}/play")
        self.page.evaluate(
            "([speed, language]) => { localStorage.setItem('bisca.speed', speed);"
            " if (language) localStorage.setItem('bisca.language', language); }",
            [speed, language],
        )
        _sit(self.page, url, query=f"seed={seed}", game=game, seats=seats)

    def leave(self) -> None:
        self.context.close()
        assert not self.errors, f"the page raised: {self.errors}"


def test_a_reload_mid_deal_shows_the_turn_open_now_and_plays_nothing_again(
    browser: Browser, site: Site
) -> None:
    """Three turns answered, then the page reloaded at the fourth: the page is sent every
    frame so far at once, and shows the table as it stands — the fourth turn, at once, with
    the hand it has now — without showing any of the turns already answered, announcing the
    plays again or pacing them; the person plays on to the end."""
    _, url = site
    seated = Seated(
        browser,
        url,
        viewport=PHONES[1],
        touch=True,
        speed="normal",
        scripts=(ANNOUNCED_JS, SHOWN_REQUESTS_JS),
    )
    page = seated.page
    answered = []
    while len(answered) < 3:
        assert not my_turn_or_end(page), "the deal ended before its fourth turn"
        answered.append(_answer(page))
    assert not my_turn_or_end(page)
    open_now = str(page.get_attribute(".table", "data-request"))
    hand = page.locator(".seat.mine .card").count()
    page.reload()
    expect(page.locator(".table")).to_have_attribute("data-request", open_now, timeout=5_000)
    assert page.evaluate("window.shownRequests") == [open_now], "a stale turn was shown"
    expect(page.locator(".seat.mine .card")).to_have_count(hand)
    said = page.evaluate("window.announced")
    # Where the game stands, then "Your turn: …": nothing replayed.
    assert len(said) == 2 and said[0].startswith("Back at the table: deal 1, "), said
    assert said[0].endswith("; your turn.") and said[1].startswith("Your turn: "), said
    expect(page.locator(".notice")).to_have_text("")
    page.evaluate("localStorage.setItem('bisca.speed', 'instant')")  # the rest at once
    _answer(page)
    _play_to_the_end(page)
    expect(page.locator(".result .verdict-line")).to_be_visible()
    seated.leave()


def test_a_trick_held_until_tapped_goes_on_by_the_keyboard_and_the_end_is_not_held(
    browser: Browser, site: Site
) -> None:
    """At the speed "hold each trick until tapped", a completed trick's caption names its winner
    by its place and holds a button "go on" (reached with Tab from the hand, pressed with Enter:
    the felt's tap is not the only way), and the deal's result comes after the last trick
    without any tap."""
    _, url = site
    seated = Seated(browser, url, viewport=PHONES[0], touch=True, speed="tap")
    page = seated.page
    went_on = 0
    while not my_turn_or_end(page):
        # Between the two tricks passed by the keyboard and the last one (held until tapped,
        # which nobody does) the deal goes at once: each held trick waits out the pacing cap.
        last = page.locator(".seat.mine .card").count() == 1
        page.evaluate(
            "(speed) => localStorage.setItem('bisca.speed', speed)",
            "tap" if went_on < 2 or last else "instant",
        )
        _answer(page)
        held = page.locator(".trick.complete .trick-next")
        if went_on < 2:
            # The trick completes when the seats after the person have played (at once on a
            # quiet machine, seconds on a loaded one: a count taken at once missed it there),
            # and at this speed every completed trick is held.
            expect(held).to_be_visible(timeout=30_000)
            # The winner as the announcements say it (not "seat 1 (seat1-greedy-…)"), and the
            # button by what it does, for a keyboard as well as a finger (review 45b L3).
            expect(page.locator(".trick.complete .trick-caption")).to_have_text(
                re.compile(
                    r"^(You take|(Your partner|The opponent on your (left|right)) takes)"
                    r" the trick · go on$"
                )
            )
            # Focus is in the hand (or on the table after the last card): Tab reaches the button.
            for _ in range(4):
                if page.evaluate("document.activeElement.classList.contains('trick-next')"):
                    break
                page.keyboard.press("Tab")
            assert page.evaluate("document.activeElement.classList.contains('trick-next')")
            expect(held).to_be_in_viewport()
            box = held.bounding_box()
            assert box is not None and box["height"] >= 24 and box["width"] >= 24, box
            page.keyboard.press("Enter")
            expect(page.locator(".trick.complete")).to_have_count(0, timeout=5_000)
            went_on += 1
    assert went_on == 2, "no completed trick was held at the person's turns"
    # The last trick, held until tapped, did not hold the result back: nothing was tapped.
    expect(page.locator(".result .verdict-line")).to_be_visible()
    seated.leave()


#: Every text the table's notice (``role=alert``) showed, kept in ``window.notices``.
NOTICES_JS = """
window.notices = [];
new MutationObserver(() => {
  const notice = document.querySelector('.notice');
  if (notice && notice.textContent) window.notices.push(notice.textContent);
}).observe(document, { subtree: true, childList: true, characterData: true });
"""


def test_a_reply_to_a_turn_already_over_is_told_in_the_pages_words(
    browser: Browser, site: Site
) -> None:
    """The referee moved on (the person's time ran out, or another page of the table answered)
    when the page's reply arrives: the server's 409 is shown as the page's own sentence, in the
    page's language, not the server's English."""
    _, url = site
    stale = {"error": "request 'r1-x' is not the open request of this table", "status": 409}

    def relay(socket: WebSocketRoute) -> None:
        server = socket.connect_to_server()
        replies = 0

        def to_server(message: str | bytes) -> None:
            nonlocal replies
            server.send(message)
            if "reply" in json.loads(message) and not replies:
                replies += 1
                socket.send(json.dumps(stale))  # as if that reply had come too late

        socket.on_message(to_server)

    seated = Seated(
        browser,
        url,
        viewport=PHONES[0],
        speed="instant",
        language="it",
        scripts=(NOTICES_JS,),
        prepare=lambda page: page.route_web_socket(re.compile(r"/api/tables/.*/play"), relay),
    )
    _play_to_the_end(seated.page)
    notices = seated.page.evaluate("window.notices")
    assert any("Quel turno è finito" in text for text in notices), notices
    assert not any("open request" in text for text in notices), notices
    seated.leave()


def test_a_card_not_allowed_is_explained_once_and_a_refused_sit_down_is_heard(
    browser: Browser, site: Site
) -> None:
    """Pressing a card the turn does not allow says why in the turn's status line, once (not
    also in the announcements' region, which made a screen reader say it twice); a sit-down
    the server refuses (too many tables open) is an alert, heard as well as shown."""
    _, url = site
    refused = {"error": "127.0.0.1 has 2 tables open already (at most 2); finish one"}
    tables = re.compile(r"/api/tables$")

    def refused_first(page: Page) -> None:
        page.route(
            tables,
            lambda route: (
                route.fulfill(status=429, json=refused)
                if route.request.method == "POST"
                else route.continue_()
            ),
        )
        page.goto(f"{url}/play")
        page.click("button.sit-down")
        expect(page.locator(".message")).to_contain_text("tables open already")
        assert page.get_attribute(".message", "role") == "alert"
        page.unroute(tables)

    seated = Seated(
        browser,
        url,
        viewport=PHONES[1],
        speed="instant",
        scripts=(ANNOUNCED_JS,),
        prepare=refused_first,
    )
    page = seated.page
    explained = False
    while not my_turn_or_end(page):
        illegal = page.locator(".seat.mine .card.illegal")
        if not explained and illegal.count() and not page.locator(".actions button").count():
            illegal.first.click(force=True)  # aria-disabled, yet pressable: it says why
            expect(page.locator(".reason")).to_contain_text(":")
            assert page.get_attribute(".reason", "role") == "status"
            why = page.locator(".reason").inner_text()
            assert why not in page.evaluate("window.announced"), "the reason was said twice"
            page.focus(".seat.mine .card.playable")
            explained = True
        _answer(page)
    assert explained, f"seed {SEED} never gave the person a card it may not play"
    seated.leave()


def test_what_a_screen_reader_hears_at_a_belote_deal(browser: Browser, site: Site) -> None:
    """The deal as the live region says it: the turned card, every bid, every card and trick,
    the seats by their place around the person ("your partner", "the opponent on your left"),
    the person's own moves in the second person, cards in words (no suit symbols, no bots'
    generated names); the hand describes its keys, Confirm names what it confirms, a trick's
    cards say who played them, and the page's title says when it is the person's turn."""
    _, url = site
    seated = Seated(browser, url, viewport=PHONES[1], speed="instant", scripts=(ANNOUNCED_JS,))
    page = seated.page
    checked_turn = False
    while not my_turn_or_end(page):
        if not checked_turn and not page.locator(".actions button").count():
            assert page.title().startswith("Your turn – "), page.title()
            described = page.get_attribute(".seat.mine .hand", "aria-describedby")
            expect(page.locator(f"#{described}")).to_have_text(re.compile("Enter again confirms"))
            page.wait_for_function("document.activeElement.closest('.seat.mine .hand') !== null")
            page.keyboard.press("Enter")  # selected, not yet confirmed
            card = page.evaluate("document.activeElement.dataset.card")
            label = str(page.get_attribute("button.confirm", "aria-label"))
            assert label.startswith("Confirm: ") and " of " in label, (label, card)
            # On a phone the seats' labels are cut short: the roles come first (review 45 L1).
            expect(page.locator(".seat[data-seat='2'] .seat-name")).to_have_text(
                re.compile(r"^partner · ")
            )
            expect(page.locator(".seat.mine .seat-name")).to_have_text(re.compile(r"^you · "))
            expect(page.locator(".table-info .scores")).to_contain_text("your team")
            assert page.get_attribute("section.turn", "aria-label") == "Turn"
            trick = page.locator(".trick .card[data-seat]")
            for index in range(trick.count()):
                assert "played by" in str(trick.nth(index).get_attribute("aria-label"))
            checked_turn = True
        _answer(page)
    assert checked_turn
    assert not page.title().startswith("Your turn"), page.title()
    said = page.evaluate("window.announced")
    text = "\n".join(said)
    assert any(line.startswith("The turned card is ") for line in said), text
    assert any(re.match(r"The opponent on your (left|right) (passes|takes)", s) for s in said)
    assert any(line.startswith("You play ") for line in said), text
    assert any(line.startswith("Your partner ") for line in said), text
    assert re.search(r"(You win|wins) trick 8", text), text
    assert not re.search("[♠♥♦♣]|greedy-", text), text
    seated.leave()


def test_a_turn_whose_time_runs_out_says_the_referee_played(browser: Browser, site: Site) -> None:
    """The person's clock (half a second here, and the table's pacing allowance) runs out at a
    turn: the page stops asking for it and says that the referee played for the person."""
    _, url = site

    def short_clock(route: Route) -> None:
        body = json.loads(route.request.post_data or "{}")
        body["request"]["clock"] = {"moveMs": 500, "bankMs": 0}
        route.continue_(post_data=json.dumps(body))

    seated = Seated(
        browser,
        url,
        viewport=PHONES[0],
        speed="instant",
        scripts=(ANNOUNCED_JS,),
        prepare=lambda page: page.route(re.compile(r"/api/tables$"), short_clock),
    )
    page = seated.page
    assert not my_turn_or_end(page)
    expect(page.locator(".prompt")).to_contain_text("Your turn")
    unanswered = str(page.get_attribute(".table", "data-request"))
    page.wait_for_function(
        "window.announced.some((line) => line.startsWith('Your time ran out'))", timeout=40_000
    )
    said = page.evaluate("window.announced")
    warned = said.index("Less than 15 seconds left to play.")  # said before, once
    assert warned < next(i for i, line in enumerate(said) if line.startswith("Your time ran out"))
    # That turn is no longer asked (the next one may be, already).
    assert page.get_attribute(".table", "data-request") != unanswered
    _play_to_the_end(page)
    seated.leave()


#: Every focus change on the page, kept in ``window.focusins`` (what a screen reader hears as
#: a focus move: the card or element focused).
FOCUSINS_JS = """
window.focusins = [];
document.addEventListener('focusin', (event) =>
  window.focusins.push(event.target.dataset.card || event.target.className));
"""


def test_focus_stays_on_its_card_while_the_other_seats_play(browser: Browser, site: Site) -> None:
    """Focus in the hand is not re-created at each redraw: selecting a card with Enter keeps
    the very element focused, and from the person's play to its next turn, while the three
    other seats play (a redraw each, at the normal pace), focus moves at most twice (off the
    card played, and onto the new turn's card) — it moved once per redraw, each move said
    aloud over the play's announcement."""
    _, url = site
    seated = Seated(browser, url, viewport=PHONES[1], speed="normal", scripts=(FOCUSINS_JS,))
    page = seated.page
    checked = 0
    while not my_turn_or_end(page) and checked < 2:
        if page.locator(".actions button").count():
            _answer(page)
            continue
        page.wait_for_function("document.activeElement.closest('.seat.mine .hand') !== null")
        page.evaluate("window.kept = document.activeElement")
        page.keyboard.press("Enter")  # selected
        assert page.evaluate("document.activeElement === window.kept"), "the card was replaced"
        request = str(page.get_attribute(".table", "data-request"))
        page.evaluate("window.focusins = []")
        page.keyboard.press("Enter")  # confirmed
        page.wait_for_selector(f".table:not([data-request='{request}'])")
        assert not my_turn_or_end(page), "the deal ended before the person's next turn"
        moves = page.evaluate("window.focusins")
        assert len(moves) <= 2, f"focus moved {len(moves)} times while the others played: {moves}"
        checked += 1
    assert checked == 2
    page.evaluate("localStorage.setItem('bisca.speed', 'instant')")  # the rest at once
    _play_to_the_end(page)
    seated.leave()


def test_a_bid_selected_by_the_keyboard_stays_focused(browser: Browser, site: Site) -> None:
    """The bids are kept across redraws as the cards are: Enter on a bid selects it and the
    very button stays focused (it was replaced, focus moving to its copy)."""
    _, url = site
    # The person bids twice (everybody passes).
    seated = Seated(browser, url, viewport=PHONES[0], speed="instant", seed=ALL_PASS_SEED)
    page = seated.page
    assert not my_turn_or_end(page)
    page.wait_for_function("document.activeElement.closest('.actions') !== null")
    page.evaluate("window.kept = document.activeElement")
    page.keyboard.press("Enter")
    assert page.evaluate("document.activeElement === window.kept"), "the bid was replaced"
    assert page.evaluate("window.kept.getAttribute('aria-pressed')") == "true"
    page.keyboard.press("Enter")
    _play_to_the_end(page)
    seated.leave()


def test_a_turn_answered_on_another_page_of_the_table_ends_there_without_a_timeout(
    browser: Browser, site: Site
) -> None:
    """Two pages of one table (a second tab of the same session): when one answers, the
    other's turn ends quietly — its clock had not run out, so it does not say the referee
    played (review 45b: it did, with 59 s left) — and both follow the game to its end."""
    _, url = site
    seated = Seated(browser, url, viewport=PHONES[1], speed="instant", scripts=(ANNOUNCED_JS,))
    first = seated.page
    assert not my_turn_or_end(first)
    request = str(first.get_attribute(".table", "data-request"))
    session = first.evaluate("JSON.stringify(Object.fromEntries(Object.entries(sessionStorage)))")
    second = seated.context.new_page()
    second.goto(f"{url}/play")
    second.evaluate(
        "(saved) => { for (const [k, v] of Object.entries(JSON.parse(saved)))"
        " sessionStorage.setItem(k, v); }",
        session,
    )
    second.goto(first.url)
    expect(second.locator(".table")).to_have_attribute("data-request", request)
    _answer(second)
    expect(first.locator(".table")).not_to_have_attribute("data-request", request)
    said = first.evaluate("window.announced")
    assert not any("time ran out" in line for line in said), said
    _play_to_the_end(second)
    expect(first.locator(".result .verdict-line")).to_be_visible()
    seated.leave()


def test_a_page_too_many_of_the_table_is_told_so_in_its_language(
    browser: Browser, site: Site
) -> None:
    """The table takes :data:`MAX_PAGES_PER_TABLE` pages: one more (a tab duplicated once too
    often) is told in the page's language to close one and reload — not the server's English,
    nor that the table is gone (review 45b L1: it said both)."""
    _, url = site
    seated = Seated(browser, url, viewport=PHONES[0], speed="instant", language="it")
    first = seated.page
    assert not my_turn_or_end(first)
    session = first.evaluate("JSON.stringify(Object.fromEntries(Object.entries(sessionStorage)))")

    def another_page() -> Page:
        page = seated.context.new_page()
        page.goto(f"{url}/play")
        page.evaluate(
            "(saved) => { for (const [k, v] of Object.entries(JSON.parse(saved)))"
            " sessionStorage.setItem(k, v); }",
            session,
        )
        page.goto(first.url)
        return page

    for _ in range(MAX_PAGES_PER_TABLE - 1):
        expect(another_page().locator(".table")).to_have_attribute("data-status", re.compile("."))
    refused = another_page()
    expect(refused.locator(".notice")).to_have_text(
        "Questo tavolo è aperto in troppe schede: chiudine una, poi ricarica la pagina."
    )
    refused.wait_for_timeout(500)  # the socket's close, after the refusal
    expect(refused.locator(".prompt")).not_to_contain_text("non c'è più")
    expect(refused.locator(".notice")).not_to_contain_text("pages have it open")
    seated.leave()
