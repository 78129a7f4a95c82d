"""TLS end to end: ``bisca serve --tls-cert/--tls-key`` (and ``--tls-client-ca`` for mutual TLS)
on loopback, with Python and Node bots as processes playing matches over TLS, clients that
cannot verify the server (or that the server refuses) failing at once with a clear error, and
the server refusing certificate files it cannot use.  Every certificate is made in the test
(``certificates.py``)."""

from __future__ import annotations

import asyncio
import logging
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import grpc
import pytest
from cryptography.hazmat.primitives import serialization

from bisca.client import ConnectionLost, run
from bisca.client.bots import make_bot
from bisca.server.edge import ArenaServer, ServerConfig, running_server
from bisca.server.errors import ConfigError
from bisca.server.store import Store
from bisca.v1 import arena_pb2 as pb
from bisca.v1 import arena_pb2_grpc
from tests.support.arena import start_arena, stop_server

from .certificates import Authority, Issued, issue, make_authority

ROOT = Path(__file__).resolve().parents[2]
NODE_CLIENT = ROOT / "clients" / "node"
RANDOM_JS = NODE_CLIENT / "bots" / "random.js"
BISCA = [sys.executable, "-m", "bisca.server.cli"]
#: Far below the SDKs' 30 s reconnect budget: a refused handshake must not be retried.
PROMPTLY = 15.0


@dataclass(frozen=True)
class Pki:
    """The certificates of these tests: the server's CA and certificate, a CA nobody uses, and
    the clients' CA with a certificate it signed (and one signed by the unused CA)."""

    server_ca: Authority
    server: Issued
    stranger_ca: Authority
    client_ca: Authority
    client: Issued
    stranger_client: Issued


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    folder = tmp_path_factory.mktemp("pki")
    server_ca = make_authority(folder, "Server CA")
    stranger_ca = make_authority(folder, "Stranger CA")
    client_ca = make_authority(folder, "Client CA")
    return Pki(
        server_ca=server_ca,
        server=issue(server_ca, folder, "arena", server=True),
        stranger_ca=stranger_ca,
        client_ca=client_ca,
        client=issue(client_ca, folder, "bot", server=False),
        stranger_client=issue(stranger_ca, folder, "stranger-bot", server=False),
    )


@dataclass
class TlsArena:
    """A ``bisca serve`` process serving TLS on loopback TCP and plaintext on a unix socket."""

    process: subprocess.Popen[str]
    tls_address: str  # grpcs://127.0.0.1:PORT, as the server prints it
    unix_address: str
    data_dir: Path
    tmp: Path
    ca: Path
    client: Issued | None  # the certificate the operator calls present (mutual TLS)
    bots: list[subprocess.Popen[bytes]] = field(default_factory=list)
    logs: list[Path] = field(default_factory=list)
    _names: int = 0

    @property
    def host_port(self) -> str:
        return self.tls_address.removeprefix("grpcs://")

    def credentials(self) -> grpc.ChannelCredentials:
        client = self.client
        return grpc.ssl_channel_credentials(
            self.ca.read_bytes(),
            client.key_file.read_bytes() if client else None,
            client.cert_file.read_bytes() if client else None,
        )

    def stub(self) -> arena_pb2_grpc.ArenaStub:
        return arena_pb2_grpc.ArenaStub(grpc.secure_channel(self.host_port, self.credentials()))

    @property
    def auth(self) -> list[tuple[str, str]]:
        return [("authorization", f"Bearer {(self.data_dir / 'admin.token').read_text().strip()}")]

    def register(self, prefix: str) -> tuple[str, str]:
        self._names += 1
        name = f"{prefix}{self._names}"
        store = Store.in_directory(self.data_dir)
        try:
            return name, store.bots.add(name)
        finally:
            store.close()

    def launch(self, argv: list[str], **env: str) -> Path:
        """A bot process; returns the file its stderr goes to."""
        log = self.tmp / f"bot-{len(self.logs)}.stderr.log"
        self.logs.append(log)
        with open(log, "wb") as stderr:
            self.bots.append(
                subprocess.Popen(
                    argv, env={**os.environ, **env}, stdout=subprocess.DEVNULL, stderr=stderr
                )
            )
        return log

    def create_belote(self, bots: list[str]) -> str:
        request = pb.CreateMatchRequest(
            game=pb.GAME_BELOTE,
            bots=bots,
            settings=pb.GameSettings(belote={"deals": 1}),
            clock=pb.ClockSettings(move_ms=3000, bank_ms=10_000, policy=pb.TIMEOUT_POLICY_FORFEIT),
        )
        return str(self.stub().CreateMatch(request, metadata=self.auth, timeout=10).match_id)

    def wait(self, match_id: str, timeout: float = 60) -> pb.MatchInfo:
        stub = self.stub()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            info = stub.GetMatch(
                pb.GetMatchRequest(match_id=match_id), metadata=self.auth, timeout=10
            )
            if info.status in (pb.MATCH_STATUS_FINISHED, pb.MATCH_STATUS_FAILED):
                return info
            time.sleep(0.1)
        raise AssertionError(f"match {match_id} did not end within {timeout} s")


