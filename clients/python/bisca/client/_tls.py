"""TLS for a bot's connection: what an address and the files given ask for, and what a failed
TLS connection means, in words.

A connection uses TLS when the address is ``grpcs://HOST:PORT``, or when a CA file or a client
certificate is given (``ca=`` / ``BISCA_CA``, ``client_cert=`` + ``client_key=`` /
``BISCA_CLIENT_CERT`` + ``BISCA_CLIENT_KEY``).  The server's certificate is verified against
the CA file, or against the system's root certificates when there is none.  ``unix:`` addresses
are always plaintext: the server serves its unix socket so (it is local, and the sandboxed bots
it launches connect through one).

grpc reports every failed connection as UNAVAILABLE, which a bot retries for its whole backoff
budget; a certificate that cannot be verified will not become valid by retrying, so
:meth:`Target.refusal` names the failures of a first connection's handshake and
:func:`bisca.client.run` stops at once.
"""

from __future__ import annotations

import logging
import os
import stat
from dataclasses import dataclass
from pathlib import Path

import grpc

logger = logging.getLogger("bisca.client")

TLS_SCHEME = "grpcs://"
CA_VARIABLE = "BISCA_CA"
CLIENT_CERT_VARIABLE = "BISCA_CLIENT_CERT"
CLIENT_KEY_VARIABLE = "BISCA_CLIENT_KEY"

# Words of grpc core's details for a handshake that failed on the client's side: a server
# certificate it could not verify, a name it does not carry, or a peer that does not speak TLS.
_HANDSHAKE_FAILURES = ("handshake failed", "verification check failed", "certificate")
# grpc core's words for TLS files it could not use after all (a PEM block that does not parse).
_UNUSABLE_FILES = "failed to create security handshaker"
# What the client sees when a mutual-TLS server refuses its certificate (or its lack of one):
# with TLS 1.3 the client's side of the handshake is done when the server checks, so the
# server just closes the connection.
_CLOSED_IN_HANDSHAKE = "socket closed"

PathLike = str | os.PathLike[str]


@dataclass(frozen=True)
class Target:
    """Where a bot connects and how: ``dial`` is what grpc connects to (the address without
    ``grpcs://``), ``credentials`` are ``None`` for plaintext."""

    address: str
    dial: str
    credentials: grpc.ChannelCredentials | None = None
    ca: Path | None = None
    client_cert: Path | None = None
    client_key: Path | None = None

    @property
    def tls(self) -> bool:
        return self.credentials is not None

    def refusal(self, details: str, *, ever_welcomed: bool) -> str | None:
        """Why a failed connection cannot succeed by retrying, or ``None`` (retry it).  Only
        before the run's first Welcome: a bot that has played through this server already
        retries as after any failure (a server restarting may drop a connection in the middle
        of its handshake)."""
        if not self.tls or ever_welcomed:
            return None
        lowered = details.lower()
        if _UNUSABLE_FILES in lowered:
            given = (self.ca, self.client_cert, self.client_key)
            files = ", ".join(str(file) for file in given if file is not None)
            return (
                f"cannot set up TLS for {self.address}: grpc could not use the certificates or "
                f"the key in {files} (is one of them broken?) ({details})"
            )
        if any(words in lowered for words in _HANDSHAKE_FAILURES):
            against = (
                f"the CA in {self.ca}"
                if self.ca is not None
                else f"the system's root certificates (give the server's CA: ca= or {CA_VARIABLE})"
            )
            return (
                f"TLS handshake with {self.address} failed: the server's certificate could not "
                f"be verified against {against}, or it does not name the host connected to "
                f"({details})"
            )
        if _CLOSED_IN_HANDSHAKE in lowered:
            if self.client_cert is None:
                need = (
                    "it requires a client certificate (mutual TLS): give client_cert= and "
                    f"client_key= ({CLIENT_CERT_VARIABLE}, {CLIENT_KEY_VARIABLE})"
                )
            else:
                need = (
                    f"it does not accept the client certificate {self.client_cert} (mutual TLS: "
                    "the certificate must be signed by the CA the server trusts)"
                )
            return (
                f"the server at {self.address} closed the connection during the TLS handshake: "
                f"{need} ({details})"
            )
        return None

    def hint(self, details: str) -> str:
        """A hint for a plaintext connection that a TLS server closed (retried as any other)."""
        if self.tls or self.dial.startswith("unix:") or _CLOSED_IN_HANDSHAKE not in details.lower():
            return ""
        return f" (if the server serves TLS, connect to {TLS_SCHEME}{self.dial})"


