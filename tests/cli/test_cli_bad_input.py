"""Bad input on the command line gets one clear sentence naming what was wrong, never a
Python traceback."""

from __future__ import annotations

import os
import socket
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from bisca.server.logs import MAX_LOG_BYTES
from bisca.v1 import arena_pb2
from tests.support.arena import start_arena, start_server, stop_arena, stop_server
from tests.support.commands import BISCA, bisca
from tests.tournament.support import tournament_text

FOUR_RANDOM = ["--bot", "random"] * 4


@pytest.fixture
def not_a_directory(tmp_path: Path) -> Path:
    path = tmp_path / "a-file"
    path.write_text("not a directory\n")
    return path


@pytest.fixture
def not_a_database(tmp_path: Path) -> Path:
    path = tmp_path / "garbage"
    path.mkdir()
    (path / "bisca.sqlite3").write_bytes(b"this is not an SQLite database\n" * 8)
    return path


def _refused(result: object, code: int, *needles: str) -> None:
    stderr = result.stderr  # type: ignore[attr-defined]
    assert result.returncode == code, stderr  # type: ignore[attr-defined]
    assert "Traceback" not in stderr, stderr
    for needle in needles:
        assert needle in stderr, stderr


def test_a_data_directory_that_is_a_file_is_named(not_a_directory: Path) -> None:
    data = str(not_a_directory)
    _refused(bisca("bots", "add", "x", "--data", data), 1, data, "not a directory")
    _refused(
        bisca("match", "--game", "belote", *FOUR_RANDOM, "--data", data), 2, data, "not a directory"
    )


def test_a_store_that_is_not_a_database_is_named(not_a_database: Path) -> None:
    data = str(not_a_database)
    store = str(not_a_database / "bisca.sqlite3")
    _refused(bisca("bots", "list", "--data", data), 1, store, "not a database")
    _refused(bisca("leaderboard", "--game", "belote", "--data", data), 1, store, "not a database")
    _refused(bisca("serve", "--listen", "127.0.0.1:0", "--data", data), 1, store, "not a database")


def test_an_address_serve_cannot_listen_on_is_named(tmp_path: Path) -> None:
    data = str(tmp_path / "data")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        address = f"127.0.0.1:{taken.getsockname()[1]}"
        _refused(
            bisca("serve", "--listen", address, "--data", data, timeout=30),
            1,
            f"cannot listen on {address}",
            "in use",
        )
    _refused(
        bisca("serve", "--listen", "nonsense", "--data", data, timeout=30),
        2,  # a usage error, refused before anything is made
        "cannot listen on nonsense",
        "HOST:PORT",
    )
    missing = tmp_path / "no-such-dir" / "bisca.sock"
    _refused(
        bisca("serve", "--listen", "127.0.0.1:0", "--unix", str(missing), "--data", data),
        1,
        f"cannot listen on unix:{missing}",
        f"no directory {missing.parent}",
    )


@pytest.mark.system
def test_a_port_or_socket_another_server_answers_on_is_refused(tmp_path: Path) -> None:
    """Review s59b, H1 and H2: grpc's SO_REUSEPORT let a second server bind the port of a
    running one (the kernel split the clients between them), and grpc replaced the socket file
    of a running one's ``--unix`` (and removed it as it stopped).  Both are refused now,
    naming the address; a stale socket file, nobody answering on it, is still replaced."""
    first_socket = tmp_path / "first.sock"
    arena, _ = start_arena(tmp_path / "first", "--unix", str(first_socket))
    try:
        data = str(tmp_path / "second")
        taken = bisca("serve", "--listen", arena.address, "--data", data, timeout=30)
        _refused(taken, 1, f"cannot listen on {arena.address}", "in use")
        over = bisca(
            *["serve", "--listen", "127.0.0.1:0", "--unix", str(first_socket), "--data", data],
            timeout=30,
        )
        _refused(over, 1, f"cannot listen on unix:{first_socket}", "a server answers on it")
        assert first_socket.is_socket()
        assert (
            arena.stub.ListMatches(arena_pb2.ListMatchesRequest(), metadata=arena.auth, timeout=30)
            is not None
        )
    finally:
        stop_arena(arena)
    stale = tmp_path / "stale.sock"
    with socket.socket(socket.AF_UNIX) as gone:
        gone.bind(str(stale))  # its file stays once it is closed, nobody listening
    server = start_server(
        tmp_path,
        tmp_path / "third",
        *[
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--unix",
            str(stale),
            "--data",
            str(tmp_path / "third"),
        ],
    )[0]
    stop_server(server.process, [], tmp_path)