def start_tls_arena(tmp: Path, pki: Pki, *tls: str, client: Issued | None = None) -> TlsArena:
    """``bisca serve`` on 127.0.0.1:0 and a unix socket; ``tls`` are its TLS arguments."""
    server, addresses = start_arena(tmp, "--unix", str(tmp / "arena.sock"), *tls)
    process, data_dir = server.process, server.data_dir
    assert addresses[0].startswith("grpcs://") and addresses[1].startswith("unix:"), addresses
    return TlsArena(
        process=process,
        tls_address=addresses[0],
        unix_address=addresses[1],
        data_dir=data_dir,
        tmp=tmp,
        ca=pki.server_ca.cert_file,
        client=client,
    )


def stop_tls_arena(arena: TlsArena) -> None:
    stop_server(arena.process, arena.bots, arena.tmp)


@pytest.fixture(scope="module")
def tls_arena(tmp_path_factory: pytest.TempPathFactory, pki: Pki) -> Iterator[TlsArena]:
    tmp = tmp_path_factory.mktemp("tls-arena")
    arena = start_tls_arena(
        tmp,
        pki,
        "--tls-cert",
        str(pki.server.cert_file),
        "--tls-key",
        str(pki.server.key_file),
    )
    yield arena
    stop_tls_arena(arena)


@pytest.fixture(scope="module")
def mtls_arena(tmp_path_factory: pytest.TempPathFactory, pki: Pki) -> Iterator[TlsArena]:
    """Mutual TLS, configured through the settings file (``[server] tls_*``)."""
    tmp = tmp_path_factory.mktemp("mtls-arena")
    settings = tmp / "bisca.toml"
    settings.write_text(
        "[server]\n"
        f'tls_cert = "{pki.server.cert_file}"\n'
        f'tls_key = "{pki.server.key_file}"\n'
        f'tls_client_ca = "{pki.client_ca.cert_file}"\n'
    )
    arena = start_tls_arena(tmp, pki, "--config", str(settings), client=pki.client)
    yield arena
    stop_tls_arena(arena)


@pytest.fixture(scope="module")
def node() -> str:
    """Node.js, with the Node client's dependencies (``make test`` installs them; a bare pytest
    run on a fresh clone installs them here, from the lock file)."""
    path = shutil.which("node")
    assert path, "Node.js (node) is needed for the Node client's tests"
    if not (NODE_CLIENT / "node_modules" / "@grpc" / "grpc-js").is_dir():
        npm = shutil.which("npm")
        assert npm, "npm is needed to install the Node client's dependencies"
        subprocess.run(
            [npm, "ci", "--silent", "--no-audit", "--no-fund"], cwd=NODE_CLIENT, check=True
        )
    return path


