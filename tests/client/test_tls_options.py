"""How the Python SDK reads its TLS options (``grpcs://``, ``ca=``, ``client_cert=``/``client_key=``
and their ``BISCA_*`` variables), and how it words failed TLS connections; network-free.  The
handshakes themselves are in ``tests/edge/test_tls.py``."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from bisca.client._tls import target_for

from ..edge.certificates import Issued, issue, make_authority

# grpc core's details for the failures the SDK words (seen with grpcio 1.85).
VERIFY_FAILED = (
    "failed to connect to all addresses; last error: UNKNOWN: ipv4:127.0.0.1:1: Tls handshake "
    "failed (TSI_PROTOCOL_FAILURE): SSL_ERROR_SSL: error:1000007d:SSL routines:"
    "OPENSSL_internal:CERTIFICATE_VERIFY_FAILED: unable to get local issuer certificate: OK"
)
SOCKET_CLOSED = (
    "failed to connect to all addresses; last error: UNAVAILABLE: ipv4:127.0.0.1:1: Socket closed"
)
REFUSED = (
    "failed to connect to all addresses; last error: UNKNOWN: ipv4:127.0.0.1:1: Connection refused"
)


@pytest.fixture(autouse=True)
def no_tls_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    for variable in ("BISCA_CA", "BISCA_CLIENT_CERT", "BISCA_CLIENT_KEY"):
        monkeypatch.delenv(variable, raising=False)


@pytest.fixture(scope="module")
def client_files(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Issued]:
    folder = tmp_path_factory.mktemp("client-pki")
    authority = make_authority(folder)
    return authority.cert_file, issue(authority, folder, "bot", server=False)


def test_plain_addresses_stay_plaintext() -> None:
    for address in ("127.0.0.1:50051", "localhost:50051", "unix:/tmp/arena.sock"):
        target = target_for(address)
        assert (target.tls, target.dial) == (False, address)


def test_grpcs_asks_for_tls_verified_against_the_system_roots() -> None:
    target = target_for("grpcs://arena.example:443")
    assert target.tls and target.dial == "arena.example:443" and target.ca is None


def test_a_ca_alone_asks_for_tls_given_or_from_the_environment(
    client_files: tuple[Path, Issued], monkeypatch: pytest.MonkeyPatch
) -> None:
    ca, _ = client_files
    given = target_for("127.0.0.1:50051", ca=ca)
    assert given.tls and given.ca == ca and given.dial == "127.0.0.1:50051"
    monkeypatch.setenv("BISCA_CA", str(ca))
    from_env = target_for("127.0.0.1:50051")
    assert from_env.tls and from_env.ca == ca


def test_a_client_certificate_needs_its_key(client_files: tuple[Path, Issued]) -> None:
    ca, client = client_files
    with pytest.raises(ValueError, match="give both client_cert= and client_key="):
        target_for("grpcs://h:1", ca=ca, client_cert=client.cert_file)
    with pytest.raises(ValueError, match="BISCA_CLIENT_CERT, BISCA_CLIENT_KEY"):
        target_for("grpcs://h:1", client_key=client.key_file)
    both = target_for("h:1", client_cert=client.cert_file, client_key=client.key_file)
    assert both.tls and both.client_cert == client.cert_file  # a client certificate is TLS


def test_files_that_cannot_be_used_are_named(
    client_files: tuple[Path, Issued], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ca, client = client_files
    missing = tmp_path / "missing.pem"
    with pytest.raises(ValueError, match=f"^CA file {missing}: no such file$"):
        target_for("grpcs://h:1", ca=missing)
    with pytest.raises(ValueError, match=f"^CA file {tmp_path}: cannot read it"):
        target_for("grpcs://h:1", ca=tmp_path)
    with pytest.raises(ValueError, match=f"^client key {ca}: not PEM"):
        target_for("grpcs://h:1", client_cert=client.cert_file, client_key=ca)
    monkeypatch.setenv("BISCA_CLIENT_CERT", str(client.key_file))
    monkeypatch.setenv("BISCA_CLIENT_KEY", str(client.key_file))
    with pytest.raises(ValueError, match=r"\(from BISCA_CLIENT_CERT\): not PEM"):
        target_for("grpcs://h:1")


def test_a_unix_socket_is_plaintext_whatever_the_tls_files(
    client_files: tuple[Path, Issued], caplog: pytest.LogCaptureFixture
) -> None:
    ca, _ = client_files
    with caplog.at_level(logging.WARNING, logger="bisca.client"):
        target = target_for("unix:/tmp/arena.sock", ca=ca)
    assert not target.tls
    assert "serves in plaintext: the TLS files given are not used" in caplog.text
    with pytest.raises(ValueError, match="a unix socket is served in plaintext"):
        target_for("grpcs://unix:/tmp/arena.sock")


def test_failed_handshakes_of_a_first_connection_are_refusals(
    client_files: tuple[Path, Issued],
) -> None:
    ca, client = client_files
    without_ca = target_for("grpcs://127.0.0.1:1")
    refusal = without_ca.refusal(VERIFY_FAILED, ever_welcomed=False)
    assert refusal is not None and "system's root certificates" in refusal
    with_ca = target_for("grpcs://127.0.0.1:1", ca=ca)
    assert f"against the CA in {ca}" in str(with_ca.refusal(VERIFY_FAILED, ever_welcomed=False))
    assert "requires a client certificate" in str(
        with_ca.refusal(SOCKET_CLOSED, ever_welcomed=False)
    )
    with_cert = target_for(
        "grpcs://127.0.0.1:1", ca=ca, client_cert=client.cert_file, client_key=client.key_file
    )
    assert f"does not accept the client certificate {client.cert_file}" in str(
        with_cert.refusal(SOCKET_CLOSED, ever_welcomed=False)
    )
    # Retried as before: a refused TCP connection, any failure after a Welcome, plaintext.
    assert with_ca.refusal(REFUSED, ever_welcomed=False) is None
    assert with_ca.refusal(VERIFY_FAILED, ever_welcomed=True) is None
    assert target_for("127.0.0.1:1").refusal(VERIFY_FAILED, ever_welcomed=False) is None


def test_a_plaintext_connection_a_server_closes_hints_at_tls() -> None:
    plain = target_for("127.0.0.1:1")
    assert (
        plain.hint(SOCKET_CLOSED) == " (if the server serves TLS, connect to grpcs://127.0.0.1:1)"
    )
    assert plain.hint(REFUSED) == ""
    assert target_for("unix:/tmp/a.sock").hint(SOCKET_CLOSED) == ""
