"""What the userspace delay router (cassperf.cluster.delay_router) costs and carries.

Two DC namespaces 27 ms apart (cassperf.cluster.netns, root needed); UDP from dc1 to dc2 at
fixed offered rates for 5 s each, then a TCP bulk transfer for 8 s. Prints per step the
packets/s the router forwarded, its CPU (% of one core, from /proc via psutil) and µs per
packet, and its release lateness (actual release minus due time: p50/p99/max µs, and packets
over 1 ms late). On a machine with sch_netem the kernel does the delay and there is no router
to measure: the script says so and stops.

    sudo .venv/bin/python bench/delay_router.py
"""

from __future__ import annotations

import socket
import sys
import tempfile
import threading
import time
from pathlib import Path

import psutil

from cassperf.cluster import netns

RATES_PPS = (1000, 2000, 5000, 10000, 20000)


def main() -> int:
    netns.check_support(27)
    net = netns.DcNetwork("bench-delay", ["dc1", "dc2"], [("dc1", "10.200.1.1"), ("dc2", "10.200.2.1")],
                          "127.0.200.1", 27, Path(tempfile.mkdtemp(prefix="bench-delay-")))
    try:
        net.up()
        if net.mode != "tun-router":
            print(f"the kernel delays packets here ({net.mode}); no userspace router to measure")
            return 0
        router = psutil.Process(net.router_pid())
        udp(net, router)
        tcp(net, router)
    finally:
        net.down()
    return 0


def _stats(net: netns.DcNetwork) -> dict:
    time.sleep(1.2)                      # the router rewrites its stats file every second
    s = net.router_stats()
    assert s is not None
    return s


def _line(label: str, net: netns.DcNetwork, router: psutil.Process, s0: dict, c0: object, elapsed_s: float) -> str:
    s1, c1 = _stats(net), router.cpu_times()
    pps = (s1["packets"] - s0["packets"]) / elapsed_s
    cpu = (c1.user + c1.system - c0.user - c0.system) / elapsed_s * 100   # type: ignore[attr-defined]
    user = (c1.user - c0.user) / elapsed_s * 100   # type: ignore[attr-defined]
    per_packet = cpu / 100 / pps * 1e6 if pps else float("nan")
    return (f"{label}: router {pps:7.0f} pps, CPU {cpu:5.1f}% of a core (user {user:.1f}%, {per_packet:.0f} µs/packet), lateness "
            f"p50 {s1['lateness_p50_us']:.0f} p99 {s1['lateness_p99_us']:.0f} max {s1['lateness_max_us']:.0f} µs, "
            f"{s1['late_over_1ms'] - s0['late_over_1ms']} over 1 ms, dropped {s1['dropped'] - s0['dropped']}")


def udp(net: netns.DcNetwork, router: psutil.Process) -> None:
    with netns.entered(net.namespace("dc2")):
        rx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        rx.bind(("10.200.2.1", 9999))
    with netns.entered(net.namespace("dc1")):
        tx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    threading.Thread(target=lambda: [rx.recv(2048) for _ in iter(int, 1)], daemon=True).start()
    payload = b"x" * 200
    for pps in RATES_PPS:
        s0, c0 = _stats(net), router.cpu_times()
        t0, sent, duration = time.perf_counter(), 0, 5.0
        while (elapsed := time.perf_counter() - t0) < duration:
            while sent < int(elapsed * pps) + 1:
                tx.sendto(payload, ("10.200.2.1", 9999))
                sent += 1
            time.sleep(0.0005)
        print(_line(f"UDP offered {pps:5d} pps", net, router, s0, c0, duration), flush=True)


def tcp(net: netns.DcNetwork, router: psutil.Process) -> None:
    with netns.entered(net.namespace("dc2")):
        server = socket.create_server(("10.200.2.1", 9998))
    received = [0]

    def sink() -> None:
        conn, _ = server.accept()
        while data := conn.recv(1 << 20):
            received[0] += len(data)

    threading.Thread(target=sink, daemon=True).start()
    with netns.entered(net.namespace("dc1")):
        conn = socket.create_connection(("10.200.2.1", 9998))
    s0, c0 = _stats(net), router.cpu_times()
    t0, chunk = time.perf_counter(), b"y" * 65536
    while time.perf_counter() - t0 < 8:
        conn.sendall(chunk)
    elapsed = time.perf_counter() - t0
    print(_line(f"TCP bulk {received[0] * 8 / elapsed / 1e6:.0f} Mbit/s", net, router, s0, c0, elapsed), flush=True)
    conn.close()


if __name__ == "__main__":
    sys.exit(main())