def python_bot(token: str, *options: str) -> list[str]:
    return [*BISCA, "bot", "greedy", "--game", "belote", "--token", token, *options]


def assert_all_completed(info: pb.MatchInfo) -> None:
    assert info.status == pb.MATCH_STATUS_FINISHED, info.reason
    assert [r.end for r in info.results] == [pb.SEAT_END_COMPLETED] * 4, info.results


def assert_played_and_checked_the_deal(log: Path, timeout: float = 20) -> None:
    """The bot's log: the match finished, the SDK verified its deal, nothing went wrong.  The
    bot may log the end a moment after the server recorded it: wait for it."""
    deadline = time.monotonic() + timeout
    pattern = re.compile(r"finished.*; deal verified", re.IGNORECASE)
    while not pattern.search(text := log.read_text()) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert pattern.search(text), text[-3000:]
    assert " ERROR " not in text, text[-3000:]


def failed_quickly(argv: list[str], **env: str) -> subprocess.CompletedProcess[str]:
    """Run a bot command that must give up on its own (no retries for the whole budget)."""
    started = time.monotonic()
    done = subprocess.run(
        argv, env={**os.environ, **env}, capture_output=True, text=True, timeout=60
    )
    assert done.returncode != 0, done.stderr
    assert time.monotonic() - started < PROMPTLY + 10, "it retried the refused handshake"
    assert "Traceback" not in done.stderr, done.stderr
    return done


def run_expecting_refusal(address: str, **tls: str | Path) -> str:
    """The ConnectionLost message of a Python SDK bot (in this process) the server refuses."""
    started = time.monotonic()
    with pytest.raises(ConnectionLost) as lost:
        run(make_bot("belote", "random"), address=address, token="t", name="refused", **tls)
    assert time.monotonic() - started < PROMPTLY, "it retried the refused handshake"
    return str(lost.value)


# ---- TLS ---------------------------------------------------------------------------------------


def test_python_and_node_bots_play_a_match_over_tls(tls_arena: TlsArena, node: str) -> None:
    arena = tls_arena
    ca = str(arena.ca)
    names, logs = [], []
    for seat in range(4):
        name, token = arena.register("tls")
        names.append(name)
        if seat == 0:  # grpcs:// and --ca
            argv = python_bot(token, "--address", arena.tls_address, "--ca", ca)
            logs.append(arena.launch(argv))
        elif seat == 1:  # grpcs:// and BISCA_CA
            logs.append(
                arena.launch(
                    [node, str(RANDOM_JS), "--seed", "1"],
                    BISCA_ADDRESS=arena.tls_address,
                    BISCA_TOKEN=token,
                    BISCA_CA=ca,
                )
            )
        elif seat == 2:  # host:port and BISCA_CA: the CA alone asks for TLS
            logs.append(arena.launch(python_bot(token), BISCA_ADDRESS=arena.host_port, BISCA_CA=ca))
        else:
            logs.append(
                arena.launch(
                    [node, str(RANDOM_JS), "--seed", "3"],
                    BISCA_ADDRESS=arena.host_port,
                    BISCA_TOKEN=token,
                    BISCA_CA=ca,
                )
            )
    info = arena.wait(arena.create_belote(names))
    assert_all_completed(info)
    for log in logs:
        assert_played_and_checked_the_deal(log)


def test_the_unix_socket_stays_plaintext(tls_arena: TlsArena) -> None:
    stub = arena_pb2_grpc.ArenaStub(grpc.insecure_channel(tls_arena.unix_address))
    listed = stub.ListMatches(pb.ListMatchesRequest(), metadata=tls_arena.auth, timeout=10)
    assert isinstance(listed, pb.ListMatchesResponse)