def test_a_settings_file_that_cannot_be_read_is_named(tmp_path: Path) -> None:
    binary = tmp_path / "binary.toml"
    binary.write_bytes(b"\xff\xfe[server]\n")
    for config in (tmp_path, binary):
        result = bisca("serve", "--config", str(config), "--data", str(tmp_path / "data"))
        _refused(result, 2, f"{config}: cannot read it")


def test_a_match_bot_command_that_does_not_exist_is_named_at_once(tmp_path: Path) -> None:
    """Not after the 30 s join timeout, and with the reason."""
    missing = str(tmp_path / "no-such-bot")
    result = bisca(
        "match",
        "--game",
        "belote",
        *["--bot", missing, "--bot", "random", "--bot", "random", "--bot", "random"],
        "--data",
        str(tmp_path / "data"),
        timeout=20,
    )
    assert result.returncode == 1, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    assert "failed" in result.stdout
    # Found before it is spawned (the one bot-process mechanism checks the program first).
    assert f"seat 0's bot could not start {missing}: [Errno 2] No such file or directory" in (
        result.stdout
    )


@pytest.mark.system
@pytest.mark.parametrize("slip", ["misspelt sample bot", "script not executable", "no run()"])
def test_a_bot_authors_common_slips_say_what_to_do(tmp_path: Path, slip: str) -> None:
    """Review 45 (L7): each reason said what went wrong but not what to do about it."""
    script = tmp_path / "my_bot.py"
    if slip == "misspelt sample bot":
        command = "rnadom"
        said = (
            "seat 0's bot could not start rnadom: [Errno 2] No such file or directory: 'rnadom' "
            "(not on PATH; the sample bots are random, greedy, pimc)"
        )
    elif slip == "script not executable":
        script.write_text("print('hello')\n")
        script.chmod(0o644)
        command = str(script)
        said = f"(run it with .venv/bin/python: .venv/bin/python {script}; or chmod +x {script})"
    else:  # a strategy that is never handed to the SDK: the script ends at once, saying nothing
        script.write_text("def choose(request):\n    return request.legal_actions[0]\n")
        command = f"{sys.executable} {script}"
        said = (
            "seat 0's bot exited with status 0 before the match started; it never connected: "
            "does it call run()?"
        )
    result = bisca(
        *("match", "--game", "belote", "--deals", "1", "--no-sandbox", "--bot", command),
        *["--bot", "random"] * 3,
        *("--data", str(tmp_path / "data")),
        timeout=60,
    )
    assert result.returncode == 1, result.stdout + result.stderr
    assert said in result.stdout, result.stdout


def test_matches_commands_refuse_bad_input_before_calling(tmp_path: Path) -> None:
    bad_setting = bisca(
        "matches", "create", "--game", "belote", *["--bot", "a"] * 4, "--set", "deals=0",
        "--data", str(tmp_path),
    )  # fmt: skip
    assert bad_setting.returncode == 2 and "deals must be 1..1000" in bad_setting.stderr
    bad_policy = bisca(
        "matches", "create", "--game", "belote", *["--bot", "a"] * 4,
        "--timeout-policy", "sometimes", "--data", str(tmp_path),
    )  # fmt: skip
    assert bad_policy.returncode == 2 and "sometimes" in bad_policy.stderr
    no_token = bisca("matches", "list", "--data", str(tmp_path))
    assert no_token.returncode == 2 and "no admin token: give --token" in no_token.stderr
    missing_ca = bisca("matches", "list", "--token", "t", "--ca", str(tmp_path / "ca.pem"))
    assert missing_ca.returncode == 2 and "ca.pem" in missing_ca.stderr
    for output in (bad_setting, bad_policy, no_token, missing_ca):
        assert "Traceback" not in output.stderr


# ---- review 53: a hostile tester of the command line and its files ------------------------


