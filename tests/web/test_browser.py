"""The browser app in Debian's chromium, headless, driven by Playwright, as a person uses it:
a whole Belote deal by clicking (only legal moves can be confirmed, a completed trick stays on
the table with its winner marked, in play, live and replay), another with the keyboard alone on
either phone's screen in Italian, one everybody passes twice (with the rules tab meanwhile), a
whole Bestia table in Italian with its exchange, summaries and result, axe-core's audit of the
main pages, no page wider than a phone, the display sliders, and the leaderboard as
``bisca leaderboard`` prints it.

One browser for the module.  Screenshots go to ``tests/web/artifacts/`` (git-ignored).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import (
    Browser,
    BrowserContext,
    Page,
    Request,
    Route,
    WebSocket,
    expect,
)

from bisca.server.logs import read_log
from bisca.server.sandbox import SAMPLE_BOTS
from bisca.server.web import to_json
from tests.support.arena import Arena
from tests.support.commands import bisca

from .support import socket_frames

Site = tuple[Arena, str]
#: The deal the person plays: with this seed the first legal card each turn leaves the person
#: holding cards it may not play at some turn (the test fails, saying so, if it ever did not).
SEED = 7
WAIT_MS = 60_000
AXE = Path(__file__).parents[2] / "server/bisca/server/web/node_modules/axe-core/axe.min.js"
# A loaded machine builds a replay or starts bots slowly: every wait is generous.
expect.set_options(timeout=WAIT_MS)
PHONES = ({"width": 360, "height": 740}, {"width": 390, "height": 844})
#: A Belote deal nobody takes: with this seed, seat 0 dealing (the play form's table) and the
#: form's greedy bots, every seat passes in both rounds when the person does.
ALL_PASS_SEED = 3
#: A Bestia table of 4 seats, one round, with the form's greedy bots: the person (who opens,
#: assists and calls when offered, exchanges its first two cards and plays its first playable
#: card) opens alone in three hands and, in the second, assists the opener, takes no trick and
#: goes to bestia; it ends +40, level with the opener at the top.
BESTIA_SEED = 364
#: What the page said in its live region (``#announce``: a line added per sentence), kept in
#: ``window.announced``.
ANNOUNCED_JS = """
window.announced = [];
document.addEventListener('DOMContentLoaded', () => {
  const region = document.getElementById('announce');
  new MutationObserver((changes) => {
    for (const change of changes)
      for (const line of change.addedNodes) window.announced.push(line.textContent);
  }).observe(region, { childList: true });
});
"""
#: The numbered sections of each rules page, as its file has them.
RULES_SECTIONS_JS = """async () => Object.fromEntries(await Promise.all(
  ['belote.en', 'belote.it', 'bestia.en', 'bestia.it'].map(async (name) => {
    const html = await (await fetch(`/static/rules/${name}.html`)).text();
    const doc = new DOMParser().parseFromString(html, 'text/html');
    return [name, doc.querySelectorAll('ol.sections > li').length];
  })))"""
#: Every word the app may show in Italian: its Italian dictionary (every plural form) and its
#: Italian rules pages (the rules are the app's text too, written in each language).
ITALIAN_WORDS_JS = """async () => {
  const { texts } = await import('/static/words.js');
  const rules = await Promise.all(['belote', 'bestia'].map(async (game) => {
    const html = await (await fetch(`/static/rules/${game}.it.html`)).text();
    return new DOMParser().parseFromString(html, 'text/html').body.textContent;
  }));
  const text = [...texts('it'), ...rules].join(' ').replace(/\\{\\w+\\}/g, ' ');
  return [...new Set(text.toLowerCase().match(/[a-zà-ÿ]+/g))];
}"""
#: Every word the app's English dictionary has that Italian does not (a sanity check that the
#: strict check below would catch the app's English).
ENGLISH_ONLY_JS = """async () => {
  const { texts } = await import('/static/words.js');
  const words = (lang) => new Set(texts(lang).join(' ').replace(/\\{\\w+\\}/g, ' ')
    .toLowerCase().match(/[a-zà-ÿ]+/g));
  const it = words('it');
  return [...words('en')].filter((w) => !it.has(w));
}"""
#: Every visible text of the page, one string per text node shown (hidden ones excluded).
VISIBLE_TEXTS_JS = """() => {
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  const shown = [];
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const parent = node.parentElement;
    if (!node.textContent.trim() || !parent || parent.closest('script, style, svg')) continue;
    // Data the app shows as it is, marked so (a tool's log in its own language).
    if (parent.closest('[translate="no"]')) continue;
    if (!parent.checkVisibility({ visibilityProperty: true })) continue;
    shown.push(node.textContent);
  }
  for (const option of document.querySelectorAll('select')) {
    if (option.checkVisibility() && option.selectedOptions[0])
      shown.push(option.selectedOptions[0].textContent);
  }
  return shown;
}"""


def _context(browser: Browser, **options: Any) -> BrowserContext:
    # bypass_csp: axe-core is injected by the test as an inline script, which the app's own
    # policy rightly refuses.
    context = browser.new_context(
        **{"viewport": {"width": 1200, "height": 900}, "bypass_csp": True, **options}
    )
    context.set_default_timeout(WAIT_MS)
    return context


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    context = _context(browser)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    yield page
    context.close()
    assert not errors, f"the page raised: {errors}"


class Requests:
    """The person's requests as the page's socket received them (the referee's legal
    actions, to compare with what the page offers)."""

    def __init__(self, page: Page) -> None:
        self.requests: dict[str, dict[str, Any]] = {}
        page.on("websocket", self._socket)

    def _socket(self, socket: WebSocket) -> None:
        socket.on("framereceived", self._frame)

    def _frame(self, payload: str | bytes) -> None:
        frame = json.loads(payload)
        request = frame.get("server", {}).get("actionRequest")
        if request is not None:
            self.requests[request["requestId"]] = request

    def legal(self, request_id: str) -> tuple[set[str], int]:
        """The cards (``SUIT/RANK``) the request lets the person play, and its other actions."""
        cards: set[str] = set()
        others = 0
        for action in self.requests[request_id]["legalActions"]:
            (inner,) = action.values()
            ((kind, value),) = inner.items()
            if kind == "playCard":
                cards.add(f"{value['card']['suit']}/{value['card']['rank']}")
            else:
                others += 1
        return cards, others


def my_turn_or_end(page: Page) -> bool:
    """Wait for the person's next request (or the end); ``True`` when it is the end."""
    page.wait_for_selector(".table[data-request]:not([data-request='']), .result:not([hidden])")
    return page.locator(".result:not([hidden])").count() > 0


