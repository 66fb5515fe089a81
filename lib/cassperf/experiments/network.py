"""The network baseline of the multi-DC study, measured where the clients are.

Each measurement is a task on a client location's Dask worker (cassperf.experiments.clients),
inside the location's DC namespace on a local cluster with distance, on the client machine on
a real cluster:

- ping RTT from each DC's first client to the other DC (iputils ping, parsed by
  cassperf.parsers.ping): 20 probes 50 ms apart;
- iperf3 throughput from dc1's client to an iperf3 server started at dc2's client, with 1 and
  with 16 parallel streams (``iperf3 --json``, parsed by cassperf.parsers.iperf3); "not
  measured" with the reason when iperf3 is not installed (``make iperf3``);
- network send and receive at each client location during a group of runs: the kernel's
  interface byte counters (/proc/net/dev of the task's network namespace) before and after.
  On a local cluster with distance these are the DC namespace's link to the delay router
  (``rt``): exactly the traffic that crosses between the DCs (replication, cross-DC reads,
  gossip); traffic between a DC's own nodes and its clients stays on that namespace's loopback
  and is not in them. On a client machine they are all its interfaces but ``lo``.

The ping and iperf3 baseline is the multi-DC study's ``baseline`` hook (:func:`study_baseline`): the
executor keeps it in the study's record, so ``analyse_only`` shows it again. The counters are
read around each run of clients in both DCs (clients.ClientPlacement.run_together with
``watch_network``) and kept in its group record.
"""

from __future__ import annotations

import json
import math
import os
import re
import selectors
import shutil
import subprocess
import time
from contextlib import nullcontext
from pathlib import Path
from typing import Any

import pandas as pd

PING_COUNT = 20
IPERF3_PORT = 5201
#: how long an iperf3 client retries while its server starts (within the server's 60 s)
CLIENT_WAIT_S = 45.0
IPERF3_SECONDS = 3
#: how long an iperf3 server may take to exit once its test has ended
SERVER_EXIT_GRACE_S = 3.0
NOT_MEASURED = "not measured"


def _placed(recipe: tuple[str, dict[str, Any]], dc: str) -> tuple[Any, Any]:
    from cassperf.experiments.cluster_recipe import make_handle

    cluster = make_handle(recipe, dc)
    place = cluster.in_dc(dc) if getattr(cluster, "network", None) is not None else nullcontext()
    return cluster, place


def ping_task(recipe: tuple[str, dict[str, Any]], dc: str, address: str, count: int = PING_COUNT) -> dict[str, Any]:
    """ping `address` from `dc`'s client location: {"text": ping's output} or {"error": ...}."""
    if shutil.which("ping") is None:
        return {"error": "ping is not installed (make ping, or apt-get install iputils-ping)"}
    _, place = _placed(recipe, dc)
    with place:
        out = subprocess.run(["ping", "-n", "-c", str(count), "-i", "0.05", address], capture_output=True,
                             text=True, timeout=60)
    if out.returncode != 0:
        return {"error": f"ping {address} exited {out.returncode}: {(out.stderr or out.stdout).strip()[:200]}"}
    return {"text": out.stdout}