def test_a_folder_of_other_files_is_never_made_a_data_directory(tmp_path: Path) -> None:
    """``--data`` or ``--store sqlite:`` naming a folder of other files: refused, the folder
    left as it was (a read-only command made it 0700 and filled it; ``sqlite://x`` named
    ``/``)."""
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o755)
    shared.chmod(0o755)
    (shared / "readme.txt").write_text("hi\n")
    for argv in (
        ["bots", "list", "--data", str(shared)],
        ["leaderboard", "--game", "belote", "--store", f"sqlite:{shared / 'x.db'}"],
        ["account", "list", "--data", str(shared)],
    ):
        _refused(bisca(*argv), 1, f"{shared} holds other files (readme.txt) and no Bisca data")
        assert sorted(p.name for p in shared.iterdir()) == ["readme.txt"], argv
        assert shared.stat().st_mode & 0o777 == 0o755, argv
    _refused(bisca("bots", "list", "--store", "sqlite://x"), 1, "give sqlite:PATH")


def test_another_programs_sqlite_file_is_not_taken_over(tmp_path: Path) -> None:
    folder = tmp_path / "app"
    folder.mkdir()
    database = folder / "bisca.sqlite3"  # another program's file, copied under the store's name
    with sqlite3.connect(database) as db:
        db.execute("CREATE TABLE notes (x)")
    result = bisca("bots", "list", "--data", str(folder))
    _refused(result, 1, "is not a Bisca store: it holds tables of another program (notes)")
    with sqlite3.connect(database) as db:
        tables = [row[0] for row in db.execute("SELECT name FROM sqlite_master")]
        assert (tables, db.execute("PRAGMA user_version").fetchone()[0]) == (["notes"], 0)


def test_a_file_named_as_the_data_directory_keeps_its_mode(not_a_directory: Path) -> None:
    not_a_directory.chmod(0o644)
    _refused(bisca("key", "--data", str(not_a_directory)), 1, str(not_a_directory))
    assert not_a_directory.stat().st_mode & 0o777 == 0o644


def test_numbers_that_are_not_numbers_of_seconds_are_refused(tmp_path: Path) -> None:
    for key, value in (("hello_timeout_s", "nan"), ("join_timeout_s", "inf")):
        settings = tmp_path / f"{key}.toml"
        settings.write_text(f"[server]\n{key} = {value}\n")
        result = bisca("serve", "--config", str(settings), "--data", str(tmp_path / "d"))
        _refused(result, 2, f"server.{key} must be a number of seconds above 0 and at most 3600")
    for lease in ("inf", "nan", "1e308"):
        result = bisca("worker", "--store", "postgresql://x@127.0.0.1:1/x", "--lease", lease)
        _refused(result, 2, "argument --lease: expected more than 0 seconds, at most 86,400")


def test_a_port_out_of_range_is_refused_not_wrapped(tmp_path: Path) -> None:
    for address in ("127.0.0.1:99999", "127.0.0.1:-1", "127.0.0.1"):
        result = bisca("serve", "--data", str(tmp_path / "d"), "--listen", address, timeout=60)
        _refused(result, 2, f"cannot listen on {address}: expected HOST:PORT with a port from 0")
    result = bisca("serve", "--data", str(tmp_path / "d"), "--listen", "unix:", timeout=60)
    _refused(result, 2, "cannot listen on unix:: a unix socket needs a path (unix:PATH)")
    # Refused before anything is made (operator review: the data directory was made first).
    assert not (tmp_path / "d").exists()


def test_a_settings_files_listen_and_clock_are_checked_before_anything_is_made(
    tmp_path: Path,
) -> None:
    settings = tmp_path / "serve.toml"
    data = tmp_path / "d"
    settings.write_text(f'[server]\nlisten = ["127.0.0.1:99999"]\ndata_dir = "{data}"\n')
    result = bisca("serve", "--config", str(settings), timeout=60)
    _refused(result, 2, f"{settings}: server.listen: '127.0.0.1:99999': expected HOST:PORT")
    assert not data.exists()
    settings.write_text('[clock]\nmove_ms = "5000"\n')
    result = bisca("serve", "--config", str(settings), "--data", str(data), timeout=60)
    _refused(result, 2, f"{settings}: clock.move_ms must be a whole number of milliseconds")
    assert result.stderr.count(str(settings)) == 1, result.stderr  # the file named once


