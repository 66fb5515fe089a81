"""Distance between data centers on one host: one network namespace per DC, joined through a
router namespace that delays every cross-DC packet (LocalCluster(inter_dc_rtt_ms=27)).

    cassperf-<netid>-rt      router: one veth link per DC (dc1, dc2, ...), forwarding on
        |-- dc1 ------- rt  cassperf-<netid>-dc1   node addresses 10.<o3>.1.<o4>... on rt
        |-- dc2 ------- rt  cassperf-<netid>-dc2   node addresses 10.<o3>.2.<o4>...

(netid: the cluster's name and 6 hex digits of its folder's path, see network_id.)

`o3`/`o4` are the third and fourth octets of the cluster's first_address (127.0.8.1 gives
10.8.1.1 for the first node of dc1, 10.8.2.1 for the first of dc2). These addresses exist only
inside the cluster's namespaces: nothing is added to the host's interfaces, addresses or
routes, and two clusters' namespaces never see each other. Nodes of one DC share its namespace,
so intra-DC traffic never leaves it (no delay). Each DC namespace's default route points at
the router (10.<o3>.<k>.254), so any DC reaches every node, a remote one at the set RTT.

The delay, where the kernel has `sch_netem`: `tc netem delay RTT/2` on each of the router's DC
links (every cross-DC packet leaves the router once). Where it has not (these machines): a TUN
device `dly` in the router namespace, policy rules sending every packet that arrives from a DC
link into it, and cassperf.cluster.delay_router re-injecting each packet RTT/2 later; packets
coming out of `dly` follow the main table to the other DC's link. A round trip crosses the delay
twice.

Reaching the nodes: processes run inside a DC's namespace (`command(dc, argv)` is an `ip netns
exec` prefix: nodes, nodetool, cqlsh, client processes), and in-process sockets are made there
by `entered(namespace)` (setns on the calling thread only; threads and processes it starts
inherit the namespace) or by the driver connection class of `connection_class(namespace)`,
which creates each driver socket inside the namespace whatever thread opens it.

Lifetime: the network lives as long as the cluster's nodes (`DcNetwork.up()` in start,
`down()` in stop); `remove_leftovers(netid)` finds namespaces (`cassperf-<netid>-rt`,
`cassperf-<netid>-dc<k>`, netid = `<cluster>-<hash of its folder>`) and router processes
(command line tagged with the router namespace's name) by name, so `cassperf cluster
stop/destroy` clears what a killed process left. Needs root (CAP_SYS_ADMIN, CAP_NET_ADMIN), iproute2 and network namespaces; without them
`check_support()` says so in one line.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import functools
import hashlib
import ipaddress
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil

from cassperf.cluster import owners
from cassperf.cluster.jolokia import JolokiaEndpoint
from cassperf.constraints import Real
from cassperf.errors import ClusterError, ConfigError

PREFIX = "cassperf-"
ROUTER_DEV = "dly"
#: routing table of the packets that enter the delay line (anything but 253..255)
DELAY_TABLE = 100
NETNS_DIR = Path("/run/netns")
CLONE_NEWNET = 0x40000000
ROUTER_SCRIPT = Path(__file__).with_name("delay_router.py")
#: SCHED_FIFO priority of the delay router: on a busy host (load 20 on 2 cores) a normal-priority
#: router released packets 5-30 ms late at p99; real-time priority wakes it on time. It sleeps
#: between packets, and the kernel caps real-time tasks at 95% of a core (sched_rt_runtime_us).
ROUTER_PRIORITY = 10
#: the router's address on each DC subnet
ROUTER_HOST = 254


def network_id(cluster: str, root: Path) -> str:
    """`<cluster>-<6 hex digits of the cluster folder's path>`: namespace names are global to the
    host, so two clusters of one name in different data folders (two checkouts, two test runs)
    get networks of their own and never remove each other's."""
    digest = hashlib.sha1(str(Path(root).resolve()).encode()).hexdigest()[:6]
    return f"{cluster}-{digest}"


def router_namespace(netid: str) -> str:
    return f"{PREFIX}{netid}-rt"


