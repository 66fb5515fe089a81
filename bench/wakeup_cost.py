"""What one thread wake-up costs on this machine: the floor under any paced load generator.

    .venv/bin/python bench/wakeup_cost.py            # ~15 s on an idle machine

A load generator at a fixed rate below saturation spends its CPU mostly on waking up: its pacing
timer, the driver's I/O thread (woken to send, woken by the response) and the event loop (woken
by the driver). This prints the CPU time (user + system, this process) of

1. a timer wake-up: ``time.sleep(200 us)`` in a loop (the gap between ops at 5,000 ops/s);
2. a cross-thread wake-up: a pipe ping-pong between two threads (two wake-ups a round trip),
   back to back, and after 200 us of idleness (the case of a paced client),

and from them the wake-ups per op a CPU-per-op budget allows at a given rate. On the 2-core
Firecracker VMs here (2026-11-22, idle) a timer wake-up cost 38-48 us of CPU, so a budget of
25 us per op allows about half a wake-up from idle per op; bare metal usually costs a few us.
"""

from __future__ import annotations

import argparse
import os
import resource
import threading
import time


def _cpu_s() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def timer_wakeup_us(n: int, sleep_s: float) -> tuple[float, float]:
    """CPU and wall microseconds per ``time.sleep(sleep_s)``."""
    c0, t0 = _cpu_s(), time.monotonic()
    for _ in range(n):
        time.sleep(sleep_s)
    return (_cpu_s() - c0) / n * 1e6, (time.monotonic() - t0) / n * 1e6


def pingpong_us(n: int, idle_s: float = 0.0) -> float:
    """CPU microseconds per round trip between two threads over pipes (two wake-ups), the
    caller sleeping ``idle_s`` before each (so the other thread, and maybe its CPU, goes idle;
    the sleep's own wake-up is included)."""
    r1, w1 = os.pipe()
    r2, w2 = os.pipe()

    def echo() -> None:
        for _ in range(n):
            os.read(r1, 1)
            os.write(w2, b"x")

    th = threading.Thread(target=echo)
    th.start()
    c0 = _cpu_s()
    for _ in range(n):
        if idle_s:
            time.sleep(idle_s)
        os.write(w1, b"x")
        os.read(r2, 1)
    th.join()
    cpu = (_cpu_s() - c0) / n * 1e6
    for fd in (r1, w1, r2, w2):
        os.close(fd)
    return cpu


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-n", type=int, default=20_000, help="iterations of each measurement (default 20000)")
    ap.add_argument("--budget-us", type=float, default=25.0, help="CPU budget per op, us (default 25)")
    args = ap.parse_args()
    load0 = os.getloadavg()[0]
    cpu, wall = timer_wakeup_us(args.n, 200e-6)
    busy = pingpong_us(args.n)
    idle = pingpong_us(args.n, 200e-6) - cpu
    print(f"{os.cpu_count()} cores, load {load0:.1f} -> {os.getloadavg()[0]:.1f}")
    print(f"timer wake-up, sleep(200 us) x{args.n:,}:      {cpu:6.1f} us CPU each ({wall:.0f} us wall per iteration)")
    print(f"thread round trip, back to back:          {busy:6.1f} us CPU ({busy / 2:.1f} per wake-up)")
    print(f"thread round trip after 200 us idle:      {idle:6.1f} us CPU ({idle / 2:.1f} per wake-up), "
          f"beyond the sleep's own wake-up")
    per_wake = max(cpu, idle / 2)
    print(f"a {args.budget_us:g} us/op budget allows {args.budget_us / per_wake:.2f} wake-ups from idle per op")


if __name__ == "__main__":
    main()
