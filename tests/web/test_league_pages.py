"""The league's pages in Debian's chromium, as a stranger uses them: sign up in the browser
(the session survives a reload), upload the folder ``bisca new-bot python`` wrote (packed into
a .tar.gz by the page), watch the version go through the gate to ``active`` with its steps'
output, submit a second version and see both side by side, both rated by the ladder's matches
against three connected bots, one match's stderr opened by its owner; a second account is
refused the first one's steps (403).  Every page in Italian from the dictionary, axe-core's
audit, and no page wider than a phone.

Screenshots go to ``tests/web/artifacts/`` (git-ignored).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import (
    Browser,
    BrowserContext,
    Page,
    Response,
    expect,
)

from bisca.server.accounts import pack_folder
from tests.support.arena import Arena, stop_arena
from tests.support.commands import bisca
from tests.support.league import open_ladder_league

from .support import app_url
from .test_browser import (
    ITALIAN_WORDS_JS,
    PHONES,
    WAIT_MS,
    _fits,
    _italian_only,
    _no_serious_violation,
)

PASSWORD = "a long enough password"
#: The gate builds, checks and plays a validation match: minutes on a loaded machine.
GATE_MS = 300_000
#: The order of the gate's states; a version's page may miss a short one between two polls.
GATE = ["building", "checking", "validating", "active"]
#: The accounts whose connected bots (sample bots dialing in, Lichess style) fill the ladder's
#: Belote table beside ada's versions: the ladder pairs four different bots.
FILLERS = ("cy", "dee", "fay")
NAMES = frozenset({"ada", "adabot", "eve", *FILLERS, *(f"{name}bot" for name in FILLERS)})
#: The ladder at the pace of a test: a draw every half second, one match a draw.
LADDER = (
    *("--ladder", "matches_per_hour=60", "--ladder", "duplicate=false"),
    *("--ladder", "poll_s=0.5"),
)

League = tuple[Arena, str]


@pytest.fixture(scope="module")
def league(tmp_path_factory: pytest.TempPathFactory) -> Iterator[League]:
    """``bisca serve`` with a league open to strangers and its ladder, three connected bots of
    other accounts online, and the app's URL."""
    tmp = tmp_path_factory.mktemp("web-league-open")
    data = tmp / "data"
    arena = open_ladder_league(tmp, data, FILLERS, LADDER)
    try:
        yield arena, app_url(arena)
    finally:
        stop_arena(arena)


def _context(browser: Browser) -> BrowserContext:
    # bypass_csp: axe-core is injected by the test as an inline script.
    context = browser.new_context(viewport={"width": 1100, "height": 900}, bypass_csp=True)
    context.set_default_timeout(WAIT_MS)
    return context


def _sign_up(page: Page, url: str, name: str) -> None:
    page.goto(url)
    page.click("nav a.account")  # the league open to strangers shows its account pages
    page.wait_for_url(re.compile(r"/account$"))
    form = page.locator("form.sign-up")
    form.locator("input[name=name]").fill(name)
    form.locator("input[name=password]").fill(PASSWORD)
    form.locator("button[type=submit]").click()
    expect(page.locator("h1")).to_have_text(f"Your account: {name}")


class States:
    """Every state of a version the page was answered while it followed the gate."""

    def __init__(self, page: Page, bot: str) -> None:
        self.seen: dict[int, list[str]] = {}
        page.on("response", self._response)
        self.path = f"/api/bots/{bot}"

    def _response(self, response: Response) -> None:
        if not response.url.endswith(self.path) or response.status != 200:
            return
        for version in json.loads(response.body())["versions"]:
            states = self.seen.setdefault(int(version["version"]), [])
            if not states or states[-1] != version["state"]:
                states.append(version["state"])


def _through_the_gate(page: Page, version: int) -> None:
    card = page.locator(f".version[data-version='{version}']")
    expect(card).to_have_attribute("data-state", "active", timeout=GATE_MS)