def dc_namespace(netid: str, dc_index: int) -> str:
    """Namespace of the DC at position `dc_index` (1-based, topology order)."""
    return f"{PREFIX}{netid}-dc{dc_index}"


def _ours_re(netid: str) -> re.Pattern[str]:
    # suffixes carry no '-', so network "a-1a2b3c" never matches "a-1a2b3c-b-..."
    return re.compile(rf"^{re.escape(PREFIX + netid)}-(rt|dc[0-9]+)$")


# -- support and commands ------------------------------------------------------------------------
def check_support(rtt_ms: float) -> None:
    """Raise ConfigError (one line: what is missing, the fix) unless namespaces can be made here."""
    what = f"inter_dc_rtt_ms={rtt_ms:g}"
    if os.geteuid() != 0:
        raise ConfigError(f"{what} puts each DC in a network namespace, which needs root (running as uid "
                          f"{os.geteuid()}); run as root, or leave inter_dc_rtt_ms unset (no distance between DCs)")
    if shutil.which("ip") is None:
        raise ConfigError(f"{what} needs iproute2's `ip` command, not found on PATH; install iproute2 "
                          "(apt-get install iproute2), or leave inter_dc_rtt_ms unset")
    if not Path("/proc/self/ns/net").exists():
        raise ConfigError(f"{what}: this kernel has no network namespaces (/proc/self/ns/net is missing); "
                          "leave inter_dc_rtt_ms unset (no distance between DCs)")
    if not Path("/dev/net/tun").exists() and not netem_in_kernel():
        raise ConfigError(f"{what}: the kernel has neither sch_netem nor /dev/net/tun for the delay router; "
                          "leave inter_dc_rtt_ms unset (no distance between DCs)")


def ip(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    """Run `ip ARGS`; ClusterError naming the command and its stderr on failure."""
    return run(["ip", *args], check=check)


def run(cmd: list[str], check: bool = True) -> subprocess.CompletedProcess[str]:
    if shutil.which(cmd[0]) is None:
        proc = subprocess.CompletedProcess(cmd, 127, "", f"{cmd[0]}: command not found (iproute2)")
    else:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
    if check and proc.returncode != 0:
        raise ClusterError(f"network set-up failed: `{' '.join(cmd)}` exited {proc.returncode}: "
                           f"{(proc.stderr or proc.stdout).strip()}")
    return proc


def namespaces() -> list[str]:
    """Names of every named network namespace on the host (`ip netns list`)."""
    if not NETNS_DIR.is_dir():
        return []
    return sorted(p.name for p in NETNS_DIR.iterdir())


def netem_in_kernel() -> bool:
    """Whether `tc qdisc ... netem` works here: tried on the loopback of a throwaway namespace."""
    probe = f"{PREFIX}probe-{os.getpid()}"
    if ip("netns", "add", probe, check=False).returncode != 0:
        return False
    try:
        ip("-n", probe, "link", "set", "lo", "up", check=False)
        return run(["tc", "-n", probe, "qdisc", "add", "dev", "lo", "root", "netem", "delay", "1ms"],
                   check=False).returncode == 0
    finally:
        ip("netns", "del", probe, check=False)


# -- setns on the calling thread -----------------------------------------------------------------
_libc = ctypes.CDLL(None, use_errno=True)
_thread = threading.local()


def current(candidates: list[str] | None = None) -> str | None:
    """The namespace the calling thread is in: the one it entered with `entered()`, else (a
    thread started inside such a block inherits the namespace but not the record) the one of
    `candidates` whose inode is the thread's; None when neither."""
    stack = getattr(_thread, "stack", None)
    if stack:
        return stack[-1]
    if candidates:
        mine = os.stat("/proc/thread-self/ns/net").st_ino
        for ns in candidates:
            try:
                if os.stat(NETNS_DIR / ns).st_ino == mine:
                    return ns
            except FileNotFoundError:
                continue
    return None


def _setns(fd: int) -> None:
    if _libc.setns(fd, CLONE_NEWNET) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"setns: {os.strerror(err)}")