def _sit(
    page: Page,
    url: str,
    query: str = f"seed={SEED}",
    game: str = "belote",
    *,
    seats: int | None = None,
    language: str | None = None,
) -> None:
    """Sit down at a new table of ``game`` (``seats`` of them, else the form's); with a
    ``language``, the page set to it and to play at once ("instant"), then reloaded."""
    page.goto(f"{url}/play?{query}")
    if language is not None:
        page.evaluate(
            "(language) => { localStorage.setItem('bisca.speed', 'instant');"
            " localStorage.setItem('bisca.language', language); }",
            language,
        )
        page.reload()
    if game != "belote":
        page.select_option("select[name=game]", game)
    if seats is not None:
        page.fill("input[name=seats]", str(seats))
        page.dispatch_event("input[name=seats]", "change")
    page.click("button.sit-down")
    page.wait_for_url(re.compile(r"/play/t-"))


def _request_id(page: Page) -> str:
    return str(page.get_attribute(".table", "data-request")).split(":")[0]


def _no_serious_violation(page: Page, where: str) -> None:
    page.add_script_tag(path=str(AXE))
    found = page.evaluate(
        "async () => (await axe.run(document, {resultTypes: ['violations']})).violations"
        ".filter((v) => ['serious', 'critical'].includes(v.impact))"
        ".map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(' ')).join('; ')})`)"
    )
    assert not found, f"{where}: axe-core found {found}"


def _confirm_in_view(page: Page, where: str) -> None:
    assert page.evaluate(
        "(() => { const r = document.querySelector('button.confirm').getBoundingClientRect();"
        " return r.top >= 0 && r.bottom <= window.innerHeight; })()"
    ), f"{where}: Confirm is not in view during the person's turn"


def _fits(page: Page, where: str) -> None:
    widths = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
    assert widths[0] == widths[1], (
        f"{where}: the page is {widths[0]} px wide on a {widths[1]} px screen"
    )


def _held_trick(page: Page, name: str, artifacts: Path) -> None:
    """A completed trick is on the table: every seat's card, the winner's marked."""
    trick = page.locator(".trick.complete")
    expect(trick).to_be_visible()
    expect(trick.locator(".card:not(.turned)")).to_have_count(4)
    winner = trick.get_attribute("data-winner")
    expect(trick.locator(f".card.winner[data-seat='{winner}']")).to_have_count(1)
    expect(trick.locator(".trick-caption")).to_be_visible()
    page.screenshot(path=str(artifacts / name))