def test_files_and_stores_that_cannot_be_read_are_named(tmp_path: Path) -> None:
    data = tmp_path / "d"
    assert bisca("bots", "add", "seeded", "--data", str(data)).returncode == 0
    with sqlite3.connect(data / "bisca.sqlite3") as db:  # a flipped bit in a name of the schema
        (name,) = db.execute(
            "SELECT name FROM sqlite_master WHERE name LIKE 'sqlite_autoindex_%' LIMIT 1"
        ).fetchone()
        db.execute("PRAGMA writable_schema=ON")
        db.execute(
            "UPDATE sqlite_master SET name = CAST(X'9d' || CAST(? AS BLOB) AS TEXT) WHERE name = ?",
            (name, name),
        )
    _refused(bisca("bots", "list", "--data", str(data)), 1, "its schema is damaged")
    keyed = tmp_path / "k"
    assert bisca("bots", "add", "seeded", "--data", str(keyed)).returncode == 0
    (keyed / "server.key").write_text("garbage\n")
    result = bisca("serve", "--data", str(keyed), "--listen", "127.0.0.1:0", timeout=60)
    _refused(result, 1, "server.key is not a Bisca server key")
    _refused(
        bisca("check-bot", "--log-dir", str(keyed / "server.key"), "--", "random"),
        2,
        "--log-dir",
        "is not a folder",
    )
    _refused(bisca("tournament", "check", "/dev/zero"), 2, "not a regular file")
    _refused(bisca("serve", "--config", "/dev/zero", "--data", str(data)), 2, "not a regular file")
    _refused(bisca("demo", "--deals", "5000"), 2, "--deals: deals must be 1..1000")
    _refused(bisca("matches", "list", "--limit", "99999999999"), 2, "argument --limit")


def test_a_tournament_file_as_an_editor_may_save_it_and_name_it(tmp_path: Path) -> None:
    """Review 53: a byte-order mark made valid TOML 'not valid TOML'; a file without a name
    whose own name cannot be one was told its name was wrong; an unterminated quote in a bot
    command said only "No closing quotation"."""
    plan = 'game = "belote"\nformat = "round-robin"\n' + "".join(
        f'[[bots]]\nname = "{bot}"\ncommand = "random"\n' for bot in "abcd"
    )
    marked = tmp_path / "marked.toml"
    marked.write_bytes(b"\xef\xbb\xbf" + plan.encode())
    checked = bisca("tournament", "check", str(marked))
    assert checked.returncode == 0, checked.stderr
    assert "tournament marked, belote" in checked.stdout
    spaced = tmp_path / "my tourney.toml"
    spaced.write_text(plan)
    _refused(
        bisca("tournament", "check", str(spaced)),
        2,
        "the file gives no name and its own, 'my tourney', cannot be one: add name =",
    )
    quoted = ["--bot", '"unterminated', *["--bot", "random"] * 3]
    result = bisca("match", "--game", "belote", *quoted, "--data", str(tmp_path / "d"))
    _refused(result, 2, "the bot command '\"unterminated' cannot be read: No closing quotation")


def test_small_slips_on_the_command_line_are_named(tmp_path: Path) -> None:
    twice = ["--listen", "127.0.0.1:50999", "--listen", "127.0.0.1:50999"]
    result = bisca("serve", *twice, "--data", str(tmp_path / "d"))
    _refused(result, 2, "--listen 127.0.0.1:50999 given twice")
    # Review s57c: inf started a server whose tables were never ended.
    http = ["--listen", "127.0.0.1:0", "--http", "127.0.0.1:0", "--data", str(tmp_path / "d")]
    result = bisca("serve", *http, "--http-table-wait", "inf")
    _refused(result, 2, "--http-table-wait inf: above 0 and 86400 at most")
    assert not (tmp_path / "d").exists()


def test_bisca_key_asks_a_store_that_is_there_and_makes_none(tmp_path: Path) -> None:
    """``bisca key --store sqlite:PATH`` asks that store whether it keeps logs of the folder's
    missing key: a mistyped path is named, not made into an empty store that has nothing to
    say (review s54 F4), and no key is made."""
    data = tmp_path / "data"
    assert bisca("bots", "add", "zed", "--data", str(data)).returncode == 0  # not a new folder
    typo = tmp_path / "typo" / "league.sqlite3"
    result = bisca("key", "--data", str(data), "--store", f"sqlite:{typo}")
    _refused(result, 1, f"there is no store at {typo}")
    assert not typo.parent.exists() and not (data / "server.key").exists()
    made = bisca("key", "--data", str(data), "--store", f"sqlite:{data / 'bisca.sqlite3'}")
    assert made.returncode == 0 and made.stdout.startswith("ed25519:"), made.stderr


