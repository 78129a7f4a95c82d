"""Certificates made in the test: a certificate authority, and certificates it signs (a server's
for 127.0.0.1 and localhost, a client's), written as PEM files.  Nothing is read from disk but
what these functions write, so the TLS tests need no fixtures checked in (and none expire)."""

from __future__ import annotations

import datetime
import ipaddress
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

_ONE_DAY = datetime.timedelta(days=1)


@dataclass(frozen=True)
class Authority:
    """A certificate authority: its certificate (the file clients trust) and its key."""

    name: str
    certificate: x509.Certificate
    key: ec.EllipticCurvePrivateKey
    cert_file: Path


@dataclass(frozen=True)
class Issued:
    """A certificate an authority signed, with its key, as PEM files."""

    cert_file: Path
    key_file: Path


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _validity(builder: x509.CertificateBuilder, expired: bool = False) -> x509.CertificateBuilder:
    now = datetime.datetime.now(datetime.UTC)
    if expired:
        return builder.not_valid_before(now - 3 * _ONE_DAY).not_valid_after(now - _ONE_DAY)
    return builder.not_valid_before(now - _ONE_DAY).not_valid_after(now + _ONE_DAY)


def _write_key(key: ec.EllipticCurvePrivateKey, path: Path) -> None:
    path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )


def make_authority(folder: Path, name: str = "Bisca Test CA") -> Authority:
    """A self-signed CA certificate in ``folder/<name>.ca.pem``."""
    key = ec.generate_private_key(ec.SECP256R1())
    subject = _name(name)
    certificate = (
        _validity(x509.CertificateBuilder())
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .sign(key, hashes.SHA256())
    )
    folder.mkdir(parents=True, exist_ok=True)
    cert_file = folder / f"{name.replace(' ', '-').lower()}.ca.pem"
    cert_file.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    return Authority(name, certificate, key, cert_file)


def issue(
    authority: Authority, folder: Path, common_name: str, *, server: bool, expired: bool = False
) -> Issued:
    """A certificate signed by ``authority``: a server's (for 127.0.0.1, ::1 and localhost)
    or a client's, in ``folder/<common_name>.{cert,key}.pem`` (valid from yesterday to
    tomorrow, or ``expired`` yesterday)."""
    key = ec.generate_private_key(ec.SECP256R1())
    usage = ExtendedKeyUsageOID.SERVER_AUTH if server else ExtendedKeyUsageOID.CLIENT_AUTH
    builder = (
        _validity(x509.CertificateBuilder(), expired)
        .subject_name(_name(common_name))
        .issuer_name(authority.certificate.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(authority.key.public_key()),
            critical=False,
        )
    )
    if server:
        builder = builder.add_extension(
            x509.SubjectAlternativeName(
                [
                    x509.DNSName("localhost"),
                    x509.IPAddress(ipaddress.ip_address("127.0.0.1")),
                    x509.IPAddress(ipaddress.ip_address("::1")),
                ]
            ),
            critical=False,
        )
    certificate = builder.sign(authority.key, hashes.SHA256())
    folder.mkdir(parents=True, exist_ok=True)
    cert_file = folder / f"{common_name}.cert.pem"
    key_file = folder / f"{common_name}.key.pem"
    cert_file.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    _write_key(key, key_file)
    return Issued(cert_file, key_file)