def test_a_person_plays_a_whole_deal(browser: Browser, site: Site, artifacts: Path) -> None:
    """Only the referee's legal actions can be confirmed, a greyed card says why in words and
    burns no attempt; the completed trick stays with its winner; live and replay show it too."""
    arena, url = site
    context = _context(browser)
    context.add_init_script(ANNOUNCED_JS)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    requests = Requests(page)
    page.goto(f"{url}/play")
    page.evaluate("localStorage.setItem('bisca.speed', 'tap')")  # a trick waits for the tap
    _sit(page, url)
    expect(page.locator(".table-line")).to_have_text(
        "4 players · you partner the AI opposite · single deal"
    )
    refused_tries = 0
    red_greyed = 0
    turns = 0
    held = False
    audited = False
    live: Page | None = None
    while not my_turn_or_end(page):
        request = page.get_attribute(".table", "data-request")
        cards, others = requests.legal(_request_id(page))
        offered = {
            page.locator(".seat.mine .card.playable").nth(i).get_attribute("data-card")
            for i in range(page.locator(".seat.mine .card.playable").count())
        }
        assert offered == cards, f"the page offers {offered}, the referee {cards}"
        expect(page.locator(".actions button:not(.illegal)")).to_have_count(others)
        expect(page.locator("button.confirm")).to_be_disabled()
        illegal = page.locator(".seat.mine .card.illegal")
        if illegal.count():
            # A greyed card says why beside Confirm, and cannot be confirmed: no attempt burns.
            card = illegal.first
            assert "not allowed:" in str(card.get_attribute("aria-label"))
            red_greyed += _greyed_red_cards_stay_red(page)
            card.click(force=True)
            expect(page.locator(".reason")).to_contain_text(":")
            expect(page.locator("button.confirm")).to_be_disabled()
            page.locator("button.confirm").click(force=True)
            assert page.get_attribute(".table", "data-request") == request
            if refused_tries == 0:
                page.screenshot(path=str(artifacts / "table-illegal-reason.png"))
            refused_tries += 1
        if _is_axe_turn(turns, cards) and not audited:
            _no_serious_violation(page, "the table")
            audited = True
        bids = page.locator(".actions button:not(.illegal)")
        if bids.count():
            bids.last.click()  # take when offered (the last bid), so the deal is played
        else:
            page.locator(".seat.mine .card.playable").first.click()
        page.click("button.confirm")
        turns += 1
        if turns == 2:
            live = _watch(browser, url, arena, _match_of(page))
        if not held:
            page.wait_for_selector(f".table:not([data-request='{request}'])")
            if page.locator(".trick.complete").count() or turns > 1:
                _held_trick(page, "table-trick-complete.png", artifacts)
                page.select_option("select[name=speed]", "instant")
                page.locator(".felt").click()  # a tap goes on at once
                held = True
        page.wait_for_selector(f".table:not([data-request='{request}'])")
    assert refused_tries, f"seed {SEED} never left the person a card it may not play"
    assert red_greyed, f"seed {SEED} never greyed a heart or a diamond in the person's hand"
    assert held, "no completed trick was seen on the table"
    assert not page.locator(".notice.refused").count(), "the referee refused a move"
    assert live is not None
    _held_trick(live, "live-trick-complete.png", artifacts)
    live.select_option("select[name=speed]", "instant")
    live.locator(".felt").click()
    expect(live.locator(".live-status")).to_contain_text("over")
    live.screenshot(path=str(artifacts / "live-match.png"))
    for size in PHONES:  # the live match fits a phone too
        live.set_viewport_size(size)
        _fits(live, f"the live match at {size['width']} px")
    expect(page.locator(".result")).to_contain_text("Game over")
    expect(page.locator(".result .verdict-line")).to_contain_text("Your team")
    # The live region said the person's turns, the others' cards and the verdict.
    page.wait_for_function(
        "() => window.announced.includes(document.querySelector('.verdict-line').textContent)"
    )
    announced = page.evaluate("window.announced")
    assert any(text.startswith("Your turn: ") for text in announced), announced
    assert any(re.search(r" plays .+\.$", text) for text in announced), announced
    page.screenshot(path=str(artifacts / "table-game-over.png"))
    match_id = _match_of(page)
    # The finished game is in the match list, and replays step by step.
    page.click("nav a[href='/matches']")
    expect(page.locator(f"tr[data-match='{match_id}']")).to_be_visible()
    _no_serious_violation(page, "the match list")
    page.click(f"tr[data-match='{match_id}'] a")
    expect(page.locator(".verdict")).to_have_attribute("data-trusted", "true")
    page.click("button.forward")
    expect(page.locator(".table")).to_have_attribute("data-step", "1")
    page.click("button.forward")
    expect(page.locator(".table")).to_have_attribute("data-step", "2")
    page.click("button.back")
    expect(page.locator(".table")).to_have_attribute("data-step", "1")
    assert "step=1" in page.url
    page.select_option("select[name=trick]", index=1)
    _held_trick(page, "replay-trick-complete.png", artifacts)
    expect(page.locator(".events li").first).to_have_text(re.compile(r"\.$"))
    _no_serious_violation(page, "the replay")
    context.close()
    assert not errors, f"the page raised: {errors}"


