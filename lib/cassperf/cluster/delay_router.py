"""A userspace delay line on a TUN device: every packet read from the device is written back to
it `delay_ms` later (milliseconds, one way). Used where the kernel lacks `tc netem`.

    python -m cassperf.cluster.delay_router --dev dly --delay-ms 13.5 --stats stats.json \
        --tag cassperf-<cluster>-rt

Run inside the router namespace (cassperf.cluster.netns) that owns the persistent TUN device
`dev`; policy routes there send every packet arriving from a DC's link into the device, and the
packets written back come out of it, so the kernel routes them on to the other DC. One pass per
direction: a round trip crosses the device twice, so the namespace network gives the device
RTT/2.

The delay is the same for every packet, so arrival order is release order: the time-ordered
queue is a FIFO (collections.deque) of (due time, packet), and one `select` timeout for its head
replaces a timer per packet. `select` (microsecond timeout) rather than `poll`/`epoll`
(millisecond timeouts, rounded up) keeps release lateness well under 1 ms. Packets read in one
wake-up are taken in a batch (up to BATCH) before any is released.

A queue holding more than `max_queue_bytes` drops new packets (counted), as a full router queue
would. Every second, and at exit, the counters go to the `--stats` JSON file: packets, bytes,
dropped, release lateness (actual release minus due time) as p50/p99/max in microseconds over
the last 10,000 packets, and late_over_1ms (packets released over 1 ms late, since start).
SIGTERM or SIGINT end the process at once (queued packets are lost, as on a link going down).

`--tag` only marks the command line, so that cleanup can find a leftover router by its
namespace name (cassperf.cluster.netns.router_pids).
"""

from __future__ import annotations

import argparse
import collections
import errno
import fcntl
import json
import os
import select
import signal
import struct
import sys
import time
from pathlib import Path

TUNSETIFF = 0x400454CA
IFF_TUN = 0x0001
IFF_NO_PI = 0x1000
#: packets taken per wake-up before releasing any (bounds the time one wake-up spends reading)
BATCH = 256
#: largest packet the device can hand over (MTU 1500 here; GSO never reaches a plain TUN)
READ_SIZE = 65536
LATENESS_WINDOW = 10_000


def open_tun(dev: str) -> int:
    """Attach to the TUN device `dev` (created as persistent by `ip tuntap add`, or created now),
    non-blocking, no packet-information header. Returns the file descriptor."""
    fd = os.open("/dev/net/tun", os.O_RDWR | os.O_NONBLOCK)
    fcntl.ioctl(fd, TUNSETIFF, struct.pack("16sH", dev.encode(), IFF_TUN | IFF_NO_PI))
    return fd


class DelayLine:
    """The queue and its counters, apart from the device (so it can be exercised on a pipe)."""

    def __init__(self, delay_s: float, max_queue_bytes: int = 64 * 1024 * 1024) -> None:
        self.delay_s = delay_s
        self.max_queue_bytes = max_queue_bytes
        self.queue: collections.deque[tuple[float, bytes]] = collections.deque()
        self.queued_bytes = 0
        self.packets = 0
        self.bytes = 0
        self.dropped = 0
        self.late_over_1ms = 0
        self.lateness_us: collections.deque[float] = collections.deque(maxlen=LATENESS_WINDOW)

    def take(self, packet: bytes, now: float) -> None:
        if self.queued_bytes + len(packet) > self.max_queue_bytes:
            self.dropped += 1
            return
        self.queue.append((now + self.delay_s, packet))
        self.queued_bytes += len(packet)

    def release(self, fd: int, now: float) -> None:
        """Write every packet that is due at `now`."""
        q = self.queue
        while q and q[0][0] <= now:
            due, packet = q.popleft()
            self.queued_bytes -= len(packet)
            try:
                os.write(fd, packet)
            except OSError as exc:
                if exc.errno not in (errno.EAGAIN, errno.EINVAL, errno.EIO, errno.ENOBUFS):
                    raise
                self.dropped += 1
                continue
            self.packets += 1
            self.bytes += len(packet)
            late_us = (now - due) * 1e6
            self.lateness_us.append(late_us)
            if late_us > 1000:
                self.late_over_1ms += 1

    def timeout_s(self, now: float) -> float | None:
        """Seconds until the head is due (None: queue empty, wait for packets)."""
        return max(0.0, self.queue[0][0] - now) if self.queue else None

    def stats(self) -> dict[str, float]:
        late = sorted(self.lateness_us)
        pick = (lambda q: round(late[min(len(late) - 1, int(q * len(late)))], 1)) if late else (lambda q: 0.0)
        return {"delay_ms": self.delay_s * 1e3, "packets": self.packets, "bytes": self.bytes,
                "dropped": self.dropped, "queued": len(self.queue),
                "lateness_p50_us": pick(0.5), "lateness_p99_us": pick(0.99),
                "lateness_max_us": round(late[-1], 1) if late else 0.0, "late_over_1ms": self.late_over_1ms}