@contextlib.contextmanager
def entered(namespace: str) -> Iterator[None]:
    """Run the block with the calling thread in network namespace `namespace`: sockets made in
    it (and threads or processes started from it) belong to that namespace. Other threads are
    untouched; the thread's own namespace comes back on exit."""
    try:
        target = os.open(NETNS_DIR / namespace, os.O_RDONLY)
    except FileNotFoundError:
        raise ClusterError(f"network namespace {namespace} does not exist (is the cluster started?)") from None
    own = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
    stack = _thread.__dict__.setdefault("stack", [])
    try:
        _setns(target)
        stack.append(namespace)
        try:
            yield
        finally:
            stack.pop()
            _setns(own)
    finally:
        os.close(target)
        os.close(own)


@functools.cache
def connection_class(namespace: str) -> type:
    """cassandra-driver connection class whose sockets are created inside `namespace` (whichever
    driver thread opens them): Cluster(connection_class=connection_class(ns))."""
    from cassandra.cluster import DefaultConnection

    class NamespaceConnection(DefaultConnection):  # type: ignore[misc, valid-type]
        def _connect_socket(self) -> None:
            with entered(namespace):
                super()._connect_socket()

    NamespaceConnection.__name__ = NamespaceConnection.__qualname__ = f"NamespaceConnection[{namespace}]"
    return NamespaceConnection


@dataclass(frozen=True)
class NamespacedJolokiaEndpoint(JolokiaEndpoint):
    """A node's Jolokia agent asked from inside `namespace` (the node's DC): the sampler and
    JolokiaClient both go through `request`, so both reach nodes behind the delay."""

    namespace: str = ""

    def request(self, path: str = "", body: Any = None, timeout_s: float = 5.0) -> Any:
        with entered(self.namespace):
            return super().request(path, body, timeout_s)


# -- the network ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class DcLink:
    dc: str
    index: int            # 1-based, topology order
    namespace: str
    subnet: ipaddress.IPv4Network
    router_address: str   # the DC namespace's gateway, on the router's link `link`
    link: str             # the router's end of the veth pair (the DC's end is named "rt")


def dc_subnet(first_address: str, dc_index: int) -> ipaddress.IPv4Network:
    o3 = ipaddress.IPv4Address(first_address).packed[2]
    return ipaddress.IPv4Network(f"10.{o3}.{dc_index}.0/24")


def node_address(first_address: str, dc_index: int, position: int) -> str:
    """Address of the `position`-th node (0-based) of DC `dc_index`: 10.<o3>.<dc>.<o4 + position>."""
    o4 = ipaddress.IPv4Address(first_address).packed[3]
    host = o4 + position
    if not 1 <= host < ROUTER_HOST:
        raise ConfigError(f"node {position + 1} of DC {dc_index} would get host number {host} in "
                          f"{dc_subnet(first_address, dc_index)}; use a first_address ending in a lower number "
                          f"(at most {ROUTER_HOST - 1} nodes per DC)")
    return str(dc_subnet(first_address, dc_index).network_address + host)