def _greyed_red_cards_stay_red(page: Page) -> int:
    """The greyed hearts and diamonds of the hand keep their red (dimmed and struck through,
    never drained of colour): their rank's fill is red and nothing on the way greys it.
    How many were checked."""
    checked = page.evaluate(
        r"""() => [...document.querySelectorAll('.seat.mine .card.illegal')]
          .filter((card) => /HEARTS|DIAMONDS/.test(card.dataset.card))
          .map((card) => {
            const [r, g, b] = getComputedStyle(card.querySelector('svg text')).fill
              .match(/\d+/g).map(Number);
            const filters = [];
            for (let node = card; node; node = node.parentElement)
              filters.push(getComputedStyle(node).filter);
            return { card: card.dataset.card, red: r > g + 80 && r > b + 80, filters };
          })"""
    )
    for card in checked:
        assert card["red"], f"the greyed {card['card']} lost its red"
        assert not [f for f in card["filters"] if "grayscale" in f or "saturate" in f], card
    return len(checked)


def _is_axe_turn(turns: int, cards: set[str]) -> bool:
    return bool(cards) and turns in (1, 2)


def _watch(
    browser: Browser,
    url: str,
    arena: Arena,
    match_id: str,
    speed: str = "tap",
    language: str = "en",
    **options: Any,
) -> Page:
    """A spectator's page on the match, in its own browser context (its own pace)."""
    context = _context(browser, **options)
    context.add_init_script(
        f"localStorage.setItem('bisca.speed', '{speed}');"
        f" localStorage.setItem('bisca.language', '{language}')"
    )
    live = context.new_page()
    live.goto(f"{url}/live/{match_id}")
    live.fill("input[name=token]", (arena.data_dir / "spectator.token").read_text().strip())
    live.click("form.watch button")
    live.wait_for_selector(".table[data-updates]")
    return live


def _match_of(page: Page) -> str:
    return str(page.get_attribute(".table", "data-match"))


