"""TLS in the C++ SDK (``clients/cpp``): its random bot playing whole Belote matches over TLS and
over mutual TLS, and the connections it must refuse at once, with a sentence naming the cause
and the files, rather than retrying them for its 30 s backoff budget: a server certificate it
cannot verify, a plaintext server behind a ``grpcs://`` address, a mutual-TLS server it has no
(acceptable) certificate for, and TLS files it cannot use.

The servers and their certificates are those of the Python and Node SDKs' TLS tests
(``tests/edge/test_tls.py``); the bot and ``sdk_test`` (which takes the TLS files as
``Options`` fields, where the random bot reads the environment) come from the shared build of
``test_cpp_bot.py``.
"""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest

from tests.support.arena import Arena

from ..edge import test_tls
from ..edge.test_tls import PROMPTLY, Pki, TlsArena, assert_all_completed, failed_quickly
from . import test_cpp_bot

# The fixtures of those modules, which pytest finds here by their names: the PKI and the TLS and
# mutual-TLS servers, and the shared build's bot and sdk_test.
pki, tls_arena, mtls_arena = test_tls.pki, test_tls.tls_arena, test_tls.mtls_arena
cpp_bot, sdk_test = test_cpp_bot.cpp_bot, test_cpp_bot.sdk_test

pytestmark = pytest.mark.system


def assert_played_and_verified_the_deal(log: Path, timeout: float = 20) -> None:
    """A C++ bot's log: its match finished, its deal was verified, nothing went wrong.  The bot
    may log the end a moment after the server recorded it: wait for it."""
    deadline = time.monotonic() + timeout
    while "deal verified" not in (text := log.read_text()) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert "MATCH_STATUS_FINISHED: seat" in text and "deal verified" in text, text[-3000:]
    assert " ERROR " not in text, text[-3000:]


def play_a_belote_match(arena: TlsArena, bots: list[tuple[list[str], dict[str, str]]]) -> None:
    """Each bot (its command and its environment beside its token) on a registered name of its
    own, in one Belote match that every seat completes."""
    names, logs = [], []
    for argv, env in bots:
        name, token = arena.register("cpp")
        names.append(name)
        logs.append(arena.launch(argv, BISCA_TOKEN=token, **env))
    assert_all_completed(arena.wait(arena.create_belote(names)))
    for log in logs:
        assert_played_and_verified_the_deal(log)


def refused(argv: list[str], status: int, **env: str) -> str:
    """The stderr of a C++ bot that must give up at once with exit ``status``: its last line
    (what main() prints of the exception) carries the reason."""
    started = time.monotonic()
    done = failed_quickly(argv, BISCA_TOKEN="t", **env)
    assert time.monotonic() - started < PROMPTLY, "it retried what retrying cannot help"
    assert done.returncode == status, done.stderr
    return done.stderr


# ---- matches -------------------------------------------------------------------------------------


def test_the_cpp_bot_plays_a_belote_match_over_tls(
    tls_arena: TlsArena, cpp_bot: Path, sdk_test: Path
) -> None:
    arena, ca = tls_arena, str(tls_arena.ca)
    play_a_belote_match(
        arena,
        [
            ([str(cpp_bot), "--seed", "1"], {"BISCA_ADDRESS": arena.tls_address, "BISCA_CA": ca}),
            # host:port and a CA: the CA alone asks for TLS.
            ([str(cpp_bot), "--seed", "2"], {"BISCA_ADDRESS": arena.host_port, "BISCA_CA": ca}),
            ([str(cpp_bot), "--seed", "3"], {"BISCA_ADDRESS": arena.tls_address, "BISCA_CA": ca}),
            # Options::ca rather than the environment.
            ([str(sdk_test), "first-bot", "--ca", ca], {"BISCA_ADDRESS": arena.tls_address}),
        ],
    )


def test_the_cpp_bot_plays_a_belote_match_over_mutual_tls(
    mtls_arena: TlsArena, pki: Pki, cpp_bot: Path, sdk_test: Path
) -> None:
    arena, client = mtls_arena, pki.client
    tls = {
        "BISCA_ADDRESS": arena.tls_address,
        "BISCA_CA": str(arena.ca),
        "BISCA_CLIENT_CERT": str(client.cert_file),
        "BISCA_CLIENT_KEY": str(client.key_file),
    }
    options = ["--ca", str(arena.ca), "--client-cert", str(client.cert_file)]
    options += ["--client-key", str(client.key_file)]
    play_a_belote_match(
        arena,
        [
            *(([str(cpp_bot), "--seed", str(seat)], tls) for seat in range(3)),
            ([str(sdk_test), "first-bot", *options], {"BISCA_ADDRESS": arena.tls_address}),
        ],
    )


# ---- handshakes that cannot succeed ------------------------------------------------------------


def test_a_server_certificate_that_cannot_be_verified_ends_the_bot_at_once(
    tls_arena: TlsArena, pki: Pki, cpp_bot: Path
) -> None:
    address = tls_arena.tls_address
    stranger = str(pki.stranger_ca.cert_file)
    said = refused([str(cpp_bot)], 1, BISCA_ADDRESS=address, BISCA_CA=stranger)
    assert (
        f"random_bot: TLS handshake with {address} failed: the server's certificate could not be "
        f"verified against the CA in {stranger}, or it does not name the host connected to"
    ) in said, said
    assert "certificate verify failed" in said
    # grpcs:// and no CA: the system's roots, which never signed the test's CA.
    said = refused([str(cpp_bot)], 1, BISCA_ADDRESS=address, BISCA_CA="")
    assert "against the system's root certificates (give the server's CA" in said, said
    assert "BISCA_CA" in said