class DcNetwork:
    """The namespaces, links, routes and delay of one cluster (see the module docstring).

    cluster     the cluster's name (namespace names derive from it)
    dcs         DC names in topology order
    nodes       (dc name, address) of every node
    rtt_ms      round-trip time added between any two DCs, ms
    state_dir   where the router's pid file, log and stats go (the cluster's working folder)
    """

    def __init__(self, cluster: str, dcs: list[str], nodes: list[tuple[str, str]], first_address: str,
                 rtt_ms: float, state_dir: Path) -> None:
        if not Real(0, 10_000, low_open=True).accepts(rtt_ms):
            shown = f"{rtt_ms:g}" if isinstance(rtt_ms, (int, float)) else repr(rtt_ms)
            raise ConfigError(f"inter_dc_rtt_ms={shown}: expected a round-trip time in ms, 0 < RTT <= 10000")
        if len(dcs) < 2:
            raise ConfigError(f"inter_dc_rtt_ms={rtt_ms:g} delays traffic between data centers, but the topology has "
                              f"one DC ({dcs[0] if dcs else 'none'}); give two or more (e.g. 'dc1:1,dc2:1') or leave "
                              "inter_dc_rtt_ms unset")
        self.cluster = cluster
        self.id = network_id(cluster, state_dir)
        self.rtt_ms = float(rtt_ms)
        self.router = router_namespace(self.id)
        self.links = [DcLink(dc, k, dc_namespace(self.id, k), dc_subnet(first_address, k),
                             str(dc_subnet(first_address, k).network_address + ROUTER_HOST), f"dc{k}")
                      for k, dc in enumerate(dcs, start=1)]
        self.nodes = list(nodes)
        self.state_dir = state_dir
        self.mode: str | None = None   # "netem" | "tun-router", once up

    # -- lookup ------------------------------------------------------------------------------
    def link(self, dc: str) -> DcLink:
        for link in self.links:
            if link.dc == dc:
                return link
        raise ConfigError(f"cluster {self.cluster} has no data center {dc!r}; DCs: "
                          f"{', '.join(lk.dc for lk in self.links)}")

    def namespace(self, dc: str) -> str:
        return self.link(dc).namespace

    def command(self, dc: str, argv: list[str]) -> list[str]:
        """`argv` run inside the DC's namespace (ip netns exec execs it: the pid is argv's)."""
        return ["ip", "netns", "exec", self.namespace(dc), *argv]

    @property
    def pid_file(self) -> Path:
        return self.state_dir / "delay-router.pid"

    @property
    def stats_file(self) -> Path:
        return self.state_dir / "delay-router.json"

    @property
    def log_file(self) -> Path:
        return self.state_dir / "delay-router.log"

    def describe(self) -> dict[str, Any]:
        return {"inter_dc_rtt_ms": self.rtt_ms, "mode": self.mode, "router_namespace": self.router,
                "namespaces": {lk.dc: lk.namespace for lk in self.links},
                "subnets": {lk.dc: str(lk.subnet) for lk in self.links}}

    def check_support(self) -> None:
        check_support(self.rtt_ms)

    # -- state -------------------------------------------------------------------------------
    def exists(self) -> bool:
        have = set(namespaces())
        return self.router in have and all(lk.namespace in have for lk in self.links)

    def router_pid(self) -> int | None:
        """The live delay router of this network (pid file checked against its tagged command line)."""
        try:
            pid = int(self.pid_file.read_text().strip())
        except (FileNotFoundError, ValueError):
            return None
        return pid if pid in router_pids(self.id) else None

    def healthy(self) -> bool:
        if not self.exists():
            return False
        if self.mode is None:
            self.mode = "tun-router" if ip("-n", self.router, "link", "show", ROUTER_DEV, check=False).returncode == 0 \
                else "netem"
        return self.mode == "netem" or self.router_pid() is not None

    # -- up / down ---------------------------------------------------------------------------
    def up(self) -> bool:
        """Create the network unless it is there and healthy. Returns True when it was created now.
        A half-made or unhealthy one is removed first; a failure removes what was made. Its owner
        record (cassperf.cluster.owners) is written before anything is made."""
        if self.healthy():
            self.claim()
            return False
        self.down()
        _register_atexit(self)
        try:
            self.claim()
            self._make()
            self.claim()
        except BaseException:
            self.down()
            raise
        return True

    def claim(self) -> owners.Owner | None:
        """Record this network as this process's (owners.claim); the dead owner it was taken
        from, if any."""
        pid = self.router_pid()
        started = None
        if pid is not None:
            with contextlib.suppress(psutil.Error):
                started = psutil.Process(pid).create_time()
        data = {"netid": self.id, "cluster": self.cluster, "folder": str(self.state_dir),
                "namespaces": [self.router, *(lk.namespace for lk in self.links)],
                "router": {"pid": pid, "started": started} if pid is not None else None}
        return owners.claim("network", self.id, data)[1]

    def _make(self) -> None:
        r = self.router
        for ns in (r, *(lk.namespace for lk in self.links)):
            ip("netns", "add", ns)
            ip("-n", ns, "link", "set", "lo", "up")
        sysctl(r, "net.ipv4.ip_forward=1", "net.ipv4.conf.all.rp_filter=0", "net.ipv4.conf.default.rp_filter=0")
        for lk in self.links:
            ip("-n", r, "link", "add", lk.link, "type", "veth", "peer", "name", "rt", "netns", lk.namespace)
            ip("-n", r, "addr", "add", f"{lk.router_address}/{lk.subnet.prefixlen}", "dev", lk.link)
            ip("-n", r, "link", "set", lk.link, "up")
            for dc, address in self.nodes:
                if dc == lk.dc:
                    ip("-n", lk.namespace, "addr", "add", f"{address}/{lk.subnet.prefixlen}", "dev", "rt")
            ip("-n", lk.namespace, "link", "set", "rt", "up")
            ip("-n", lk.namespace, "route", "add", "default", "via", lk.router_address)
        one_way = f"{self.rtt_ms / 2:g}ms"
        netem = run(["tc", "-n", r, "qdisc", "add", "dev", self.links[0].link, "root", "netem", "delay", one_way,
                     "limit", "100000"], check=False)
        if netem.returncode == 0:
            for lk in self.links[1:]:
                run(["tc", "-n", r, "qdisc", "add", "dev", lk.link, "root", "netem", "delay", one_way, "limit", "100000"])
            self.mode = "netem"
            return
        self.mode = "tun-router"
        ip("-n", r, "tuntap", "add", "dev", ROUTER_DEV, "mode", "tun")
        sysctl(r, f"net.ipv4.conf.{ROUTER_DEV}.rp_filter=0")
        ip("-n", r, "link", "set", ROUTER_DEV, "up")
        ip("-n", r, "route", "add", "default", "dev", ROUTER_DEV, "table", str(DELAY_TABLE))
        for lk in self.links:
            ip("-n", r, "rule", "add", "iif", lk.link, "lookup", str(DELAY_TABLE), "priority", "100")
        self._start_router()

    def _start_router(self, timeout_s: float = 10.0) -> None:
        self.state_dir.mkdir(mode=0o700, parents=True, exist_ok=True)     # the cluster folder: the owner's only
        self.stats_file.unlink(missing_ok=True)
        cmd = ["ip", "netns", "exec", self.router, sys.executable, "-I", str(ROUTER_SCRIPT), "--dev", ROUTER_DEV,
               "--delay-ms", f"{self.rtt_ms / 2:g}", "--stats", str(self.stats_file), "--tag", self.router,
               "--realtime", str(ROUTER_PRIORITY)]
        offset = self.log_file.stat().st_size if self.log_file.exists() else 0
        with open(self.log_file, "ab") as log:
            proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                    start_new_session=True)   # Ctrl-C in a terminal reaches the nodes' owner only
        self.pid_file.write_text(f"{proc.pid}\n")
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            text = self.log_file.read_bytes()[offset:].decode(errors="replace")
            if "ready\n" in text:
                return
            if proc.poll() is not None:
                raise ClusterError(f"the delay router of {self.router} exited {proc.returncode} at start: "
                                   f"{text.strip()[-500:]}")
            time.sleep(0.05)
        raise ClusterError(f"the delay router of {self.router} was not ready after {timeout_s:.0f} s "
                           f"(log: {self.log_file})")

    def router_stats(self) -> dict[str, float] | None:
        """The router's last counters (packets, bytes, dropped, lateness_p50/p99/max_us), or None."""
        try:
            return json.loads(self.stats_file.read_text())
        except (FileNotFoundError, ValueError):
            return None

    def down(self) -> list[str]:
        """Remove this cluster's router processes and namespaces (and with them links, routes and
        addresses), made by this object or left by an earlier process. Returns what was removed."""
        removed = remove_leftovers(self.id)
        self.pid_file.unlink(missing_ok=True)
        self.mode = None
        return removed