@pytest.mark.parametrize("phone", PHONES, ids=lambda size: f"{size['width']}px")
def test_a_deal_by_keyboard_alone_on_a_phone_in_italian(
    browser: Browser, site: Site, artifacts: Path, phone: dict[str, int]
) -> None:
    """Arrows move between the cards, Enter selects, Enter again confirms; focus stays in the
    hand, its ring visible; the page fits a phone's screen (360 and 390 px wide) with Confirm
    in view at every turn; every word is Italian."""
    _, url = site
    width = phone["width"]
    context = _context(browser, viewport=phone, has_touch=True)
    page = context.new_page()
    page.goto(f"{url}/play")
    page.evaluate(
        "localStorage.setItem('bisca.speed', 'instant');"
        " localStorage.setItem('bisca.language', 'it')"
    )
    italian = set(page.evaluate(ITALIAN_WORDS_JS))
    english = set(page.evaluate(ENGLISH_ONLY_JS))
    assert {"confirm", "trick", "tricks", "points"} <= english and not {
        "confirm",
        "trick",
    } & italian
    _sit(page, url, query="seed=8")
    turns = 0
    refused_bids = 0
    while not my_turn_or_end(page):
        request = page.get_attribute(".table", "data-request")
        _fits(page, f"the table at {width} px")
        _confirm_in_view(page, f"the table at {width} px")
        if page.locator(".actions button").count():
            page.wait_for_function("document.activeElement.closest('.actions') !== null")
            page.keyboard.press("End")  # take when offered (the last bid that may be made)
            if page.evaluate("document.activeElement.getAttribute('aria-disabled')"):
                # A take the round excludes: greyed, named as not allowed, and Enter (twice)
                # only says why, in Italian words, beside Confirm; nothing is sent.
                label = page.evaluate("document.activeElement.getAttribute('aria-label')")
                assert "non si può:" in label and "girata" in label, label
                page.keyboard.press("Enter")
                page.keyboard.press("Enter")
                expect(page.locator(".reason")).to_contain_text("carta girata")
                expect(page.locator("button.confirm")).to_be_disabled()
                assert page.get_attribute(".table", "data-request") == request
                refused_bids += 1
            for _ in range(page.locator(".actions button").count()):
                if page.evaluate("document.activeElement.getAttribute('aria-disabled')") is None:
                    break
                page.keyboard.press("ArrowLeft")
        else:
            page.wait_for_function("document.activeElement.closest('.seat.mine .hand') !== null")
            first = page.evaluate("document.activeElement.dataset.card")
            page.keyboard.press("ArrowRight")
            if page.locator(".seat.mine .card").count() > 1:
                assert page.evaluate("document.activeElement.dataset.card") != first
            page.keyboard.press("ArrowLeft")
            assert page.evaluate("document.activeElement.dataset.card") == first
            # The focused card shows its ring (the keyboard's focus is visible).
            ring = page.evaluate(
                "(() => { const s = getComputedStyle(document.activeElement);"
                " return [s.outlineStyle, parseFloat(s.outlineWidth)]; })()"
            )
            assert ring[0] != "none" and ring[1] >= 2, f"no focus ring on the card: {ring}"
        if turns == 3:
            _italian_only(page, italian, "the table")
            page.screenshot(path=str(artifacts / f"table-phone-it-{width}.png"))
        page.keyboard.press("Enter")
        page.keyboard.press("Enter")
        turns += 1
        page.wait_for_selector(f".table:not([data-request='{request}'])")
        # Focus stays in the hand (or the bids) while the others play.
        assert page.evaluate(
            "document.activeElement.closest('.table, .actions, .result') !== null"
        ), "the focus left the hand"
    assert turns >= 8
    assert refused_bids, "seed 8 never offered the person a take the round excludes"
    expect(page.locator(".result .verdict-line")).to_contain_text("squadra")
    _italian_only(page, italian, "the end of the game")
    _fits(page, "the end of the game")
    page.screenshot(path=str(artifacts / f"table-phone-over-{width}.png"), full_page=True)
    context.close()


def _italian_only(
    page: Page, italian: set[str], where: str, names: frozenset[str] = frozenset()
) -> None:
    """Every word of every visible text on the page is a word of the app's Italian (its
    dictionary, its Italian rules); only data is exempt: names of bots, seats, accounts and
    matches ("seat1-greedy-3fa2c1", "m-…", ``names``), files, numbers and card symbols."""
    unknown: dict[str, str] = {}
    data = set(SAMPLE_BOTS) | names  # the league's bots are the sample bots: names are data
    for text in page.evaluate(VISIBLE_TEXTS_JS):
        bare = re.sub(r"\S*[-\d/_]\S*|\S+\.\S+", " ", text.lower())
        for word in re.findall(r"[a-zà-ÿ]+", bare):
            if word not in italian and word not in data:
                unknown.setdefault(word, text.strip()[:80])
    assert not unknown, f"{where}: words not from the Italian dictionary: {unknown}"


def test_pages_fit_a_phone_and_speak_italian(
    page: Page, site: Site, data_dir: Path, artifacts: Path
) -> None:
    _, url = site
    page.goto(f"{url}/play")
    italian = set(page.evaluate(ITALIAN_WORDS_JS))
    pages = [
        "/leaderboard/belote",
        "/leaderboard/bestia",
        "/matches",
        "/matches/web-league-0003?step=20",
        "/live",
        "/play",
        "/rules/belote",
        "/rules/bestia",
        "/nowhere",
    ]
    for size in PHONES:
        page.set_viewport_size(size)
        for path in pages:
            page.goto(f"{url}{path}")
            page.wait_for_selector("body[data-ready]", state="attached")
            _fits(page, f"{path} at {size['width']} px")
    page.screenshot(path=str(artifacts / "missing-page-phone.png"))
    page.goto(f"{url}/live")
    expect(page.locator("main")).not_to_contain_text("null")
    page.goto(f"{url}/leaderboard/belote")
    page.select_option("select.languages", "it")
    for path in pages:
        page.goto(f"{url}{path}")
        page.wait_for_selector("body[data-ready]", state="attached")
        _italian_only(page, italian, path)
    page.screenshot(path=str(artifacts / "rules-bestia-it-phone.png"), full_page=True)
    # The rules: five numbered sections, Italian here.
    page.goto(f"{url}/rules/belote")
    expect(page.locator("article.rules ol.sections > li")).to_have_count(5)
    page.goto(f"{url}/rules/poker")
    expect(page.locator("p.error")).to_contain_text("poker")
    # The play form shows one game's fields at a time.
    page.goto(f"{url}/play")
    expect(page.locator("fieldset.bestia-seats")).to_be_hidden()
    page.select_option("select[name=game]", "bestia")
    expect(page.locator("fieldset.belote-seats")).to_be_hidden()
    expect(page.locator("fieldset.bestia-seats")).to_be_visible()


