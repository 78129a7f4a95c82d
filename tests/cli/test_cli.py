"""The command line: bots, serve (settings file, unix socket), match, and their bad input."""

from __future__ import annotations

import contextlib
import io
import shlex
import sqlite3
from pathlib import Path

from bisca.server import cli
from bisca.server.cli._config import load_settings
from bisca.v1 import arena_pb2 as pb
from bisca.v1 import belote_pb2
from tests.support.arena import start_server, stop_arena
from tests.support.commands import bisca, sample_bot


def test_bots_add_prints_the_token_once_and_keeps_only_its_hash(tmp_path: Path) -> None:
    added = bisca("bots", "add", "alpha", "--data", str(tmp_path))
    assert added.returncode == 0
    token = added.stdout.strip().splitlines()[-1]
    assert token.startswith("bisca_") and len(token) > 30
    database = (tmp_path / "bisca.sqlite3").read_bytes()
    assert token.encode() not in database
    with sqlite3.connect(tmp_path / "bisca.sqlite3") as db:
        assert db.execute("SELECT name FROM bots").fetchall() == [("alpha",)]
    again = bisca("bots", "add", "alpha", "--data", str(tmp_path))
    assert again.returncode == 1 and "already registered" in again.stderr
    bad = bisca("bots", "add", "no spaces!", "--data", str(tmp_path))
    assert bad.returncode == 1 and "bad bot name" in bad.stderr
    # A hosted version's name (the league registers it at the version's intake) is kept.
    for kept in ("alpha.v2", "Alpha.V2", "alpha.vl"):  # the last reads as alpha.v1
        version = bisca("bots", "add", kept, "--data", str(tmp_path))
        assert version.returncode == 1 and "reads as a hosted version's name" in version.stderr
    for free in ("alpha.v2b", "my.bot.v2", "alpha.v0"):  # no version's name reads so
        added_free = bisca("bots", "add", free, "--data", str(tmp_path))
        assert added_free.returncode == 0, added_free.stderr
    listed = bisca("bots", "list", "--data", str(tmp_path))
    assert listed.stdout.startswith("alpha") and token not in listed.stdout


def test_a_bad_settings_file_is_refused_naming_the_problem(tmp_path: Path) -> None:
    cases = {
        "[server]\nlisten = 5\n": "server.listen must be a list",
        "[server]\nport = 1\n": "unknown key(s) server.port",
        "[clock]\npolicy = 'sometimes'\n": "unknown timeout policy 'sometimes'",
        "[clock]\nmove_ms = 0\n": "move time must be",
        "[nope]\n": "unknown section(s) nope",
        "[server\n": "not valid TOML",
        # Review s57c: a NUL in a path was a traceback from open().
        '[server]\ndata_dir = "a\\u0000b"\n': "server.data_dir holds a NUL character",
        '[server]\ntls_cert = "a\\u0000b"\n': "server.tls_cert holds a NUL character",
        "[server]\nlisten = []\n": "server.listen names no address",
    }
    for text, message in cases.items():
        config = tmp_path / "bisca.toml"
        config.write_text(text)
        # In this process (the same code path as the command, without a start-up per case):
        # the settings are refused before anything is served.
        errors = io.StringIO()
        with contextlib.redirect_stderr(errors):
            code = cli.main(["serve", "--config", str(config), "--data", str(tmp_path / "d")])
        assert code == 2, text
        assert message in errors.getvalue() and str(config) in errors.getvalue(), errors.getvalue()


def test_the_example_settings_file_is_read_as_documented() -> None:
    """``examples/bisca.toml``, which the README and docs/operating.md point to, loads, and its
    values are the ones its comments give."""
    example = Path(__file__).resolve().parents[2] / "examples" / "bisca.toml"
    settings = load_settings(example)
    assert settings.listen == ["127.0.0.1:50051"] and settings.unix == "/tmp/bisca.sock"
    assert settings.data_dir == "bisca-data"
    assert (settings.hello_timeout_s, settings.join_timeout_s) == (10, 60)
    assert (settings.clock.move_ms, settings.clock.bank_ms) == (5000, 30000)
    assert settings.tls_cert is None


