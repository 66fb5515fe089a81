"""TLS between clients and a cluster: what a client trusts (TlsOptions) and, for an embedded
cluster made with `tls=True`, the cluster's own CA and node certificates.

One description serves every client: `TlsOptions` names PEM files (the CA that signed the
nodes' certificates; optionally a client certificate and key). A user's cluster gets it from
the environment (`CASSPERF_SSL_CA`, `CASSPERF_SSL_CERT`, `CASSPERF_SSL_KEY`,
`CASSPERF_SSL_VERIFY=0` to skip verification); an embedded TLS cluster from its own folder
(`<cluster>/tls/ca.pem`). The driver sessions, the engine's backends (acsylla, cassandra-driver),
cassandra-stress, latte and cqlsh all start from it.

An embedded cluster's files (`ensure_cluster_tls`), in `<cluster>/tls/` (folder 0700, files 0600):

    ca.pem          the cluster's CA certificate (what clients trust)
    <node>.pem      the node's private key (PKCS#8) and certificate chain: its PEM keystore for
                    Cassandra's PEMBasedSslContextFactory (Cassandra 4.1+), no keytool needed

The CA's private key signs every node's certificate at the first start and is then dropped, so
nobody (the owner included) can sign another certificate the nodes would trust. A node
certificate names its address (IP subject alternative name): clients that verify identity
(Python's ssl with check_hostname, acsylla's PEER_IDENTITY) match it.
"""

from __future__ import annotations

import datetime as dt
import os
import secrets
import ssl
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cassperf.certs import issue, make_ca, write_private
from cassperf.errors import ConfigError

#: an embedded cluster's certificates outlive any study made on it
VALIDITY = dt.timedelta(days=3650)
PEM_FACTORY = "org.apache.cassandra.security.PEMBasedSslContextFactory"

#: Cipher suites Java clients (cassandra-stress) are told to offer: TLS 1.3's and ECDHE with AES-GCM for
#: ECDSA and RSA node keys. cassandra-stress's own default (TLS_RSA_WITH_AES_*_CBC_SHA) shares no
#: suite with a node whose certificate has an EC key.
JAVA_CIPHER_SUITES = ("TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384",
                      "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
                      "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384")


@dataclass(frozen=True)
class TlsOptions:
    """What a client needs to talk TLS to a cluster: PEM file paths (picklable; no secret inside)."""

    ca_file: str | None = None
    cert_file: str | None = None
    key_file: str | None = None
    verify: bool = True

    @classmethod
    def from_env(cls) -> "TlsOptions | None":
        ca, cert, key = (os.environ.get(k) for k in ("CASSPERF_SSL_CA", "CASSPERF_SSL_CERT", "CASSPERF_SSL_KEY"))
        if not (ca or cert):
            return None
        return cls(ca, cert, key, verify=os.environ.get("CASSPERF_SSL_VERIFY", "1") != "0")

    def context(self) -> ssl.SSLContext:
        """A client SSLContext (cassandra-driver's `ssl_context`): the CA file's certificates
        trusted, the node's address checked against its certificate unless verify is off."""
        ctx = ssl.create_default_context(purpose=ssl.Purpose.SERVER_AUTH, cafile=self.ca_file)
        if not self.verify:
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
        if self.cert_file:
            ctx.load_cert_chain(self.cert_file, self.key_file)
        return ctx

    def read(self, which: str) -> str | None:
        """The text of the `which` file ("ca_file", "cert_file", "key_file"), or None when not
        set; ConfigError naming the file when it cannot be read."""
        path = getattr(self, which)
        if not path:
            return None
        try:
            return Path(path).read_text()
        except OSError as exc:
            raise ConfigError(f"TLS {which.replace('_file', '')} file {path}: {exc.strerror or exc}; point "
                              f"CASSPERF_SSL_{which.replace('_file', '').upper()} at a readable PEM file") from None