def serve(fd: int, line: DelayLine, stats_path: Path | None) -> None:
    """The loop: read what is there, release what is due, sleep until the next due time.
    Runs until a signal handler raises (SystemExit)."""
    next_stats = time.monotonic() + 1.0
    read, clock = os.read, time.monotonic
    while True:
        now = clock()
        timeout = line.timeout_s(now)
        if stats_path is not None:
            timeout = min(timeout, max(0.0, next_stats - now)) if timeout is not None else max(0.0, next_stats - now)
        ready, _, _ = select.select([fd], [], [], timeout)
        if ready:
            now = clock()
            for _ in range(BATCH):
                try:
                    packet = read(fd, READ_SIZE)
                except BlockingIOError:
                    break
                line.take(packet, now)
        now = clock()
        line.release(fd, now)
        if stats_path is not None and now >= next_stats:
            write_stats(stats_path, line)
            next_stats = now + 1.0


def write_stats(path: Path, line: DelayLine) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(line.stats()))
    os.replace(tmp, path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="cassperf.cluster.delay_router", description=__doc__.split("\n\n")[0])
    parser.add_argument("--dev", required=True, help="TUN device name (in this network namespace)")
    parser.add_argument("--delay-ms", type=float, required=True, help="one-way delay per pass, ms")
    parser.add_argument("--stats", type=Path, help="JSON counters file, rewritten every second")
    parser.add_argument("--tag", default="", help="marker for cleanup (the router namespace's name)")
    parser.add_argument("--max-queue-mb", type=float, default=64.0)
    parser.add_argument("--realtime", type=int, default=0, metavar="PRIORITY",
                        help="SCHED_FIFO priority (1-99) so that a busy host does not delay releases; 0: normal")
    args = parser.parse_args(argv)
    if not 0 <= args.delay_ms <= 10_000:
        print(f"delay_router: --delay-ms {args.delay_ms}: expected 0..10000", file=sys.stderr)
        return 2
    try:
        fd = open_tun(args.dev)
    except OSError as exc:
        print(f"delay_router: cannot attach to TUN device {args.dev!r}: {exc}", file=sys.stderr)
        return 1
    def _end(*_: object) -> None:
        raise SystemExit(0)

    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, _end)
    if args.realtime:
        try:
            os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(args.realtime))
        except OSError as exc:
            print(f"delay_router: no real-time scheduling ({exc}); releases may be late on a busy host",
                  file=sys.stderr)
    line = DelayLine(args.delay_ms / 1e3, int(args.max_queue_mb * 1024 * 1024))
    print("ready", flush=True)
    try:
        serve(fd, line, args.stats)
    finally:
        if args.stats is not None:
            write_stats(args.stats, line)
        os.close(fd)
    return 0


if __name__ == "__main__":
    sys.exit(main())