def sysctl(namespace: str, *settings: str) -> None:
    run(["ip", "netns", "exec", namespace, "sysctl", "-q", "-w", *settings])


# -- leftovers -----------------------------------------------------------------------------------
def leftover_namespaces(netid: str) -> list[str]:
    """The namespaces of network `netid` (network_id) that exist now: cassperf-<netid>-rt / -dc<k>."""
    pattern = _ours_re(netid)
    return [ns for ns in namespaces() if pattern.match(ns)]


def router_pids(netid: str) -> list[int]:
    """Live delay-router processes of network `netid` (command line: delay_router.py ... --tag <router ns>)."""
    tag = router_namespace(netid)
    out = []
    for proc in psutil.process_iter(["pid", "cmdline"]):
        cmd = proc.info["cmdline"] or []
        if any(c.endswith("delay_router.py") for c in cmd) and "--tag" in cmd and \
                cmd[cmd.index("--tag") + 1:cmd.index("--tag") + 2] == [tag]:
            out.append(proc.info["pid"])
    return out


def namespace_pids(namespace: str) -> list[int]:
    proc = ip("netns", "pids", namespace, check=False)
    return [int(p) for p in proc.stdout.split() if p.isdigit()]


def _end(pids: list[int], timeout_s: float = 10.0) -> None:
    procs = []
    for pid in pids:
        try:
            p = psutil.Process(pid)
            p.send_signal(signal.SIGTERM)
            procs.append(p)
        except psutil.NoSuchProcess:
            pass
    _, alive = psutil.wait_procs(procs, timeout=timeout_s)
    for p in alive:
        try:
            p.kill()
        except psutil.NoSuchProcess:
            pass
    psutil.wait_procs(alive, timeout=5)