def test_a_pipe_a_device_or_a_huge_file_named_as_an_input_is_refused_at_once(
    tmp_path: Path,
) -> None:
    """Review s57c: a FIFO with no writer named as a tournament file or a settings file
    blocked the command for good (its ``open`` waited before the check that refuses pipes),
    and a log was read whole whatever it was: ``/dev/zero`` took 6 GB in 15 s, a sparse file
    of 1 GB 1 GB.  Each is refused, naming why (a log may still be a pipe: review 48)."""
    fifo = tmp_path / "fifo.toml"
    os.mkfifo(fifo)
    data = str(tmp_path / "d")
    not_regular = "not a regular file"
    _refused(bisca("tournament", "check", str(fifo), timeout=60), 2, str(fifo), not_regular)
    _refused(bisca("serve", "--config", str(fifo), "--data", data, timeout=60), 2, not_regular)
    sparse = tmp_path / "m-huge.binlog"
    with sparse.open("wb") as file:
        file.truncate(MAX_LOG_BYTES + 1)
    too_large = "larger than 268,435,456 bytes"
    for command in ("show", "export"):
        for path in ("/dev/zero", str(sparse)):
            _refused(bisca("replay", command, path, timeout=60), 2, path, too_large)
    # verify says each log's verdict on stdout, an unreadable one's too.
    for path, why in ((Path("/dev/zero"), too_large), (sparse, too_large)):
        verified = bisca("replay", "verify", str(path), timeout=60)
        assert verified.returncode == 2, verified.stderr
        assert f"{path}: UNREADABLE: {why}" in verified.stdout, verified.stdout


def test_an_http_address_the_server_cannot_bind_is_named_with_its_option(tmp_path: Path) -> None:
    """Review s57c: ``--http`` at an address not this machine's said only the system's
    words, naming neither the option nor the address (``--metrics`` named both)."""
    result = bisca(
        "serve", "--data", str(tmp_path / "d"), "--listen", "127.0.0.1:0",
        "--http", "192.0.2.1:18791", timeout=60,
    )  # fmt: skip
    _refused(result, 1, "bisca serve: --http 192.0.2.1:18791: ", "cannot assign requested address")


def test_a_data_directory_that_may_not_be_read_is_named(tmp_path: Path) -> None:
    """Review s57c: run by a user who may not read the data directory, ``key``, ``match``
    and ``replay verify`` ended in a traceback where every other command named the folder.
    The commands run without the capabilities that pass over a folder's mode (the suite runs
    as root, which reads any folder)."""
    data = tmp_path / "d"
    assert bisca("bots", "add", "seeded", "--data", str(data)).returncode == 0
    dropped = "-dac_override,-dac_read_search"
    unprivileged = ["setpriv", f"--bounding-set={dropped}", f"--inh-caps={dropped}", *BISCA]
    data.chmod(0)
    try:
        runs = {
            ("key", "--data", str(data)): (1, f"bisca key: cannot read {data / 'server.key'}"),
            ("match", "--game", "belote", *FOUR_RANDOM, "--deals", "1", "--data", str(data)): (
                2,
                f"bisca match: cannot read {data}: Permission denied",
            ),
            ("replay", "verify", str(data / "matches" / "m" / "m.binlog")): (
                2,
                f"argument LOG: cannot read {data / 'matches' / 'm' / 'm.binlog'}",
            ),
        }
        for argv, (code, said) in runs.items():
            ran = subprocess.run(
                [*unprivileged, *argv], capture_output=True, text=True, timeout=120
            )
            _refused(ran, code, said)
    finally:
        data.chmod(0o700)