def test_a_plaintext_client_gets_no_service_on_the_tls_port(tls_arena: TlsArena) -> None:
    stub = arena_pb2_grpc.ArenaStub(grpc.insecure_channel(tls_arena.host_port))
    with pytest.raises(grpc.RpcError) as failure:
        stub.ListMatches(pb.ListMatchesRequest(), metadata=tls_arena.auth, timeout=5)
    assert failure.value.code() == grpc.StatusCode.UNAVAILABLE
    # The SDK hints at TLS (a plaintext connection is retried as any other: reconnect off).
    with pytest.raises(ConnectionLost, match=re.escape(f"connect to {tls_arena.tls_address}")):
        run(
            make_bot("belote", "random"),
            address=tls_arena.host_port,
            token="t",
            name="plain",
            reconnect=False,
        )


def test_without_the_ca_the_python_sdk_fails_the_handshake_at_once(tls_arena: TlsArena) -> None:
    # grpcs:// alone verifies against the system's roots, which never signed the test's CA.
    message = run_expecting_refusal(tls_arena.tls_address)
    assert f"TLS handshake with {tls_arena.tls_address} failed" in message
    assert "system's root certificates" in message and "BISCA_CA" in message
    assert "CERTIFICATE_VERIFY_FAILED" in message


def test_with_a_wrong_ca_the_python_sdk_fails_the_handshake_at_once(
    tls_arena: TlsArena, pki: Pki
) -> None:
    message = run_expecting_refusal(tls_arena.tls_address, ca=pki.stranger_ca.cert_file)
    assert "TLS handshake" in message and str(pki.stranger_ca.cert_file) in message
    # ... and the bisca bot command says so and exits 1.
    done = failed_quickly(
        python_bot("t", "--address", tls_arena.host_port, "--ca", str(pki.stranger_ca.cert_file))
    )
    assert done.returncode == 1
    assert "bisca bot: TLS handshake with" in done.stderr


def test_without_the_ca_or_with_a_wrong_one_a_node_bot_fails_at_once(
    tls_arena: TlsArena, pki: Pki, node: str
) -> None:
    for ca in ("", str(pki.stranger_ca.cert_file)):
        done = failed_quickly(
            [node, str(RANDOM_JS)],
            BISCA_ADDRESS=tls_arena.tls_address,
            BISCA_TOKEN="t",
            BISCA_CA=ca,
        )
        assert f"TLS handshake with {tls_arena.tls_address} failed" in done.stderr, done.stderr
        assert (ca or "root certificates") in done.stderr


