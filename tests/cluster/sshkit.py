"""Client hosts for tests: network namespaces, each running a real sshd (Debian's
openssh-server) that takes keys only, with its own host key, joined to a cluster's DC.

    root namespace  cps<tag>  10.81.0.1/24 ---- bridge in cassperf-ssh<tag>-lan
                                                  |-- cassperf-ssh<tag>-h1  10.81.0.11  sshd :22
                                                  |-- cassperf-ssh<tag>-h2  10.81.0.12  sshd :22
    host k  "dc" 10.81.<10+k>.2/30 ---- "cph<k>" 10.81.<10+k>.1/30 in its DC's namespace;
            route to the DC's node subnet through it

The hosts reach each other and this machine over the LAN (Dask scheduler, workers, the
notebook's client), and their own DC's nodes over their DC link (as a client VM in a DC would).
Nothing else on the machine changes: the root namespace's end of the LAN link goes with the LAN
namespace, each DC link with its host namespace.

Keys and configuration live in a 0700 folder under /run (sshd's StrictModes refuses anything
under the world-writable /tmp): a per-test ed25519 client key pair, one host key per host, the
authorized_keys, known_hosts pinning each host's key, and the OpenSSH client config the workbook
gets through CASSPERF_SSH_CONFIG. Root is needed (namespaces, sshd).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import psutil

from cassperf.cluster import netns

SSHD = "/usr/sbin/sshd"
LAN = "10.81.0"


def _sh(*cmd: str) -> str:
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
    if out.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {out.returncode}: {out.stderr.strip()}")
    return out.stdout


@dataclass
class SshHosts:
    """``n`` client hosts; ``dcs[k]`` names the DC namespace host k joins (and its node subnet)."""

    tag: str
    links: list[tuple[str, str]]             # per host: (DC namespace, the DC's node subnet, e.g. 10.80.1.0/24)
    folder: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="cassperf-ssh-", dir="/run")))
    sshd_pids: list[int] = field(default_factory=list)

    @property
    def lan(self) -> str:
        return f"cassperf-ssh{self.tag}-lan"

    def namespace(self, k: int) -> str:
        return f"cassperf-ssh{self.tag}-h{k}"

    def address(self, k: int) -> str:
        return f"{LAN}.{10 + k}"

    @property
    def addresses(self) -> list[str]:
        return [self.address(k) for k in range(1, len(self.links) + 1)]

    @property
    def config(self) -> Path:
        return self.folder / "ssh_config"

    @property
    def known_hosts(self) -> Path:
        return self.folder / "known_hosts"

    # -- up -------------------------------------------------------------------------------------
    def up(self) -> "SshHosts":
        try:
            self._keys()
            self._network()
            for k in range(1, len(self.links) + 1):
                self._sshd(k)
        except BaseException:
            self.down()
            raise
        return self

    def _keys(self) -> None:
        os.chmod(self.folder, 0o700)
        _sh("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "cassperf-test-client", "-f",
            str(self.folder / "client_key"))
        shutil.copy(self.folder / "client_key.pub", self.folder / "authorized_keys")
        os.chmod(self.folder / "authorized_keys", 0o600)
        pins = []
        for k in range(1, len(self.links) + 1):
            key = self.folder / f"host{k}_key"
            _sh("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", f"host{k}", "-f", str(key))
            kind, blob = (key.with_suffix(".pub").read_text().split()[:2])
            pins.append(f"{self.address(k)} {kind} {blob}\n")
        self.known_hosts.write_text("".join(pins))
        self.config.write_text(f"Host {LAN}.*\n  User root\n  IdentityFile {self.folder / 'client_key'}\n"
                               f"  IdentitiesOnly yes\n  UserKnownHostsFile {self.known_hosts}\n"
                               f"  PasswordAuthentication no\n  KbdInteractiveAuthentication no\n")
        os.chmod(self.config, 0o600)

    def _network(self) -> None:
        up = f"cps{self.tag}"
        _sh("ip", "netns", "add", self.lan)
        _sh("ip", "-n", self.lan, "link", "add", "br0", "type", "bridge")
        _sh("ip", "-n", self.lan, "link", "set", "br0", "up")
        _sh("ip", "link", "add", up, "type", "veth", "peer", "name", "uplink", "netns", self.lan)
        _sh("ip", "-n", self.lan, "link", "set", "uplink", "master", "br0", "up")
        _sh("ip", "addr", "add", f"{LAN}.1/24", "dev", up)
        _sh("ip", "link", "set", up, "up")
        for k, (dc_ns, subnet) in enumerate(self.links, start=1):
            ns = self.namespace(k)
            _sh("ip", "netns", "add", ns)
            _sh("ip", "-n", ns, "link", "set", "lo", "up")
            _sh("ip", "-n", self.lan, "link", "add", f"h{k}", "type", "veth", "peer", "name", "lan", "netns", ns)
            _sh("ip", "-n", self.lan, "link", "set", f"h{k}", "master", "br0", "up")
            _sh("ip", "-n", ns, "addr", "add", f"{self.address(k)}/24", "dev", "lan")
            _sh("ip", "-n", ns, "link", "set", "lan", "up")
            link = f"10.81.{10 + k}"
            _sh("ip", "-n", ns, "link", "add", "dc", "type", "veth", "peer", "name", f"cph{self.tag}{k}", "netns", dc_ns)
            _sh("ip", "-n", dc_ns, "addr", "add", f"{link}.1/30", "dev", f"cph{self.tag}{k}")
            _sh("ip", "-n", dc_ns, "link", "set", f"cph{self.tag}{k}", "up")
            _sh("ip", "-n", ns, "addr", "add", f"{link}.2/30", "dev", "dc")
            _sh("ip", "-n", ns, "link", "set", "dc", "up")
            _sh("ip", "-n", ns, "route", "add", subnet, "via", f"{link}.1")

    def _sshd(self, k: int) -> None:
        conf = self.folder / f"sshd{k}.conf"
        conf.write_text(f"ListenAddress {self.address(k)}\nPort 22\nHostKey {self.folder / f'host{k}_key'}\n"
                        f"AuthorizedKeysFile {self.folder / 'authorized_keys'}\nPidFile none\n"
                        "PasswordAuthentication no\nKbdInteractiveAuthentication no\nPubkeyAuthentication yes\n"
                        "PermitRootLogin prohibit-password\nUsePAM no\nStrictModes yes\nPrintMotd no\n"
                        "AcceptEnv none\nMaxStartups 50\nLogLevel VERBOSE\n")
        Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)      # sshd's privilege separation folder
        log = open(self.folder / f"sshd{k}.log", "ab")
        proc = subprocess.Popen(["ip", "netns", "exec", self.namespace(k), SSHD, "-D", "-e", "-f", str(conf)],
                                stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
        log.close()
        self.sshd_pids.append(proc.pid)
        deadline = time.monotonic() + 10
        while "Server listening" not in (self.folder / f"sshd{k}.log").read_text():
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"sshd of host {k} did not start: {(self.folder / f'sshd{k}.log').read_text()}")
            time.sleep(0.05)

    # -- down -----------------------------------------------------------------------------------
    def pids(self) -> list[int]:
        """Every process inside the hosts' namespaces (sshd, its sessions, Dask workers, engines)."""
        return [pid for k in range(1, len(self.links) + 1) for pid in netns.namespace_pids(self.namespace(k))]

    def down(self) -> None:
        """End the sshds and whatever runs in the hosts' namespaces, delete the namespaces (their
        links go with them) and the key folder."""
        netns._end([*self.sshd_pids, *self.pids()])
        subprocess.run(["ip", "link", "del", f"cps{self.tag}"], capture_output=True)   # else gone a moment after the LAN
        for ns in [*(self.namespace(k) for k in range(1, len(self.links) + 1)), self.lan]:
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)
        shutil.rmtree(self.folder, ignore_errors=True)

    def leftovers(self) -> list[str]:
        """What of these hosts still exists: namespaces, the root namespace's LAN link, processes."""
        have = set(os.listdir("/run/netns")) if os.path.isdir("/run/netns") else set()
        left = sorted(n for n in have if n.startswith(f"cassperf-ssh{self.tag}-"))
        if subprocess.run(["ip", "link", "show", f"cps{self.tag}"], capture_output=True).returncode == 0:
            left.append(f"link cps{self.tag}")
        left += [f"pid {p}" for p in self.sshd_pids if psutil.pid_exists(p)
                 and psutil.Process(p).status() != psutil.STATUS_ZOMBIE]
        return left