@dataclass(frozen=True)
class ClusterTls:
    """An embedded cluster's TLS files (module doc)."""

    folder: Path

    @property
    def ca(self) -> Path:
        return self.folder / "ca.pem"

    def keystore(self, node: str) -> Path:
        return self.folder / f"{node}.pem"

    def client_options(self) -> TlsOptions:
        return TlsOptions(ca_file=str(self.ca))


def ensure_cluster_tls(cluster_root: Path, nodes: list[tuple[str, str]]) -> ClusterTls:
    """The cluster's TLS files for `nodes` ((name, address) pairs), made on the first call (a
    fresh CA signs one certificate per node, then its key is dropped) and reused after.
    ConfigError when some are missing from a folder made before (the CA key is gone: no new
    node certificate can be signed)."""
    files = ClusterTls(cluster_root / "tls")
    if not files.folder.exists():
        files.folder.mkdir(mode=0o700, parents=True)
        ca = make_ca(f"cassperf cluster {cluster_root.name} CA", VALIDITY)
        for name, address in nodes:
            node = issue(ca, f"cassperf {cluster_root.name} {name}", (address,), VALIDITY)
            write_private(files.keystore(name), node.key_pem() + node.cert_pem() + ca.cert_pem())
        write_private(files.ca, ca.cert_pem())     # last: its presence says the folder is complete
    missing = [p.name for p in [files.ca, *(files.keystore(n) for n, _ in nodes)] if not p.exists()]
    if missing:
        raise ConfigError(f"{files.folder} lacks {', '.join(missing)} (its CA signs no new certificate). Fix: "
                          f"stop the cluster, remove {files.folder} and start it again (new certificates are made)")
    return files


def encryption_yaml(files: ClusterTls, node: str, internode: bool) -> dict[str, Any]:
    """cassandra.yaml keys of one node of a TLS cluster: client connections TLS only (no
    plaintext on the CQL port), and with `internode` the traffic between DCs too (each node
    presents its certificate and requires the peer's, signed by the cluster's CA)."""
    factory = {"class_name": PEM_FACTORY}
    conf: dict[str, Any] = {"client_encryption_options": {
        "enabled": True, "optional": False, "ssl_context_factory": factory,
        "keystore": str(files.keystore(node)), "require_client_auth": False}}
    if internode:
        conf["server_encryption_options"] = {
            "internode_encryption": "dc", "ssl_context_factory": factory,
            "keystore": str(files.keystore(node)), "truststore": str(files.ca),
            "require_client_auth": True}
    return conf


def java_truststore(ca_pem: str, password: str) -> bytes:
    """The CA certificates of `ca_pem` as a PKCS#12 trust store Java's JSSE loads (also as
    store type JKS, cassandra-stress's default), protected by `password`."""
    from cryptography import x509
    from cryptography.hazmat.primitives.serialization import BestAvailableEncryption, pkcs12

    certs = x509.load_pem_x509_certificates(ca_pem.encode())
    entries = [pkcs12.PKCS12Certificate(c, f"ca{k}".encode()) for k, c in enumerate(certs)]
    return pkcs12.serialize_java_truststore(entries, BestAvailableEncryption(password.encode()))


def java_keystore(cert_pem: str, key_pem: str, password: str) -> bytes:
    """A client key and its certificate chain as a PKCS#12 key store (cassandra-stress's
    `keystore=`), key and store protected by `password`."""
    from cryptography import x509
    from cryptography.hazmat.primitives.serialization import BestAvailableEncryption, load_pem_private_key, pkcs12

    chain = x509.load_pem_x509_certificates(cert_pem.encode())
    key = load_pem_private_key(key_pem.encode(), password=None)
    return pkcs12.serialize_key_and_certificates(b"client", key, chain[0], chain[1:] or None,  # type: ignore[arg-type]
                                                 BestAvailableEncryption(password.encode()))


def store_password() -> str:
    """A fresh password for a Java key or trust store made for one tool run."""
    return secrets.token_urlsafe(24)