def test_everybody_passes_twice_and_the_rules_tab_keeps_the_game(
    browser: Browser, site: Site
) -> None:
    """The person passes in both rounds as every bot does: the verdict says the deal is void,
    the live region said the person's turn and the void deal, and "Deal again" opens a new
    table.  Meanwhile the Full rules tab shows the rules in five sections, and the Table tab
    brings back the game as it was, the request still open."""
    _, url = site
    context = _context(browser)
    context.add_init_script(ANNOUNCED_JS)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(f"{url}/play")
    page.evaluate("localStorage.setItem('bisca.speed', 'instant')")
    assert page.evaluate(RULES_SECTIONS_JS) == dict.fromkeys(
        ["belote.en", "belote.it", "bestia.en", "bestia.it"], 5
    )
    _sit(page, url, query=f"seed={ALL_PASS_SEED}")
    first_table = page.url
    passes = 0
    while not my_turn_or_end(page):
        request = page.get_attribute(".table", "data-request")
        pass_bid = page.locator(".actions button[data-action=pass]")
        assert pass_bid.count(), f"seed {ALL_PASS_SEED}: somebody took; the person plays a card"
        if passes == 0:
            page.click("[role=tab][data-tab=rules]")
            expect(page.locator("#panel-rules ol.sections > li")).to_have_count(5)
            expect(page.locator("#panel-rules h1")).to_contain_text("Belote")
            expect(page.locator("#panel-table")).to_be_hidden()
            expect(page.locator("button.confirm")).to_be_hidden()
            page.click("[role=tab][data-tab=table]")
            expect(page.locator("#panel-rules")).to_be_hidden()
            expect(page.locator("#panel-table")).to_be_visible()
            expect(page.locator(".table")).to_have_attribute("data-request", str(request))
            expect(page.locator(".seat.mine .card")).to_have_count(5)
        pass_bid.click()
        page.click("button.confirm")
        passes += 1
        page.wait_for_selector(f".table:not([data-request='{request}'])")
    assert passes == 2, f"the person passed {passes} times"
    verdict = "Everybody passed twice: the deal is void and nobody scores."
    expect(page.locator(".result .verdict-line")).to_have_text(verdict)
    page.wait_for_function("(text) => window.announced.includes(text)", arg=verdict)
    announced = page.evaluate("window.announced")
    assert any(text.startswith("Your turn: ") for text in announced), announced
    assert "Everybody passed twice: the deal is void." in announced, announced
    # Deal again: a new table (a new shuffle), at once.
    page.click("button.deal-again")
    page.wait_for_url(lambda now: "/play/t-" in now and now != first_table)
    table_id = page.url.rsplit("/", 1)[1]
    expect(page.locator(".table")).to_have_attribute("data-status", re.compile("."))
    expect(page.locator(".result")).to_be_hidden()
    token = page.evaluate("(id) => sessionStorage.getItem(`bisca.table.${id}`)", table_id)
    context.close()
    assert not errors, f"the page raised: {errors}"
    # The new table is played to its end (its first legal actions) so it holds no bots, on
    # a thread of its own (Playwright's loop runs on this one).
    play = f"{url.replace('http://', 'ws://')}/api/tables/{table_id}/play"
    with ThreadPoolExecutor(1) as pool:
        frames = pool.submit(socket_frames, play, {"token": token}, "matchEnded", 200).result()
    assert any("matchEnded" in f.get("server", {}) for f in frames)