def remove_leftovers(netid: str, timeout_s: float = 10.0) -> list[str]:
    """End the router processes of network `netid` and whatever still runs inside its namespaces
    (a namespace of the cluster belongs to it: what runs there ends with it), then delete the
    namespaces; their veth links, addresses, routes and rules go with them, and its owner
    record. Returns the names of the namespaces removed and 'router pid N' for each router
    ended. Needs root when there is anything to remove."""
    found = leftover_namespaces(netid)
    routers = router_pids(netid)
    if not found and not routers:
        owners.remove("network", netid)
        return []
    if os.geteuid() != 0:
        raise ClusterError(f"network {netid} left namespaces {', '.join(found) or '-'} and router pids "
                           f"{routers or '-'}; removing them needs root (sudo cassperf cluster destroy --name "
                           f"{netid.rsplit('-', 1)[0]})")
    inside = [pid for ns in found for pid in namespace_pids(ns) if pid not in routers and pid != os.getpid()]
    _end(routers + inside, timeout_s)
    for ns in found:
        proc = ip("netns", "del", ns, check=False)
        if proc.returncode != 0 and "No such file" not in proc.stderr:
            raise ClusterError(f"could not delete network namespace {ns}: {proc.stderr.strip()}")
    owners.remove("network", netid)
    return found + [f"router pid {pid}" for pid in routers]


# -- atexit --------------------------------------------------------------------------------------
_AT_EXIT: dict[str, tuple[DcNetwork, Callable[[], bool]]] = {}


def _register_atexit(network: DcNetwork, nodes_running: Callable[[], bool] | None = None) -> None:
    """At interpreter exit, remove `network` if no node of its cluster runs any more (a
    network whose nodes are gone serves nothing; one with live nodes stays, as the nodes do)."""
    if not _AT_EXIT:
        atexit.register(_at_exit)
    current = _AT_EXIT.get(network.id)
    check = nodes_running or (current[1] if current else (lambda: False))
    _AT_EXIT[network.id] = (network, check)


def watch_nodes(network: DcNetwork, nodes_running: Callable[[], bool]) -> None:
    """Tell the exit hook how to know whether the network's nodes still run."""
    _register_atexit(network, nodes_running)


def _at_exit() -> None:
    for network, nodes_running in list(_AT_EXIT.values()):
        try:
            if not nodes_running():
                network.down()
        except Exception as exc:  # noqa: BLE001 - at exit: say it, never raise
            print(f"cassperf: could not remove the network of cluster {network.cluster}: {exc}", file=sys.stderr)

