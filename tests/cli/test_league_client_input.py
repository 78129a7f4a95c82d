"""Bad input to the league client commands (``submit``, ``submission``, ``retire``,
``ladder``, ``account``) and to ``new-bot`` is one line naming what was wrong, exit 1, never a
traceback: a malformed ``--server``, a token with a line break, a bot name that is no URL path
part, no terminal to read a password on, a ``--ca`` file that is missing or no certificate, a
``--name`` no starter could carry, a dangling link where a starter's file goes.

No league server runs: a call that must not be made fails at ``127.0.0.1:1`` (nothing
listens there), or goes to a stand-in for ``urlopen`` that records its URL.
"""

from __future__ import annotations

import ast
import http.server
import os
import re
import subprocess
import threading
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from bisca.server.cli import main
from tests.support.commands import BISCA

#: Where nothing listens: a call that gets this far fails with "cannot reach".
NOWHERE = "http://127.0.0.1:1"
#: The clone the tests run in, whose SDKs ``new-bot``'s Node and C++ starters name.
CLONE = Path(__file__).resolve().parents[2]
#: A name with every character a starter's string literals must escape.
AWKWARD_NAME = "a b \"c' `${x}` \\n \\ @CPP_BUILD@ é"


@pytest.fixture(autouse=True)
def no_account_secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("BISCA_ACCOUNT_TOKEN", raising=False)
    monkeypatch.delenv("BISCA_PASSWORD", raising=False)


@pytest.fixture
def sent(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The URLs the commands call, none of them reached."""
    urls: list[str] = []

    def record(request: urllib.request.Request, *args: object, **kwargs: object) -> object:
        urls.append(request.full_url)
        raise urllib.error.URLError("not reached in this test")

    monkeypatch.setattr(urllib.request, "urlopen", record)
    return urls


def refused(capsys: pytest.CaptureFixture[str], command: str, argv: list[str]) -> str:
    """Run ``bisca ARGV``, which must fail with one line on stderr, ``bisca COMMAND: ...``."""
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and err.startswith(f"bisca {command}: "), err
    return err.strip()


def bot_folder(tmp_path: Path) -> Path:
    """A folder ``bisca submit`` packs (its manifest is all it checks before the call)."""
    folder = tmp_path / "nb"
    folder.mkdir()
    (folder / "bisca-bot.toml").write_text('name = "nb"\n')
    return folder


@pytest.mark.parametrize(
    "server",
    ["notaurl", "http://[::1", "ftp://league.example", "http://league.example:port", "http://"],
)
def test_a_malformed_server_url_is_named(
    server: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], sent: list[str]
) -> None:
    folder = str(bot_folder(tmp_path))
    line = refused(capsys, "submit", ["submit", folder, "--server", server, "--token", "x"])
    assert f"--server {server!r}" in line
    line = refused(
        capsys, "ladder show", ["ladder", "show", "bot", "--server", server, "--token", "x"]
    )
    assert f"--server {server!r}" in line
    assert sent == []


def test_a_token_with_a_line_break_is_refused_unprinted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = str(bot_folder(tmp_path))
    line = refused(
        capsys, "submit", ["submit", folder, "--server", NOWHERE, "--token", "secret42\r"]
    )
    assert "--token" in line and "secret42" not in line
    monkeypatch.setenv("BISCA_ACCOUNT_TOKEN", "secret42\n")
    line = refused(capsys, "submission", ["submission", "bot", "--server", NOWHERE])
    assert "$BISCA_ACCOUNT_TOKEN" in line and "secret42" not in line


@pytest.mark.parametrize(
    ("command", "argv", "path"),
    [
        ("submission", ["submission", "a b"], "/api/bots/a%20b"),
        ("submission", ["submission", "nb/versions/1"], "/api/bots/nb%2Fversions%2F1"),
        ("submission", ["submission", "a b", "2"], "/api/bots/a%20b/versions/2"),
        ("retire", ["retire", "a b", "1"], "/api/bots/a%20b/versions/1/retire"),
        # A version as the pages write it, as `bisca ladder` takes it (review 53).
        ("retire", ["retire", "nb", "v2"], "/api/bots/nb/versions/2/retire"),
        ("submission", ["submission", "nb", "v3"], "/api/bots/nb/versions/3"),
        ("account", ["account", "connect", "a b"], "/api/bots/a%20b/connect"),
        ("account", ["account", "token", "revoke", "1/2"], "/api/account/tokens/1%2F2"),
    ],
)
def test_a_bot_name_is_one_quoted_part_of_the_path(
    command: str, argv: list[str], path: str, capsys: pytest.CaptureFixture[str], sent: list[str]
) -> None:
    line = refused(capsys, command, [*argv, "--server", NOWHERE, "--token", "x"])
    assert "cannot reach" in line
    assert sent == [NOWHERE + path]


def test_no_terminal_and_no_password_variable_is_said() -> None:
    """Its own session has no controlling terminal, its stdin is /dev/null: getpass has
    nowhere to read a password (it used to end in EOFError's traceback)."""
    environment = {
        key: value
        for key, value in os.environ.items()
        if key not in ("BISCA_PASSWORD", "BISCA_ACCOUNT_TOKEN")
    }
    done = subprocess.run(
        [*BISCA, "account", "create", "bob", "--server", NOWHERE],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        env=environment,
        start_new_session=True,
    )
    assert done.returncode == 1
    assert done.stderr == (
        "bisca account: no password: it is read from the terminal, or from $BISCA_PASSWORD\n"
    )


@pytest.mark.parametrize(
    ("argv", "named"),
    [
        (["account", "create", "bob", "--server", "notaurl"], "--server 'notaurl'"),
        (["account", "create", "b b", "--server", NOWHERE], "bad account name 'b b'"),
        (["account", "create", "bob", "--server", NOWHERE, "--ca", "/no/such.pem"], "--ca"),
        (["account", "token", "create", "bob", "--server", "notaurl"], "--server 'notaurl'"),
    ],
)
def test_what_can_be_checked_is_before_the_password_is_asked(
    argv: list[str],
    named: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    sent: list[str],
) -> None:
    def asked(prompt: str = "") -> str:
        raise AssertionError(f"asked {prompt!r} before the options were checked")

    monkeypatch.setattr("getpass.getpass", asked)
    assert named in refused(capsys, "account", argv)
    assert sent == []


def test_a_ca_file_that_cannot_be_used_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], sent: list[str]
) -> None:
    folder = str(bot_folder(tmp_path))
    missing = tmp_path / "missing.pem"
    not_pem = tmp_path / "hostname"
    not_pem.write_text("not a certificate\n")
    for ca in (missing, not_pem):
        argv = ["submit", folder, "--server", "https://league.example", "--token", "x"]
        line = refused(capsys, "submit", [*argv, "--ca", str(ca)])
        assert f"--ca {ca}: " in line
    assert sent == []