@contextmanager
def _answers_held_while_the_rules_open(
    page: Page, start: str, answers: re.Pattern[str]
) -> Iterator[list[Route]]:
    """Open ``start`` with its API ``answers`` held back, follow the link to the rules and
    wait for them; yield the held answers; then let them through, and return once the page
    has read them (an answer asked after them comes after them: one page, one event loop)."""
    held: list[Route] = []
    page.route(answers, lambda route: held.append(route))
    page.goto(start)
    page.click("nav a[href='/rules/belote']")
    expect(page.locator("body[data-page=rules]")).to_be_attached()
    yield held
    for route in held:
        route.continue_()
    page.unroute(answers)
    page.evaluate("() => fetch('/api/leaderboard/belote').then((answer) => answer.json())")


def test_a_page_still_loading_does_not_write_over_the_one_followed_meanwhile(
    page: Page, site: Site
) -> None:
    """The leaderboard's data held back until the person has followed a link to the rules:
    when it comes, the leaderboard (a render no longer current) writes nothing."""
    _, url = site
    with _answers_held_while_the_rules_open(page, url, re.compile(r"/api/leaderboard/")) as held:
        assert len(held) == 2, "the board and its history were both held"
        rules = page.locator("#view").inner_html()
    assert page.locator("#view").inner_html() == rules
    assert page.locator("table.leaderboard").count() == 0
    assert page.evaluate("document.body.dataset.page") == "rules"


def test_a_page_left_while_loading_starts_no_refresh(page: Page, site: Site) -> None:
    """The live list's first answer held back until the person has followed a link to the
    rules: when it comes, the list (a render no longer current) starts no refresh timer (the
    page's clock is Playwright's, run ten seconds on: the list refreshes every two)."""
    _, url = site
    page.clock.install()
    running = re.compile(r"/api/matches\?status=running")
    refreshes: list[str] = []

    def asked(request: Request) -> None:
        if running.search(request.url):
            refreshes.append(request.url)

    with _answers_held_while_the_rules_open(page, f"{url}/live", running) as held:
        assert len(held) == 1, "the live list's first answer was held"
        page.on("request", asked)
    page.clock.run_for(10_000)
    assert refreshes == []


def test_the_sliders_change_the_page_and_persist(page: Page, site: Site) -> None:
    _, url = site
    page.goto(f"{url}/rules/belote")
    main_filter = "getComputedStyle(document.querySelector('main')).filter"
    temperature = "getComputedStyle(document.querySelector('.temperature')).opacity"
    assert page.evaluate(main_filter) == "contrast(1)"
    assert page.evaluate(temperature) == "0"
    expect(page.locator("input[name=contrast]")).to_have_value("50")
    page.locator("input[name=contrast]").fill("100")
    page.locator("input[name=temperature]").fill("90")
    page.locator("input[name=grain]").fill("0")
    assert page.evaluate(main_filter) == "contrast(1.5)"
    assert float(page.evaluate(temperature)) > 0
    page.reload()
    page.wait_for_selector("body[data-ready]", state="attached")
    assert page.evaluate(main_filter) == "contrast(1.5)"
    assert float(page.evaluate(temperature)) > 0
    assert page.evaluate("getComputedStyle(document.querySelector('.grain')).opacity") == "0"
    expect(page.locator("input[name=contrast]")).to_have_value("100")
    expect(page.locator("label.slider-contrast output")).to_have_text("100%")