def test_a_ca_file_that_cannot_be_used_is_named(
    tls_arena: TlsArena, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    missing = tmp_path / "nope.pem"
    with pytest.raises(ValueError, match=f"CA file {re.escape(str(missing))}: no such file"):
        run(
            make_bot("belote", "random"),
            address=tls_arena.tls_address,
            token="t",
            name="b",
            ca=missing,
        )
    not_pem = tmp_path / "ca.txt"
    not_pem.write_text("not a certificate")
    monkeypatch.setenv("BISCA_CA", str(not_pem))
    with pytest.raises(ValueError, match=r"\(from BISCA_CA\): not PEM"):
        run(make_bot("belote", "random"), address=tls_arena.tls_address, token="t", name="b")
    # PEM framing around no certificate: grpc only finds out when it connects.
    broken = tmp_path / "broken.pem"
    broken.write_text("-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydA==\n-----END CERTIFICATE-----\n")
    monkeypatch.delenv("BISCA_CA")
    message = run_expecting_refusal(tls_arena.tls_address, ca=broken)
    assert f"cannot set up TLS for {tls_arena.tls_address}" in message and str(broken) in message
    done = subprocess.run(
        python_bot("t", "--address", tls_arena.tls_address, "--ca", str(missing)),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and f"CA file {missing}: no such file" in done.stderr


# ---- mutual TLS --------------------------------------------------------------------------------


def test_mutual_tls_refuses_a_client_without_a_certificate(
    mtls_arena: TlsArena, pki: Pki, node: str
) -> None:
    ca = mtls_arena.ca
    message = run_expecting_refusal(mtls_arena.tls_address, ca=ca)
    assert "closed the connection during the TLS handshake" in message
    assert "requires a client certificate" in message and "BISCA_CLIENT_CERT" in message
    done = failed_quickly(
        [node, str(RANDOM_JS)],
        BISCA_ADDRESS=mtls_arena.tls_address,
        BISCA_TOKEN="t",
        BISCA_CA=str(ca),
    )
    assert "requires a client certificate" in done.stderr, done.stderr
    # Nor does an operator without one get an answer.
    stub = arena_pb2_grpc.ArenaStub(
        grpc.secure_channel(mtls_arena.host_port, grpc.ssl_channel_credentials(ca.read_bytes()))
    )
    with pytest.raises(grpc.RpcError) as failure:
        stub.ListMatches(pb.ListMatchesRequest(), metadata=mtls_arena.auth, timeout=5)
    assert failure.value.code() == grpc.StatusCode.UNAVAILABLE


def test_mutual_tls_refuses_a_certificate_another_ca_signed(mtls_arena: TlsArena, pki: Pki) -> None:
    stranger = pki.stranger_client
    message = run_expecting_refusal(
        mtls_arena.tls_address,
        ca=mtls_arena.ca,
        client_cert=stranger.cert_file,
        client_key=stranger.key_file,
    )
    assert f"does not accept the client certificate {stranger.cert_file}" in message


def test_mutual_tls_bots_with_certificates_signed_by_the_client_ca_play(
    mtls_arena: TlsArena, pki: Pki, node: str
) -> None:
    arena = mtls_arena
    tls = {
        "BISCA_CA": str(arena.ca),
        "BISCA_CLIENT_CERT": str(pki.client.cert_file),
        "BISCA_CLIENT_KEY": str(pki.client.key_file),
    }
    names, logs = [], []
    for seat in range(4):
        name, token = arena.register("mtls")
        names.append(name)
        if seat == 0:  # the options of bisca bot
            argv = python_bot(
                token,
                "--address",
                arena.tls_address,
                "--ca",
                str(arena.ca),
                "--client-cert",
                str(pki.client.cert_file),
                "--client-key",
                str(pki.client.key_file),
            )
            logs.append(arena.launch(argv))
        elif seat == 2:  # the environment
            logs.append(arena.launch(python_bot(token), BISCA_ADDRESS=arena.tls_address, **tls))
        else:
            logs.append(
                arena.launch(
                    [node, str(RANDOM_JS), "--seed", str(seat)],
                    BISCA_ADDRESS=arena.tls_address,
                    BISCA_TOKEN=token,
                    **tls,
                )
            )
    info = arena.wait(arena.create_belote(names))
    assert_all_completed(info)
    for log in logs:
        assert_played_and_checked_the_deal(log)


def test_the_unix_socket_of_a_mutual_tls_server_stays_plaintext(mtls_arena: TlsArena) -> None:
    stub = arena_pb2_grpc.ArenaStub(grpc.insecure_channel(mtls_arena.unix_address))
    listed = stub.ListMatches(pb.ListMatchesRequest(), metadata=mtls_arena.auth, timeout=10)
    assert isinstance(listed, pb.ListMatchesResponse)


# ---- certificate files the server cannot use ---------------------------------------------------


def tls_config(
    data_dir: Path, cert: Path | None, key: Path | None, client_ca: Path | None = None
) -> ServerConfig:
    return ServerConfig(
        data_dir=data_dir,
        listen=["127.0.0.1:0"],
        tls_cert=cert,
        tls_key=key,
        tls_client_ca=client_ca,
    )


def test_the_server_names_each_certificate_file_it_cannot_use(tmp_path: Path, pki: Pki) -> None:
    cert, key = pki.server.cert_file, pki.server.key_file
    garbage = tmp_path / "garbage.pem"
    garbage.write_text("-----BEGIN NOTHING-----\n")
    missing = tmp_path / "missing.pem"
    encrypted = tmp_path / "encrypted.key.pem"
    loaded = serialization.load_pem_private_key(key.read_bytes(), password=None)
    encrypted.write_bytes(
        loaded.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.BestAvailableEncryption(b"secret"),
        )
    )
    cases = [
        (tls_config(tmp_path / "d", missing, key), f"TLS certificate {missing}: no such file"),
        (tls_config(tmp_path / "d", tmp_path, key), f"TLS certificate {tmp_path}: cannot read it"),
        (
            tls_config(tmp_path / "d", garbage, key),
            f"TLS certificate {garbage}: not a PEM certificate",
        ),
        (tls_config(tmp_path / "d", key, key), f"TLS certificate {key}: not a PEM certificate"),
        (tls_config(tmp_path / "d", cert, missing), f"TLS key {missing}: no such file"),
        (tls_config(tmp_path / "d", cert, cert), f"TLS key {cert}: not a PEM private key"),
        (tls_config(tmp_path / "d", cert, encrypted), f"TLS key {encrypted}: the key is encrypted"),
        (
            tls_config(tmp_path / "d", cert, pki.client.key_file),
            f"TLS key {pki.client.key_file}: not the key of the certificate in {cert}",
        ),
        (
            tls_config(tmp_path / "d", cert, key, garbage),
            f"TLS client CA {garbage}: not a PEM certificate",
        ),
        (tls_config(tmp_path / "d", cert, None), "a certificate without a private key"),
        (tls_config(tmp_path / "d", None, key), "a key without a certificate"),
        (tls_config(tmp_path / "d", None, None, cert), "is for mutual TLS"),
    ]
    for config, expected in cases:
        with pytest.raises(ConfigError) as refused:
            ArenaServer(config)
        assert expected in str(refused.value), (expected, str(refused.value))
    assert not (tmp_path / "d").exists()  # refused before anything was created


def test_an_expired_certificate_is_served_with_a_warning(
    tmp_path: Path, pki: Pki, caplog: pytest.LogCaptureFixture
) -> None:
    # In process (running_server): it starts, says so, and serves grpcs:// on TCP only.
    expired = issue(pki.server_ca, tmp_path, "expired", server=True, expired=True)
    config = ServerConfig(
        data_dir=tmp_path / "data",
        listen=["127.0.0.1:0", f"unix:{tmp_path / 'arena.sock'}"],
        tls_cert=expired.cert_file,
        tls_key=expired.key_file,
    )

    async def start_and_stop() -> list[str]:
        async with running_server(config) as server:
            return server.addresses

    with caplog.at_level(logging.WARNING, logger="bisca.server"):
        tcp, unix = asyncio.run(start_and_stop())
    assert tcp.startswith("grpcs://127.0.0.1:") and unix.startswith("unix:")
    assert f"TLS certificate {expired.cert_file} expired on" in caplog.text


def test_bisca_serve_refuses_an_unusable_file_with_its_name_and_no_traceback(
    tmp_path: Path, pki: Pki
) -> None:
    missing = tmp_path / "missing.pem"
    settings = tmp_path / "bisca.toml"
    settings.write_text(f'[server]\ntls_cert = "{pki.server.cert_file}"\ntls_key = "{missing}"\n')
    for arguments in (
        ["--tls-cert", str(missing), "--tls-key", str(pki.server.key_file)],
        ["--config", str(settings)],
    ):
        done = subprocess.run(
            [*BISCA, "serve", "--listen", "127.0.0.1:0", "--data", str(tmp_path / "d"), *arguments],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 2, done.stdout + done.stderr
        assert f"{missing}: no such file" in done.stderr
        assert "Traceback" not in done.stderr
    settings.write_text("[server]\ntls_cert = 5\n")
    done = subprocess.run(
        [*BISCA, "serve", "--config", str(settings), "--data", str(tmp_path / "d")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and "server.tls_cert must be a non-empty string" in done.stderr