def target_for(
    address: str,
    *,
    ca: PathLike | None = None,
    client_cert: PathLike | None = None,
    client_key: PathLike | None = None,
) -> Target:
    """The connection ``address`` and the TLS files given (else their environment variables)
    ask for; a ``ValueError`` naming the file for one that is missing or not PEM."""
    ca_file = _given(ca, CA_VARIABLE, "CA file")
    cert_file = _given(client_cert, CLIENT_CERT_VARIABLE, "client certificate")
    key_file = _given(client_key, CLIENT_KEY_VARIABLE, "client key")
    wants_tls = address.startswith(TLS_SCHEME)
    dial = address.removeprefix(TLS_SCHEME)
    if dial.startswith("unix:"):
        if wants_tls:
            raise ValueError(
                f"{address}: a unix socket is served in plaintext; drop {TLS_SCHEME} (TLS is "
                "for TCP addresses)"
            )
        if ca_file or cert_file or key_file:
            logger.warning(
                "%s is a unix socket, which the server serves in plaintext: the TLS files "
                "given are not used",
                address,
            )
        return Target(address, dial)
    if (cert_file is None) != (key_file is None):
        raise ValueError(
            "a client certificate needs its key and a key its certificate: give both "
            f"client_cert= and client_key= ({CLIENT_CERT_VARIABLE}, {CLIENT_KEY_VARIABLE})"
        )
    if not (wants_tls or ca_file or cert_file):
        return Target(address, dial)
    root = _read_pem(ca_file, b"-----BEGIN CERTIFICATE-----")
    chain = _read_pem(cert_file, b"-----BEGIN CERTIFICATE-----")
    key = _read_pem(key_file, b"PRIVATE KEY-----")
    credentials = grpc.ssl_channel_credentials(
        root_certificates=root, private_key=key, certificate_chain=chain
    )
    return Target(
        address,
        dial,
        credentials,
        ca_file.path if ca_file else None,
        cert_file.path if cert_file else None,
        key_file.path if key_file else None,
    )


@dataclass(frozen=True)
class _File:
    """A file given, and what it is called in messages (with the variable it came from)."""

    path: Path
    name: str


def _given(value: PathLike | None, variable: str, what: str) -> _File | None:
    """The file given, else the environment variable's (unset or empty: none)."""
    if value is not None and str(value):
        return _File(Path(value), f"{what} {value}")
    from_env = os.environ.get(variable)
    return _File(Path(from_env), f"{what} {from_env} (from {variable})") if from_env else None


#: The most a PEM file may hold (a certificate is a few KiB, a system's CA bundle ~200 KiB):
#: ``/dev/zero`` named as one was read until the memory ran out (review s59b, M1).
MAX_PEM_BYTES = 1024 * 1024


def _read_small_file(path: Path) -> bytes:
    """A regular file's bytes, at most :data:`MAX_PEM_BYTES` (opened without blocking: a
    FIFO is refused, not waited on); ``OSError`` saying why not."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise OSError("not a regular file (a folder, a device, a pipe, a socket?)")
    with os.fdopen(fd, "rb") as opened:
        data = opened.read(MAX_PEM_BYTES + 1)
    if len(data) > MAX_PEM_BYTES:
        raise OSError(f"larger than {MAX_PEM_BYTES:,} bytes")
    return data


def _read_pem(file: _File | None, marker: bytes) -> bytes | None:
    """The file's bytes, checked to hold a PEM block: grpc takes anything and only fails at
    the handshake, with a message that names no file."""
    if file is None:
        return None
    try:
        data = _read_small_file(file.path)
    except FileNotFoundError:
        raise ValueError(f"{file.name}: no such file") from None
    except OSError as problem:
        raise ValueError(f"{file.name}: cannot read it: {problem.strerror or problem}") from None
    if marker not in data:
        raise ValueError(f"{file.name}: not PEM (no '{marker.decode().strip('-')}' block)")
    return data
