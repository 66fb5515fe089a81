"""X.509 material made by the workbook itself: a CA and the certificates it signs, as PEM.

Two users: the Dask placement's per-experiment certificates (experiments.dask_tls) and an
embedded cluster's CA and node certificates (cluster.tls). Keys are ECDSA P-256 (every client
here takes them: Python's ssl, the DataStax C++ driver under acsylla, latte's OpenSSL, Java's
JSSE and Cassandra's PEM key reader); certificates carry their hosts as subject alternative
names (IP addresses as IP entries) and may serve as TLS server and client.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
import os
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

#: a certificate is valid from this long before it was made (clocks of the parties may differ a little)
BACKDATE = dt.timedelta(minutes=5)


@dataclass(frozen=True)
class Issued:
    """A certificate and its private key (a CA's, or one the CA signed)."""

    cert: x509.Certificate
    key: ec.EllipticCurvePrivateKey

    def cert_pem(self) -> bytes:
        return self.cert.public_bytes(serialization.Encoding.PEM)

    def key_pem(self) -> bytes:
        """The private key as unencrypted PKCS#8 PEM (`BEGIN PRIVATE KEY`, what Cassandra's PEM reader takes)."""
        return self.key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                      serialization.NoEncryption())


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def make_ca(common_name: str, validity: dt.timedelta) -> Issued:
    """A self-signed CA that may sign end certificates only (path length 0), valid `validity` from now."""
    now = dt.datetime.now(dt.timezone.utc)
    key = ec.generate_private_key(ec.SECP256R1())
    name = _name(common_name)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - BACKDATE)
            .not_valid_after(now + validity)
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .add_extension(x509.KeyUsage(digital_signature=False, content_commitment=False, key_encipherment=False,
                                         data_encipherment=False, key_agreement=False, key_cert_sign=True,
                                         crl_sign=True, encipher_only=False, decipher_only=False), critical=True)
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
            .sign(key, hashes.SHA256()))
    return Issued(cert, key)


def issue(ca: Issued, common_name: str, hosts: tuple[str, ...], validity: dt.timedelta) -> Issued:
    """A certificate signed by `ca` for `hosts` (IP addresses become IP entries, anything else
    DNS names), usable for TLS server and client authentication, valid `validity` from now."""
    now = dt.datetime.now(dt.timezone.utc)
    key = ec.generate_private_key(ec.SECP256R1())
    names: list[x509.GeneralName] = []
    for host in hosts:
        try:
            names.append(x509.IPAddress(ipaddress.ip_address(host)))
        except ValueError:
            names.append(x509.DNSName(host))
    cert = (x509.CertificateBuilder().subject_name(_name(common_name)).issuer_name(ca.cert.subject)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - BACKDATE).not_valid_after(now + validity)
            .add_extension(x509.SubjectAlternativeName(names), critical=False)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH]),
                           critical=False)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca.key.public_key()), critical=False)
            .sign(ca.key, hashes.SHA256()))
    return Issued(cert, key)


def write_private(path: Path, data: bytes) -> Path:
    """Create `path` with mode 0600 from the first byte (never wider, whatever the umask);
    an existing file is an error (FileExistsError), never overwritten."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    return path