def test_a_pem_file_that_is_a_device_or_too_large_is_refused_unread(tmp_path: Path) -> None:
    """Review s59b, M1: TLS and CA files were read whole, whatever they were: ``/dev/zero``
    as a certificate grew a server to 23 GB before the kernel killed it.  A device, or a file
    larger than a PEM file can be, is refused naming the file, and nothing is made."""
    big = tmp_path / "big.pem"
    big.write_bytes(b"-----BEGIN CERTIFICATE-----\n" + b"A" * (2 << 20))
    data = tmp_path / "data"
    for cert, why in (("/dev/zero", "not a regular file"), (str(big), "larger than")):
        served = bisca(
            *["serve", "--data", str(data), "--listen", "127.0.0.1:0"],
            *["--tls-cert", cert, "--tls-key", str(big)],
            timeout=30,
        )
        _refused(served, 2, f"TLS certificate {cert}: cannot read it: {why}")
    assert not data.exists()
    _refused(
        bisca(
            *["matches", "list", "--address", "grpcs://127.0.0.1:1", "--token", "t"],
            *["--ca", "/dev/zero"],
        ),
        2,
        "CA file /dev/zero: cannot read it: not a regular file",
    )
    league = ["submission", "x", "--server", "https://127.0.0.1:1"]
    _refused(bisca(*league, "--ca", "/dev/zero"), 1, "--ca /dev/zero: not a regular file")
    (tmp_path / "empty.pem").write_text("")
    empty = str(tmp_path / "empty.pem")
    _refused(bisca(*league, "--ca", empty), 1, f"--ca {empty}: the file is empty")


def test_bytes_that_are_not_utf8_are_refused_before_anything_runs(tmp_path: Path) -> None:
    """Review s59b, M2: a Latin-1 byte in a name, a note, a bot's command or a token's
    variable went deep into a command (the store, grpc, a match already started) and came
    back as a traceback.  Refused first, naming where, never quoting the value (a token)."""
    data = str(tmp_path / "data")
    latin = "a" + os.fsdecode(b"\xff")
    _refused(bisca("account", "suspend", latin, "--data", data), 2, "argument 3 is not UTF-8")
    _refused(
        bisca("account", "invite", "--note", latin, "--data", data),
        2,
        "the value of --note (argument 4) is not UTF-8",
    )
    _refused(
        bisca(
            "match", "--game", "belote", "--bot", "random" + latin, *FOUR_RANDOM[2:], "--data", data
        ),
        2,
        "the value of --bot (argument 5) is not UTF-8",
    )
    token = {**os.environ, "BISCA_ADMIN_TOKEN": "t" + latin}
    refused = bisca("matches", "list", "--address", "127.0.0.1:1", env=token)
    _refused(refused, 2, "$BISCA_ADMIN_TOKEN is not UTF-8")
    assert "\\xff" not in refused.stderr and latin not in refused.stderr
    assert not Path(data).exists()