def test_a_bestia_table_by_clicking_to_its_end_in_italian(
    browser: Browser, site: Site, artifacts: Path
) -> None:
    """A whole Bestia table on a phone, in Italian: each phase named with its help, the
    briscola named, the exchange by selecting cards, the Full rules tab showing Bestia's; each
    hand's summary says who took what, who went to bestia and the chips; the end says the
    result, with no pot left on the table; the live region said the turns and the plays; a
    spectator's live page of the match is Italian too, and fits both phones."""
    arena, url = site
    context = _context(browser, viewport=PHONES[1], has_touch=True)
    context.add_init_script(ANNOUNCED_JS)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    requests = Requests(page)
    page.goto(f"{url}/play")
    page.evaluate(
        "localStorage.setItem('bisca.speed', 'instant');"
        " localStorage.setItem('bisca.language', 'it')"
    )
    italian = set(page.evaluate(ITALIAN_WORDS_JS))
    _sit(page, url, query=f"seed={BESTIA_SEED}", game="bestia")  # the form's greedy bots
    expect(page.locator(".table")).to_have_attribute("data-match", re.compile("."))
    live = _watch(
        browser, url, arena, _match_of(page), speed="instant", language="it", viewport=PHONES[0]
    )
    summaries: list[str] = []
    exchanged = played = rules_seen = False
    turns = 0
    while not my_turn_or_end(page):
        request = str(page.get_attribute(".table", "data-request"))
        _fits(page, "the Bestia table")
        _confirm_in_view(page, "the Bestia table")
        expect(page.locator(".phase-help")).to_contain_text(":")
        if page.locator(".hand-summary:not([hidden])").count():
            summaries.append(page.locator(".hand-summary").inner_text())
        if not rules_seen:
            # The Full rules tab at a Bestia table shows Bestia's, and the table comes back.
            page.click("[role=tab][data-tab=rules]")
            expect(page.locator("#panel-rules h1")).to_contain_text("Bestia")
            expect(page.locator("#panel-rules ol.sections > li")).to_have_count(5)
            page.click("[role=tab][data-tab=table]")
            expect(page.locator(".table")).to_have_attribute("data-request", request)
            rules_seen = True
        legal = [
            next(iter(next(iter(action.values()))))
            for action in requests.requests[_request_id(page)]["legalActions"]
        ]
        bids = page.locator(".actions button:not(.illegal)")
        kinds = [bids.nth(i).get_attribute("data-action") for i in range(bids.count())]
        if "exchange" in legal:
            # Two cards selected, then confirmed: one action, not one button per subset.
            assert not kinds
            expect(page.locator(".phase-help")).to_contain_text("Accomodo")
            # The hand's keys as the exchange has them: Enter drops a card, Tab to Confirm.
            expect(page.locator("#table-keys")).to_contain_text("toglie una carta")
            playable = page.locator(".seat.mine .card.playable")
            playable.nth(0).click()
            playable.nth(1).click()
            expect(page.locator(".seat.mine .card.selected")).to_have_count(2)
            expect(page.locator(".reason")).to_contain_text("cambio")
            page.screenshot(path=str(artifacts / "bestia-exchange.png"))
            exchanged = True
        elif kinds:
            for preferred in ("open", "assist", "call", "pass"):  # stay in, and exchange
                if preferred in kinds:
                    bids.nth(kinds.index(preferred)).click()
                    break
            else:
                bids.first.click()
        else:
            expect(page.locator(".table-info .trump")).to_contain_text("briscola")
            if turns % 3 == 0:
                _italian_only(page, italian, "the Bestia table")
            page.locator(".seat.mine .card.playable").first.click()
            played = True
        page.click("button.confirm")
        turns += 1
        page.wait_for_selector(f".table:not([data-request='{request}'])")
    assert exchanged and played, f"seed {BESTIA_SEED}: the person never exchanged and played"
    # The hand the person assisted in and took no trick of: the opener made the two tricks.
    assert any(
        "va in bestia e paga 40 gettoni" in text
        and "4 prese" in text
        and "ha fatto le due prese" in text
        for text in summaries
    ), summaries
    expect(page.locator(".result .verdict-line")).to_have_text(
        "Hai finito in testa con +40 gettoni."
    )
    expect(page.locator(".hand-summary")).to_contain_text("Smazzata 4")
    expect(page.locator(".hand-summary")).to_contain_text("ha battuto da solo e prende il piatto")
    expect(page.locator(".result li")).to_have_count(4)
    expect(page.locator(".table-info .pot")).to_have_count(0)  # no pot once the match is over
    _fits(page, "the end of the Bestia table")
    _italian_only(page, italian, "the end of the Bestia table")
    page.screenshot(path=str(artifacts / "bestia-over-it.png"), full_page=True)
    page.wait_for_function(
        "() => window.announced.includes(document.querySelector('.verdict-line').textContent)"
    )
    announced = page.evaluate("window.announced")
    assert any(text.startswith("Tocca a te: ") for text in announced), announced
    assert any(re.search(r" gioca .+\.$", text) for text in announced), announced
    context.close()
    assert not errors, f"the page raised: {errors}"
    # The spectator saw the same match to its end, in Italian, on a phone.
    expect(live.locator(".live-status")).to_have_attribute("data-over", "true")
    expect(live.locator(".live-status")).to_contain_text("La partita è finita.")
    for size in PHONES:
        live.set_viewport_size(size)
        _fits(live, f"the live Bestia match at {size['width']} px")
    _italian_only(live, italian, "the live Bestia match")
    live.context.close()


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
    _no_serious_violation(page, "the leaderboard")
    page.select_option("select.languages", "it")
    expect(page.locator("h1")).to_have_text("Classifica di Belote")
    page.screenshot(path=str(artifacts / "leaderboard-it.png"), full_page=True)
    page.select_option("select.languages", "en")