def test_a_grpcs_address_of_a_plaintext_server_ends_the_bot_at_once(
    arena: Arena, pki: Pki, cpp_bot: Path
) -> None:
    address = f"grpcs://{arena.address}"
    said = refused([str(cpp_bot)], 1, BISCA_ADDRESS=address, BISCA_CA=str(pki.server_ca.cert_file))
    assert (
        f"random_bot: TLS handshake with {address} failed: the server does not speak TLS there "
        f"(a plaintext server? then connect to {arena.address} with no CA file or client "
        "certificate)"
    ) in said, said


def test_a_mutual_tls_server_refuses_a_bot_without_an_acceptable_certificate_at_once(
    mtls_arena: TlsArena, pki: Pki, cpp_bot: Path
) -> None:
    address, ca = mtls_arena.tls_address, str(mtls_arena.ca)
    said = refused([str(cpp_bot)], 1, BISCA_ADDRESS=address, BISCA_CA=ca)
    assert (
        f"random_bot: the server at {address} closed the connection during the TLS handshake: it "
        "requires a client certificate (mutual TLS)"
    ) in said, said
    assert "BISCA_CLIENT_CERT, BISCA_CLIENT_KEY" in said
    stranger = pki.stranger_client
    said = refused(
        [str(cpp_bot)],
        1,
        BISCA_ADDRESS=address,
        BISCA_CA=ca,
        BISCA_CLIENT_CERT=str(stranger.cert_file),
        BISCA_CLIENT_KEY=str(stranger.key_file),
    )
    assert f"it does not accept the client certificate {stranger.cert_file}" in said, said


# ---- TLS files it cannot use, and addresses that cannot have TLS ----------------------------


def test_a_tls_file_it_cannot_use_is_named_before_connecting(
    tls_arena: TlsArena, pki: Pki, cpp_bot: Path, sdk_test: Path, tmp_path: Path
) -> None:
    address = tls_arena.tls_address
    missing = tmp_path / "nope.pem"
    said = refused([str(cpp_bot)], 2, BISCA_ADDRESS=address, BISCA_CA=str(missing))
    assert f"random_bot: CA file {missing} (from BISCA_CA): no such file" in said, said
    said = refused([str(sdk_test), "first-bot", "--ca", str(missing)], 2, BISCA_ADDRESS=address)
    assert f"sdk_test: CA file {missing}: no such file" in said, said
    said = refused([str(cpp_bot)], 2, BISCA_ADDRESS=address, BISCA_CA=str(tmp_path))
    assert f"CA file {tmp_path} (from BISCA_CA): cannot read it: Is a directory" in said, said
    said = refused([str(cpp_bot)], 2, BISCA_ADDRESS=address, BISCA_CA=str(pki.client.key_file))
    assert f"{pki.client.key_file} (from BISCA_CA): not PEM (no 'BEGIN CERTIFICATE' block)" in said
    # PEM framing around no certificate: gRPC 1.51 would only log it, and retry for 30 s.
    broken = tmp_path / "broken.pem"
    broken.write_text("-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydA==\n-----END CERTIFICATE-----\n")
    said = refused([str(cpp_bot)], 2, BISCA_ADDRESS=address, BISCA_CA=str(broken))
    assert f"CA file {broken} (from BISCA_CA): a certificate in it cannot be parsed" in said, said
    client, stranger = pki.client, pki.stranger_client
    said = refused(
        [str(cpp_bot)],
        2,
        BISCA_ADDRESS=address,
        BISCA_CLIENT_CERT=str(client.cert_file),
        BISCA_CLIENT_KEY=str(stranger.key_file),
    )
    assert (
        f"client key {stranger.key_file} (from BISCA_CLIENT_KEY): not the key of the client "
        f"certificate {client.cert_file} (from BISCA_CLIENT_CERT)"
    ) in said, said
    said = refused(
        [str(cpp_bot)], 2, BISCA_ADDRESS=address, BISCA_CLIENT_CERT=str(client.cert_file)
    )
    assert "a client certificate needs its key and a key its certificate" in said, said
    assert "DNS" not in said and "reconnecting" not in said


def test_a_unix_socket_is_plaintext(tls_arena: TlsArena, cpp_bot: Path) -> None:
    socket = tls_arena.unix_address
    said = refused([str(cpp_bot)], 2, BISCA_ADDRESS=f"grpcs://{socket}")
    assert f"grpcs://{socket}: a unix socket is served in plaintext; drop grpcs://" in said, said
    # With a CA given, it connects in plaintext all the same (and says so): the server's
    # Error for the unknown token, not a handshake, ends the bot.
    said = refused([str(cpp_bot)], 1, BISCA_ADDRESS=socket, BISCA_CA=str(tls_arena.ca))
    assert re.search(r"unix:.* is a unix socket, .*: the TLS files given are not used", said), said
    assert "ERROR_CODE_UNKNOWN_TOKEN" in said