def _python_name(source: str) -> str:
    """The ``name=`` the Python starter passes to ``run`` (parsing it is the first check)."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.keyword) and node.arg == "name":
            assert isinstance(node.value, ast.Constant)
            return str(node.value.value)
    raise AssertionError("no name= in the starter")


def _undo_backslashes(literal: str) -> str:
    """A string literal's text with its ``\\X`` escapes undone, as JavaScript and C++ read the
    ones the starters use (``\\\\``, ``\\"``, ``\\'``, ``\\```, ``\\$``)."""
    return re.sub(r"\\(.)", r"\1", literal)


def test_any_printable_name_is_a_string_literal_in_every_starter(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for language in ("python", "node", "cpp"):
        folder = tmp_path / language
        argv = ["new-bot", language, str(folder), "--name", AWKWARD_NAME, "--clone", str(CLONE)]
        assert main(argv) == 0, capsys.readouterr().err
    python = (tmp_path / "python" / "my_bot.py").read_text(encoding="utf-8")
    assert _python_name(python) == AWKWARD_NAME
    docstring = ast.get_docstring(ast.parse(python), clean=False)
    assert docstring is not None and docstring.startswith(f"{AWKWARD_NAME}: ")

    node = (tmp_path / "node" / "my_bot.js").read_text(encoding="utf-8")
    quoted = re.search(r"name: '((?:[^'\\]|\\.)*)', games", node)
    assert quoted is not None and _undo_backslashes(quoted[1]) == AWKWARD_NAME
    template = re.search(r"console\.error\(`((?:[^`\\$]|\\.)*): \$\{error", node)
    assert template is not None and _undo_backslashes(template[1]) == AWKWARD_NAME

    cpp = (tmp_path / "cpp" / "my_bot.cpp").read_text(encoding="utf-8")
    literals = re.findall(r'(?:options\.name = |std::cerr << )"((?:[^"\\]|\\.)*?)(?:: )?"', cpp)
    assert len(literals) == 3 and {_undo_backslashes(text) for text in literals} == {AWKWARD_NAME}


@pytest.mark.parametrize(
    ("name", "said"),
    [("", "--name '' is empty"), ("a\nb", "--name 'a\\nb' holds a control character")],
)
def test_a_name_no_starter_can_carry_is_refused(
    name: str, said: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "bot"
    line = refused(capsys, "new-bot", ["new-bot", "python", str(folder), "--name", name])
    assert said in line
    assert not folder.exists()


def test_a_dangling_link_in_the_folder_exists_already(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "bot"
    folder.mkdir()
    elsewhere = tmp_path / "elsewhere.py"
    (folder / "my_bot.py").symlink_to(elsewhere)
    line = refused(capsys, "new-bot", ["new-bot", "python", str(folder)])
    assert line == f"bisca new-bot: {folder / 'my_bot.py'} exists already; choose another folder"
    assert not elsewhere.exists() and not (folder / "bisca-bot.toml").exists()


def test_a_server_that_is_no_league_is_named_not_printed(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Review s57c: ``--server`` naming another HTTP server printed its whole HTML page, or
    ``HTTP 404`` naming nothing.  The command names the URL that answered and its status, and
    asks whether it is a league's app; a league's own refusal (its JSON) is said as before."""

    class NotALeague(http.server.BaseHTTPRequestHandler):
        def _page(self, status: int) -> None:
            body = b"<!DOCTYPE HTML><html><body><p>Error code: %d</p></body></html>" % status
            self.send_response(status)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:
            self._page(200 if self.path.startswith("/api/bots/") else 404)

        def do_POST(self) -> None:
            self._page(501)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), NotALeague)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        said = refused(
            capsys, "submission", ["submission", "mybot", "--server", url, "--token", "x"]
        )
        assert said == (
            f"bisca submission: {url}/api/bots/mybot answered 200 without a Bisca league's "
            f"JSON: is --server {url} a Bisca league's app?"
        )
        said = refused(capsys, "retire", ["retire", "mybot", "2", "--server", url, "--token", "x"])
        assert f"{url}/api/bots/mybot/versions/2/retire answered HTTP 501 without" in said
        assert "<html>" not in said.lower()
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)
