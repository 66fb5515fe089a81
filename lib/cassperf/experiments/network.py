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

A baseline is stored as JSON under ``<runs>/.network/`` (a dot folder: the run catalog passes it by) with the study's labels, so that
``analyse_only`` shows it again.
"""

from __future__ import annotations

import json
import math
import shutil
import subprocess
import time
from contextlib import nullcontext
from pathlib import Path
from typing import Any

import pandas as pd

PING_COUNT = 20
IPERF3_PORT = 5201
IPERF3_SECONDS = 3
NOT_MEASURED = "not measured"
FOLDER = ".network"


def _placed(recipe: tuple[str, dict[str, Any]], dc: str) -> tuple[Any, Any]:
    from cassperf.experiments.clients import make_handle

    cluster = make_handle(recipe)
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
                       timeout_s: float = 60.0) -> dict[str, Any]:
    """One iperf3 server test (``-s -1``) at `dc`'s client location; returns when it is done."""
    if shutil.which("iperf3") is None:
        return {"error": "iperf3 is not installed (make iperf3, or apt-get install iperf3)"}
    _, place = _placed(recipe, dc)
    with place:
        try:
            out = subprocess.run(["iperf3", "-s", "-1", "-p", str(port)], capture_output=True, text=True,
                                 timeout=timeout_s)
        except subprocess.TimeoutExpired:
            return {"error": f"the iperf3 server saw no test within {timeout_s:.0f} s"}
    return {"returncode": out.returncode}


def iperf3_client_task(recipe: tuple[str, dict[str, Any]], dc: str, address: str, streams: int,
                       seconds: int = IPERF3_SECONDS, port: int = IPERF3_PORT) -> dict[str, Any]:
    """``iperf3 -c address -P streams -t seconds --json`` from `dc`'s client location (retries
    the connection for 10 s while the server starts)."""
    if shutil.which("iperf3") is None:
        return {"error": "iperf3 is not installed (make iperf3, or apt-get install iperf3)"}
    _, place = _placed(recipe, dc)
    deadline = time.monotonic() + 10
    with place:
        while True:
            out = subprocess.run(["iperf3", "-c", address, "-p", str(port), "-P", str(streams), "-t", str(seconds),
                                  "--json"], capture_output=True, text=True, timeout=seconds + 60)
            if out.returncode == 0 or time.monotonic() > deadline:
                break
            time.sleep(0.3)
    if out.returncode != 0:
        return {"error": f"iperf3 -c {address} -P {streams} exited {out.returncode}: "
                         f"{(out.stdout or out.stderr).strip()[-300:]}"}
    return {"text": out.stdout}


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
            served = server.result()
            result = client if "error" in client or "error" not in served else served
            out["iperf3"].append({"from": a, "to": b, "streams": n, "address": peers[b], **result})
    return out


def store_baseline(baseline: dict[str, Any], labels: dict[str, str], root: Path) -> Path:
    from cassperf.results.manifest import new_run_id

    folder = root / FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{new_run_id('network')}.json"
    path.write_text(json.dumps({"labels": labels, **baseline}, indent=2))
    return path


def stored_baselines(root: Path, **labels: str) -> list[dict[str, Any]]:
    """Stored baselines with these labels, oldest first."""
    folder = root / FOLDER
    if not folder.is_dir():
        return []
    found = [json.loads(p.read_text()) for p in sorted(folder.glob("*.json"))]
    return [b for b in found if all(str(b.get("labels", {}).get(k)) == str(v) for k, v in labels.items())]


def baseline_table(baseline: dict[str, Any] | None, configured_rtt_ms: float | None,
                   traffic: list[dict[str, Any]] | None = None) -> pd.DataFrame:
    """The network table: one row per measurement (what, between, value, unit, how)."""
    from cassperf.parsers.iperf3 import parse_iperf3
    from cassperf.parsers.ping import parse_ping

    rows: list[dict[str, Any]] = [{"measure": "RTT configured", "between": "dc1-dc2",
                                   "value": configured_rtt_ms if configured_rtt_ms is not None else math.nan,
                                   "unit": "ms", "how": "LocalCluster inter_dc_rtt_ms" if configured_rtt_ms
                                   is not None else "no delay configured (a real cluster, or no distance)"}]
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
                                              f"received at {r['address']}"})
    if baseline is None:
        rows.append({"measure": "ping RTT, iperf3", "between": "", "value": math.nan, "unit": "",
                     "how": f"{NOT_MEASURED}: no stored baseline"})
    for t in traffic or []:
        for what in ("send", "receive"):
            rows.append({"measure": f"network {what} during {t['part']} writes", "between": t["where"],
                         "value": t[f"{what}_mb_s"], "unit": "MB/s", "how": t["how"]})
    return pd.DataFrame(rows, columns=["measure", "between", "value", "unit", "how"])