def test_a_stranger_signs_up_uploads_a_bot_and_reads_its_own_steps(
    browser: Browser, league: League, tmp_path: Path, artifacts: Path
) -> None:
    _, url = league
    made = bisca("new-bot", "python", str(tmp_path / "adabot"))
    assert made.returncode == 0, made.stderr
    context = _context(browser)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    _sign_up(page, url, "ada")
    page.reload()  # the session is a cookie: it survives the reload
    expect(page.locator("h1")).to_have_text("Your account: ada")
    _no_serious_violation(page, "the account page")
    states = States(page, "adabot")

    # The folder, as a person picks it: the page packs it into a .tar.gz and sends it.
    page.set_input_files("input[name=folder]", str(tmp_path / "adabot"))
    page.click("form.upload button[type=submit]")
    page.wait_for_url(re.compile(r"/bots/adabot$"))
    expect(page.locator(".version")).to_have_count(1)
    page.screenshot(path=str(artifacts / "bot-in-the-gate.png"))
    _through_the_gate(page, 1)
    seen = states.seen[1]
    assert seen[0] == "building" and seen[-1] == "active", seen
    assert seen == [state for state in GATE if state in seen], f"out of the gate's order: {seen}"
    assert len(seen) >= 3, f"the page followed too little of the gate: {seen}"

    # Its steps' output, its owner's: unpack, build, check-bot, the validation match, passed.
    page.click(".version[data-version='1'] a")
    page.wait_for_url(re.compile(r"/bots/adabot/v1$"))
    expect(page.locator(".step")).to_have_count(4)
    for step in ("unpack", "build", "check", "validation"):
        expect(page.locator(f".step[data-step='{step}']")).to_have_attribute("data-passed", "true")
    expect(page.locator(".step[data-step='check'] pre")).not_to_be_empty()
    _no_serious_violation(page, "a version's page")
    page.screenshot(path=str(artifacts / "version-steps.png"), full_page=True)

    # Version 2, from the bot's page: both side by side, each through the gate.
    bot_file = tmp_path / "adabot" / "my_bot.py"
    bot_file.write_text(bot_file.read_text() + "\n# version 2\n")
    page.goto(f"{url}/bots/adabot")
    page.set_input_files("input[name=folder]", str(tmp_path / "adabot"))
    page.click("form.upload button[type=submit]")
    expect(page.locator(".version")).to_have_count(2)
    _through_the_gate(page, 2)
    _through_the_gate(page, 1)
    expect(page.locator(".version h3")).to_have_text(["adabot v1", "adabot v2"])

    # The ladder plays both against the connected bots: each version rated, side by side.
    for version in (1, 2):
        rating = page.locator(f".version[data-version='{version}'] .rating[data-game='belote']")
        expect(rating).to_be_visible(timeout=GATE_MS)
    _no_serious_violation(page, "a bot's page")
    page.screenshot(path=str(artifacts / "bot-two-versions.png"), full_page=True)

    # A version's own page: its ladder matches, and one match's stderr and stdout of its seat
    # (its owner's).
    page.goto(f"{url}/bots/adabot/v1")
    stderr = page.locator(".ladder-matches li a[href*='/stderr']").first
    expect(stderr).to_be_visible()
    expect(page.locator(".counts")).to_be_visible()
    stderr_path = stderr.get_attribute("href")
    assert stderr_path is not None
    stdout = page.locator(".ladder-matches li a[href*='/stdout']").first
    expect(stdout).to_be_visible()
    assert stdout.get_attribute("href") == stderr_path.removesuffix("stderr") + "stdout"
    for path in (stderr_path, stderr_path.removesuffix("stderr") + "stdout"):
        own = page.request.get(f"{url}{path}")
        assert own.status == 200 and own.text().startswith("--- adabot.v1, seat "), own.text()[:200]

    # In Italian, every word from the dictionary, and no page wider than a phone.
    page.goto(f"{url}/account")
    page.evaluate("localStorage.setItem('bisca.language', 'it')")
    italian = set(page.evaluate(ITALIAN_WORDS_JS))
    for path in ("/account", "/bots/adabot", "/bots/adabot/v1"):
        page.goto(f"{url}{path}")
        page.wait_for_selector("body[data-ready]", state="attached")
        _italian_only(page, italian, path, NAMES)
        for size in PHONES:
            page.set_viewport_size(size)
            _fits(page, f"{path} at {size['width']} px")
        page.set_viewport_size({"width": 1100, "height": 900})
    page.screenshot(path=str(artifacts / "version-steps-it.png"), full_page=True)

    # Another account sees the versions, but not their steps: 403, said in words.
    other = _context(browser)
    eve = other.new_page()
    _sign_up(eve, url, "eve")
    refused = eve.request.get(f"{url}/api/bots/adabot/versions/1")
    assert refused.status == 403, refused.text()
    assert eve.request.get(f"{url}{stderr_path}").status == 403  # nor its stderr
    assert eve.request.get(f"{url}{stderr_path.removesuffix('stderr')}stdout").status == 403
    eve.goto(f"{url}/bots/adabot")
    expect(eve.locator(".version")).to_have_count(2)
    expect(eve.locator(".version a")).to_have_count(0)
    eve.goto(f"{url}/bots/adabot/v1")
    expect(eve.locator(".forbidden")).to_contain_text("Only its owner")
    expect(eve.locator(".step")).to_have_count(0)
    _no_serious_violation(eve, "a version's page refused")
    eve.screenshot(path=str(artifacts / "version-refused.png"))

    # A ready .tar.gz whose bot crashes: failed at check-bot, the report shown to its owner.
    broken = tmp_path / "evebot"
    assert bisca("new-bot", "python", str(broken)).returncode == 0
    script = broken / "my_bot.py"
    head, future, rest = script.read_text().rpartition("from __future__ import annotations\n")
    script.write_text(head + future + "raise SystemExit('evebot gives up at once')\n" + rest)
    archive = tmp_path / "evebot.tar.gz"
    archive.write_bytes(pack_folder(broken))
    eve.goto(f"{url}/account")
    eve.set_input_files("input[name=archive]", str(archive))
    expect(eve.locator(".chosen")).to_have_text(["", "1 file chosen"])
    eve.click("form.upload button[type=submit]")
    eve.wait_for_url(re.compile(r"/bots/evebot$"))
    card = eve.locator(".version[data-version='1']")
    expect(card).to_have_attribute("data-state", "failed", timeout=GATE_MS)
    expect(card.locator("pre.reason-text")).to_contain_text("check failed")
    eve.click(".version[data-version='1'] a")
    expect(eve.locator(".step[data-step='check']")).to_have_attribute("data-passed", "false")
    expect(eve.locator(".step[data-step='check'] pre")).to_contain_text("FAIL")
    eve.screenshot(path=str(artifacts / "version-failed.png"), full_page=True)
    other.close()
    context.close()
    assert not errors, f"the page raised: {errors}"