def iperf3_server_task(recipe: tuple[str, dict[str, Any]], dc: str, port: int = IPERF3_PORT,
                       timeout_s: float = 60.0, exit_grace_s: float = SERVER_EXIT_GRACE_S) -> dict[str, Any]:
    """One iperf3 server test (``-s -1``) at `dc`'s client location; returns when it is done.

    iperf3's server at times hangs after its test although its client got the results (esnet/iperf
    #1735; seen here with 16 streams through the delay router, which held a DC location's one-thread
    worker for 60 s). So the server's output is watched: once it has printed its receiver summary the
    test is over, and a server that has not exited `exit_grace_s` later is stopped, with a note."""
    if shutil.which("iperf3") is None:
        return {"error": "iperf3 is not installed (make iperf3, or apt-get install iperf3)"}
    _, place = _placed(recipe, dc)
    with place:
        proc = subprocess.Popen(["iperf3", "-s", "-1", "-p", str(port), "--forceflush"],
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        try:
            return watch_iperf3_server(proc, timeout_s, exit_grace_s)
        finally:
            if proc.poll() is None:
                proc.kill()
            proc.wait()
            if proc.stdout is not None:
                proc.stdout.close()


def watch_iperf3_server(proc: subprocess.Popen, timeout_s: float, exit_grace_s: float) -> dict[str, Any]:
    """Follow an iperf3 server's output until it exits: {"returncode": n}, {"returncode": None,
    "note": ...} when its test ended but it did not exit, {"error": ...} when it saw no test or its
    test did not end within `timeout_s`. The caller stops a process still running."""
    assert proc.stdout is not None
    fd = proc.stdout.fileno()
    deadline = time.monotonic() + timeout_s
    text, ended_at, eof = "", None, False
    with selectors.DefaultSelector() as sel:
        sel.register(fd, selectors.EVENT_READ)
        while proc.poll() is None:
            now = time.monotonic()
            if ended_at is not None and now > ended_at + exit_grace_s:
                return {"returncode": None, "note": f"the iperf3 server's test ended but the server did not exit "
                                                    f"within {exit_grace_s:g} s; stopped (esnet/iperf#1735)"}
            if ended_at is None and now > deadline:
                if "Accepted connection" in text:
                    return {"error": f"the iperf3 server's test did not end within {timeout_s:.0f} s"}
                return {"error": f"the iperf3 server saw no test within {timeout_s:.0f} s"}
            if eof:                       # its output closed: the process is on its way out
                time.sleep(0.05)
                continue
            if not sel.select(timeout=0.2):
                continue
            chunk = os.read(fd, 65536)
            eof = not chunk
            text += chunk.decode(errors="replace")
            if ended_at is None and re.search(r"receiver\s*$", text, re.MULTILINE):
                ended_at = time.monotonic()
    return {"returncode": proc.returncode}


def iperf3_client_task(recipe: tuple[str, dict[str, Any]], dc: str, address: str, streams: int,
                       seconds: int = IPERF3_SECONDS, port: int = IPERF3_PORT) -> dict[str, Any]:
    """``iperf3 -c address -P streams -t seconds --json`` from `dc`'s client location
    (run_iperf3_client)."""
    if shutil.which("iperf3") is None:
        return {"error": "iperf3 is not installed (make iperf3, or apt-get install iperf3)"}
    _, place = _placed(recipe, dc)
    with place:
        return run_iperf3_client(address, streams, seconds, port)


def run_iperf3_client(address: str, streams: int, seconds: int = IPERF3_SECONDS, port: int = IPERF3_PORT,
                      wait_s: float = CLIENT_WAIT_S) -> dict[str, Any]:
    """One iperf3 client test: {"text": its JSON} or {"error": ...}. It tries again for `wait_s`
    while its server starts: the server's task is submitted beside it and on a loaded machine took
    more than 10 s to start. A try failed when iperf3 exited non-zero or its JSON holds an
    ``error``: iperf3 3.11 and 3.12 exit 0 with ``--json`` when the connection is refused
    (esnet/iperf#1405), which here ended every try at once and left the server waiting its 60 s."""
    deadline = time.monotonic() + wait_s
    while True:
        out = subprocess.run(["iperf3", "-c", address, "-p", str(port), "-P", str(streams), "-t", str(seconds),
                              "--json"], capture_output=True, text=True, timeout=seconds + 60)
        error = iperf3_client_error(out.returncode, out.stdout, out.stderr)
        if error is None:
            return {"text": out.stdout}
        if time.monotonic() > deadline:
            return {"error": f"iperf3 -c {address} -P {streams} failed (exit code {out.returncode}): {error}"}
        time.sleep(0.3)


def iperf3_client_error(returncode: int, stdout: str, stderr: str) -> str | None:
    """Why an ``iperf3 -c ... --json`` run failed, or None when it measured: its JSON's
    ``error`` whatever the exit code (esnet/iperf#1405), else its output on a non-zero exit."""
    try:
        doc = json.loads(stdout)
    except ValueError:
        doc = None
    if isinstance(doc, dict) and doc.get("error"):
        return str(doc["error"])
    if returncode != 0 or not isinstance(doc, dict):
        return (stdout or stderr).strip()[-300:] or f"no output (exit code {returncode})"
    return None


def counters_task(recipe: tuple[str, dict[str, Any]], dc: str) -> dict[str, Any]:
    """The interface byte counters where `dc`'s client runs: {"interfaces": {name: [rx, tx]},
    "time": epoch s}. Read from /proc/thread-self/net/dev (this thread's network namespace)."""
    _, place = _placed(recipe, dc)
    with place:
        text = Path("/proc/thread-self/net/dev").read_text()
        now = time.time()
    return {"interfaces": parse_net_dev(text), "time": now}


def parse_net_dev(text: str) -> dict[str, list[int]]:
    """/proc/net/dev -> {interface: [received bytes, sent bytes]}, ``lo`` left out."""
    out: dict[str, list[int]] = {}
    for line in text.splitlines()[2:]:
        name, sep, rest = line.partition(":")
        fields = rest.split()
        if not sep or len(fields) < 9 or name.strip() == "lo":
            continue
        out[name.strip()] = [int(fields[0]), int(fields[8])]
    return out


def rates(before: dict[str, Any], after: dict[str, Any]) -> dict[str, float]:
    """Receive and send rates (MB/s, 10^6 bytes) between two counter snapshots, all interfaces
    but lo together."""
    seconds = after["time"] - before["time"]
    names = set(before["interfaces"]) & set(after["interfaces"])
    rx = sum(after["interfaces"][n][0] - before["interfaces"][n][0] for n in names)
    tx = sum(after["interfaces"][n][1] - before["interfaces"][n][1] for n in names)
    if seconds <= 0:
        return {"receive_mb_s": math.nan, "send_mb_s": math.nan, "seconds": seconds}
    return {"receive_mb_s": rx / seconds / 1e6, "send_mb_s": tx / seconds / 1e6, "seconds": seconds,
            "interfaces": ",".join(sorted(names))}


# -- the baseline, measured through a placement ---------------------------------------------------
def measure_baseline(place: Any, peers: dict[str, str], streams: tuple[int, ...] = (1, 16),
                     seconds: int = IPERF3_SECONDS) -> dict[str, Any]:
    """Ping between every pair of DCs' first client locations, iperf3 from the first DC to
    the second. ``peers``: per DC the address its clients' peers reach it at (a node of that
    DC on a local cluster; the client machine on a real one)."""
    firsts: dict[str, str] = {}
    for p in place.places:
        firsts.setdefault(p.dc, p.name)
    dcs = list(firsts)
    out: dict[str, Any] = {"ping": [], "iperf3": []}
    for a in dcs:
        for b in dcs:
            if a != b:
                result = place.submit(firsts[a], ping_task, place.recipe, a, peers[b]).result()
                out["ping"].append({"from": a, "to": b, "address": peers[b], **result})
    if len(dcs) >= 2:
        a, b = dcs[0], dcs[1]
        for n in streams:
            server = place.submit(firsts[b], iperf3_server_task, place.recipe, b)
            client = place.submit(firsts[a], iperf3_client_task, place.recipe, a, peers[b], n, seconds).result()
            result = iperf3_result(client, server.result())
            out["iperf3"].append({"from": a, "to": b, "streams": n, "address": peers[b], **result})
    return out


def iperf3_result(client: dict[str, Any], served: dict[str, Any]) -> dict[str, Any]:
    """One iperf3 row of the baseline from its client's and its server's task: the client's
    figure whenever the client succeeded (its JSON holds the receiver's sums), with the server's
    state when that was not a clean exit; else the client's error."""
    if "error" in client:
        return client
    problem = served.get("error") or served.get("note")
    return {**client, "server": problem} if problem else client


def distance(cluster: Any, requested_rtt_ms: float) -> dict[str, Any]:
    """The distance between the cluster's DCs: ``rtt_configured_ms`` (a namespaced embedded
    cluster's delay, else None), ``far`` (the DCs are apart: that delay, or a real cluster's
    DCs) and ``distance``, one sentence: the delay, why there is none (cluster.study.
    distance_problem: not root, ...), or that a real cluster's DCs are as far apart as they are."""
    from cassperf.cluster.study import distance_problem

    net = getattr(cluster, "network", None)
    if net is not None:
        return {"rtt_configured_ms": float(net.rtt_ms), "far": True,
                "distance": f"{net.rtt_ms:g} ms round trip between the DCs (network namespaces and a delay router on "
                            f"this machine)"}
    if not hasattr(cluster, "in_dc"):
        return {"rtt_configured_ms": None, "far": True, "distance": "your cluster: the DCs are as far apart as they are"}
    why = distance_problem(requested_rtt_ms)
    text = (f"no distance between the DCs on this machine ({why}): they share one loopback, so nothing here measures "
            f"distance") if why else ("no delay configured between the DCs (inter_dc_rtt_ms=0): on the embedded "
                                      "cluster they share one loopback, so nothing here measures distance")
    return {"rtt_configured_ms": None, "far": False, "distance": text}


def study_baseline(place: Any, dcs: list[str], requested_rtt_ms: float, seconds: int = IPERF3_SECONDS) \
        -> dict[str, Any]:
    """The multi-DC study's baseline (its record keeps it): the distance, then ping and iperf3
    between the DCs' first client locations (measure_baseline). The peers are a node of each DC
    on a local cluster, the client machines of each DC with ``client_hosts``."""
    cluster = place.cluster
    if place.remote:
        peers = {p.dc: p.host for p in reversed(place.places)}
    else:
        peers = {dc: (cluster.dc_contact_points(dc)[0] if hasattr(cluster, "dc_contact_points")
                      else cluster.contact_points[0]) for dc in dcs}
    return {**distance(cluster, requested_rtt_ms), **measure_baseline(place, peers, seconds=seconds)}


def counters_how(cluster: Any, remote: bool, dc: str) -> str:
    """Which interfaces the counters of `dc`'s client location are (one phrase)."""
    if getattr(cluster, "network", None) is not None:
        return (f"{dc} namespace's link to the delay router (rt): the traffic crossing between the DCs; "
                f"traffic inside {dc} stays on its loopback")
    return "the client machine's interfaces but lo" if remote else \
        "this host's interfaces but lo (no inter-DC network: all nodes on loopback, so nearly nothing)"


def baseline_table(baseline: dict[str, Any] | None) -> pd.DataFrame:
    """The network table: one row per measurement (measure, between, value, unit, how)."""
    from cassperf.parsers.iperf3 import parse_iperf3
    from cassperf.parsers.ping import parse_ping

    configured = (baseline or {}).get("rtt_configured_ms")
    rows: list[dict[str, Any]] = [{"measure": "RTT configured", "between": "dc1-dc2",
                                   "value": configured if configured is not None else math.nan, "unit": "ms",
                                   "how": (baseline or {}).get("distance", "")}]
    for p in (baseline or {}).get("ping", []):
        between = f"{p['from']}->{p['to']}"
        if "error" in p:
            rows.append({"measure": "ping RTT avg", "between": between, "value": math.nan, "unit": "ms",
                         "how": f"{NOT_MEASURED}: {p['error']}"})
            continue
        s = parse_ping(p["text"], "ping").tables["summary"].iloc[0]
        for stat in ("avg", "min", "max", "mdev"):
            rows.append({"measure": f"ping RTT {stat}", "between": between, "value": float(s[f"rtt_{stat}_ms"]),
                         "unit": "ms", "how": f"ping -c {int(s['transmitted'])} {p['address']}, "
                                              f"{int(s['received'])} received"})
    for r in (baseline or {}).get("iperf3", []):
        between = f"{r['from']}->{r['to']}"
        measure = f"iperf3, {r['streams']} stream{'s' if r['streams'] > 1 else ''}"
        if "error" in r:
            rows.append({"measure": measure, "between": between, "value": math.nan, "unit": "Mbit/s",
                         "how": f"{NOT_MEASURED}: {r['error']}"})
            continue
        s = parse_iperf3(r["text"], "iperf3").tables["summary"].iloc[0]
        rows.append({"measure": measure, "between": between, "value": float(s["received_bits_per_second"]) / 1e6,
                     "unit": "Mbit/s", "how": f"iperf3 -P {r['streams']} -t {float(s['duration_s']):g}, "
                                              f"received at {r['address']}"
                                              + (f" (server: {r['server']})" if r.get("server") else "")})
    if baseline is None:
        rows.append({"measure": "ping RTT, iperf3", "between": "", "value": math.nan, "unit": "",
                     "how": f"{NOT_MEASURED}: no baseline in the study's record"})
    return pd.DataFrame(rows, columns=["measure", "between", "value", "unit", "how"])


def measured_rtt_ms(baseline: dict[str, Any] | None) -> float | None:
    """The mean of the pings' average RTTs (ms); else the configured RTT; None without either."""
    from cassperf.parsers.ping import parse_ping

    avgs = [float(parse_ping(p["text"], "ping").tables["summary"].iloc[0]["rtt_avg_ms"])
            for p in (baseline or {}).get("ping", []) if "text" in p]
    if avgs:
        return sum(avgs) / len(avgs)
    configured = (baseline or {}).get("rtt_configured_ms")
    return float(configured) if configured is not None else None