def test_a_league_client_pointed_at_a_port_that_speaks_no_http_says_so(tmp_path: Path) -> None:
    """Review s59b, M3: ``--server`` given the arena's gRPC port (HTTP/2 frames, no HTTP/1
    status line) was a traceback."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]

        def answer() -> None:
            connection, _ = listener.accept()
            with connection:
                connection.recv(4096)
                connection.sendall(b"\x00\x00\x12\x04\x00\x00\x00\x00\x00\xff\xff@\xfe")

        helper = threading.Thread(target=answer, daemon=True)
        helper.start()
        server = f"http://127.0.0.1:{port}"
        _refused(
            bisca("submission", "x", "--server", server, timeout=60),
            1,
            f"{server} did not answer HTTP: is it the arena's gRPC address?",
        )
        helper.join(timeout=30)


def test_a_check_bot_log_folder_under_a_file_is_named(tmp_path: Path) -> None:
    """Review s59b, M4: ``--log-dir FILE/x`` was a traceback (``--log-dir FILE`` was not)."""
    (tmp_path / "afile").write_text("")
    under = tmp_path / "afile" / "x"
    refused = bisca("check-bot", "--no-sandbox", "--log-dir", str(under), "--", "random")
    _refused(refused, 2, f"--log-dir {under}: Not a directory")


def test_a_mistyped_data_folder_is_said_and_not_made(tmp_path: Path) -> None:
    """Review s59b, M5: ``bots list`` and ``account list`` at a mistyped ``--data`` made a
    whole data directory and said it was empty; ``account suspend``, and ``bots add`` of a
    name it refused, made one too."""
    typo = tmp_path / "leage-data"
    for argv, said in (
        (["bots", "list"], "no Bisca data in"),
        (["account", "list"], "no Bisca data in"),
        (["account", "suspend", "nobody"], "no Bisca data in"),
        (["account", "invite"], "no Bisca data in"),
        (["bots", "add", ""], "bad bot name ''"),
    ):
        _refused(bisca(*argv, "--data", str(typo)), 1, said)
        assert not typo.exists(), argv


def test_a_serve_that_cannot_listen_makes_no_data_directory(tmp_path: Path) -> None:
    """Review s59b, M7: the addresses were bound after the data directory was made, so a
    server that could not listen left a new one behind, a key and tokens in it."""
    data = tmp_path / "data"
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        for argv, said in (
            (["--listen", f"127.0.0.1:{port}"], f"cannot listen on 127.0.0.1:{port}"),
            (["--http", f"127.0.0.1:{port}"], f"--http 127.0.0.1:{port}: address already in use"),
            (["--metrics", f"127.0.0.1:{port}"], f"--metrics 127.0.0.1:{port}: address already"),
            (["--unix", str(tmp_path / "no" / "s.sock")], f"no directory {tmp_path / 'no'}"),
        ):
            argv = ["--listen", "127.0.0.1:0", *argv] if argv[0] != "--listen" else argv
            _refused(bisca("serve", *argv, "--data", str(data), timeout=30), 1, said)
            assert not data.exists(), argv


def test_a_data_directory_with_a_store_of_its_own_is_not_served_on_another(
    tmp_path: Path,
) -> None:
    """Review s59b, M9: one ``serve --data D --store sqlite:NEW`` noted the new store in D, and
    every command given D then refused it, its own results out of reach until the note was
    removed by hand."""
    data = tmp_path / "d"
    assert bisca("bots", "add", "ada", "--data", str(data)).returncode == 0
    other = tmp_path / "new.sqlite3"
    served = bisca(
        *["serve", "--listen", "127.0.0.1:0", "--data", str(data), "--store", f"sqlite:{other}"],
        timeout=30,
    )
    _refused(served, 1, f"{data} holds a store of its own, {data / 'bisca.sqlite3'}")
    assert not (data / "store").exists() and not other.exists()
    assert "ada" in bisca("bots", "list", "--data", str(data)).stdout


def test_lows_of_review_s59b(tmp_path: Path) -> None:
    """L17: bot names of other scripts' letters and digits drew look-alikes on a leaderboard
    (account names were ASCII already); L5: a folder given as a file was "[Errno 21] Is a
    directory: 3"; L4: a join timeout of 0 was refused as "must be 0-3600"."""
    data = str(tmp_path / "data")
    for name in ("ａｂｃ", "café", "a١"):
        _refused(bisca("bots", "add", name, "--data", data), 1, "use 1-64 ASCII letters")
    assert bisca("bots", "add", "plain-name_1.0", "--data", data).returncode == 0
    folder = tmp_path / "dir.toml"
    folder.mkdir()
    _refused(bisca("tournament", "check", str(folder)), 2, "cannot read it: a folder, not a file")
    clock = tmp_path / "clock.toml"
    clock.write_text(
        tournament_text(name="clk").replace("join_timeout_s = 30", "join_timeout_s = 0")
    )
    _refused(bisca("tournament", "check", str(clock)), 2, "join_timeout_s must be a number")


def test_an_empty_address_and_a_token_with_a_line_break_are_named(tmp_path: Path) -> None:
    """Review s59b, L1 and L2: grpc's own log (its resolver's failure, "Illegal header
    value") came before a sentence that named neither the option nor the variable."""
    env = {**os.environ, "BISCA_ADDRESS": ""}
    _refused(bisca("matches", "list", "--token", "t", env=env), 2, "no server address")
    line_break = bisca("matches", "list", "--address", "127.0.0.1:1", "--token", "a\nb")
    _refused(line_break, 2, "--token holds a space, a control character")
    spectator = {**os.environ, "BISCA_SPECTATOR_TOKEN": "a\nb"}
    watched = bisca("watch", "m-x", "--address", "127.0.0.1:1", env=spectator)
    _refused(watched, 2, "$BISCA_SPECTATOR_TOKEN holds a space, a control character")
    for said in (line_break.stderr, watched.stderr):
        assert "Illegal header" not in said and "a\nb" not in said, said