def _refused_here(*argv: str) -> tuple[int, str]:
    """``bisca ARGV`` in this process, for a command refused before it starts anything: its
    exit code (argparse's ``SystemExit`` included) and its stderr."""
    errors = io.StringIO()
    with contextlib.redirect_stderr(errors):
        try:
            code = cli.main(list(argv))
        except SystemExit as exit:
            code = exit.code if isinstance(exit.code, int) else 1
    return code, errors.getvalue()


def test_bad_match_options_are_refused(tmp_path: Path) -> None:
    wrong_count = bisca("match", "--game", "belote", "--bot", "random", "--data", str(tmp_path))
    assert wrong_count.returncode == 2 and "needs 4 --bot, got 1" in wrong_count.stderr
    code, stderr = _refused_here(
        "match",
        "--game",
        "belote",
        *["--bot", "random"] * 4,
        "--timeout-policy",
        "strikes",
        "--data",
        str(tmp_path),
    )
    assert code == 2 and "strikes needs a count" in stderr
    code, stderr = _refused_here(
        "match",
        "--game",
        "bestia",
        *["--bot", "random"] * 4,
        "--set",
        "ante_mode=everyone",
        "--data",
        str(tmp_path),
    )
    assert code == 2 and "ante_mode" in stderr


def test_serve_with_a_settings_file_and_a_unix_socket(tmp_path: Path) -> None:
    data = tmp_path / "data"
    socket = tmp_path / "bisca.sock"
    config = tmp_path / "bisca.toml"
    config.write_text(
        f'[server]\nlisten = ["127.0.0.1:0"]\nunix = "{socket}"\ndata_dir = "{data}"\n'
        "[clock]\nmove_ms = 4000\nbank_ms = 1000\npolicy = 'strikes:2'\n"
    )
    names, tokens = [], []
    for n in range(4):
        added = bisca("bots", "add", f"u{n}", "--data", str(data))
        names.append(f"u{n}")
        tokens.append(added.stdout.strip().splitlines()[-1])
    # Where to listen and the data directory come from the settings file alone.
    arena, addresses = start_server(tmp_path, data, "serve", "--config", str(config))
    try:
        assert f"unix:{socket}" in addresses, addresses
        arena.address = f"unix:{socket}"  # the bots and the operator below go through it
        for token in tokens:
            arena.launch(token, *sample_bot("random", "belote"))
        info = arena.stub.CreateMatch(
            pb.CreateMatchRequest(
                game=pb.GAME_BELOTE,
                bots=names,
                settings=pb.GameSettings(belote=belote_pb2.Settings(deals=1)),
            ),
            metadata=arena.auth,
        )
        # The match takes the settings file's clock.
        assert info.clock.move_ms == 4000 and info.clock.policy == pb.TIMEOUT_POLICY_STRIKES
        assert info.clock.strikes == 2
        info = arena.wait(info.match_id, timeout=60)
        assert info.status == pb.MATCH_STATUS_FINISHED
    finally:
        stop_arena(arena)


def test_a_bot_is_seated_only_in_a_game_its_hello_lists(tmp_path: Path) -> None:
    belote_only = shlex.join(sample_bot("random", "belote"))
    refused = bisca(
        "match",
        "--game",
        "bestia",
        *["--bot", belote_only],
        *["--bot", "random"] * 3,
        "--rounds",
        "1",
        "--no-sandbox",
        "--data",
        str(tmp_path),
    )
    assert refused.returncode == 1, refused.stdout + refused.stderr
    assert "failed, 0 steps" in refused.stdout
    assert "does not play bestia: its Hello lists belote" in refused.stdout
