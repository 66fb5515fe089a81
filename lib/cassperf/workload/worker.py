"""One load-generating process of the engine: an asyncio loop, a backend, bounded in-flight ops.

The parent (``engine``) starts P of these (forked from its forkserver, or spawned). Each one
connects, prepares its statements, says ``ready`` and waits for ``go``; the parent then publishes the run's start
``t0`` (monotonic ns, one clock for all processes). The worker runs the warm-up (unrecorded)
until t0, then the measured load: ``concurrency`` coroutines, each looping take op -> wait for
its intended start (fixed/throttle rate) -> send -> record. At every interval boundary it turns
its samples into one HdrHistogram per tag and sends them with the interval's error counts to
the parent, which merges the processes' histograms per interval.

Tags: ``<OP>-st`` service time (actual send to response) for every op, and ``<OP>-rt`` response
time (intended start to response) under a fixed rate. Values in nanoseconds. Failed ops are not
recorded as latencies; they are counted per kind (backends.ERROR_KINDS), and after an "other"
error (lost connection, client timeout, no host) the coroutine pauses 10 ms so a dead cluster
does not turn the loop into a busy spin. Ops are never retried, unless the plan says ``retries``
(a preparation load: its writes are idempotent and every key must be written): then a failed op
is sent again, up to ``retries`` times, its service time running from its first send; only an op
that failed every time counts as an error, and the retries are counted apart (``done``'s
``retried``).

Messages to the parent (plain tuples, see ``engine``): ready, interval, done, fatal.
The worker ignores SIGINT (the parent decides when to stop and tells it through ``stop``) and
asks the kernel to kill it when the parent dies (PR_SET_PDEATHSIG), so a SIGKILLed engine
leaves no load running.
"""

from __future__ import annotations

import asyncio
import ctypes
import os
import resource
import select
import signal
import sys
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from cassperf.workload import keys as keymod
from cassperf.workload.backends.base import ERROR_KINDS, Executor, Target, create
from cassperf.workload.recorder import Samples, histogram_of
from cassperf.workload.scheduler import NS_PER_S, Schedule, schedule_for
from cassperf.workload.spec import WorkloadSpec

OTHER_ERROR_PAUSE_S = 0.01
DRAIN_TIMEOUT_S = 5.0
#: ops per batch when the values are cassandra-stress's (keys.stress_values): smaller stalls
STRESS_VALUES_BATCH = 256
_PR_SET_PDEATHSIG = 1
_FOREVER = 2**62
#: what Worker._failed returns for an op that failed every time it was sent
_FAILED = object()


@dataclass(frozen=True)
class WorkerPlan:
    """What one worker process runs. op_count: this process's ops for an n-based run (None for
    a duration run); concurrency: requests in flight in this process."""

    index: int
    processes: int
    spec: WorkloadSpec
    target: Target
    backend: str
    concurrency: int
    op_count: int | None
    warmup_s: float
    rng_seed: int = 0
    stress_values: bool = False     # write cassandra-stress's column values (keys.stress_values), not the pool's
    retries: int = 0                # times a failed op is sent again before it counts as an error


def op_weights(spec: WorkloadSpec) -> list[tuple[str, int]]:
    """(op name, weight) of the ops a spec runs: the ratio's non-zero entries, or one op."""
    if spec.op == "mixed":
        assert spec.ratio is not None
        return spec.ratio.items()
    return [(spec.op, 1)]


def statements(spec: WorkloadSpec) -> dict[str, str]:
    """The CQL of each op against cassandra-stress's keyspace.standard1."""
    cols = ", ".join(f'"{c}"' for c in sorted(f"C{i}" for i in range(spec.column_count)))
    table = f"{spec.keyspace}.standard1"
    return {
        "write": f"INSERT INTO {table} (key, {cols}) VALUES (?{', ?' * spec.column_count})",
        "read": f"SELECT * FROM {table} WHERE key = ?",
        "delete": f"DELETE FROM {table} WHERE key = ?",
    }


def tags_for(ops: list[str], fixed: bool) -> list[str]:
    return [f"{op.upper()}-{kind}" for op in ops for kind in (("st", "rt") if fixed else ("st",))]


@dataclass
class _Phase:
    """State of one phase (warm-up or measured): its op source, limits and sample buffers."""

    samples: Samples
    end_ns: int
    remaining: int
    schedule: Schedule | None
    errors: list[dict[str, int]] = field(default_factory=list)
    examples: dict[str, str] = field(default_factory=dict)
    empty: list[int] = field(default_factory=list)      # per op: reads that returned no row
    retried: int = 0                                    # ops sent again after a failure (plan.retries)


class Worker:
    def __init__(self, plan: WorkerPlan, send: Callable[[tuple], None], go: Any, t0: Any, stop: Any) -> None:
        self.plan = plan
        self.send = send
        self.go, self.t0_value, self.stop_event = go, t0, stop
        self.ops = [name for name, _ in op_weights(plan.spec)]
        self.fixed = plan.spec.rate.kind == "fixed"
        self.tags = tags_for(self.ops, self.fixed)
        self.backend = create(plan.backend)
        self.execs: list[Executor] = []
        self.stopping = False
        self.write_index = self.ops.index("write") if "write" in self.ops else -1
        self.pool = (None if plan.stress_values
                     else keymod.value_pool(plan.spec.column_count, plan.spec.column_size, plan.rng_seed))
        self.read_index = self.ops.index("read") if "read" in self.ops else -1

    # -- op source ---------------------------------------------------------------------------
    def _source(self, stream: keymod.OpStream, phase: _Phase) -> Callable[[], tuple[int, list[Any]] | None]:
        """A closure handing out (op index, bound values) until the phase's budget is spent."""
        batch = stream.next_batch()
        ops, keys, rows, size, i = batch.ops, batch.keys, batch.values, len(batch.ops), 0
        write = self.write_index

        def take() -> tuple[int, list[Any]] | None:
            nonlocal ops, keys, rows, size, i
            if phase.remaining <= 0 or self.stopping:
                return None
            phase.remaining -= 1
            if i == size:
                b = stream.next_batch()
                ops, keys, rows, size, i = b.ops, b.keys, b.values, len(b.ops), 0
            j = i
            i += 1
            op = ops[j]
            if op == write:
                return op, [keys[j], *rows[j]]
            return op, [keys[j]]

        return take

    # -- the hot loops -------------------------------------------------------------------------
    async def _unpaced(self, phase: _Phase, take: Callable[[], tuple[int, list[Any]] | None]) -> None:
        now, execs, end = time.monotonic_ns, self.execs, phase.end_ns
        st = [phase.samples.buffers[f"{op.upper()}-st"] for op in self.ops]
        read, rows, empty = self.read_index, self.backend.row_count, phase.empty
        while True:
            item = take()
            if item is None:
                return
            op, values = item
            t_send = now()
            if t_send >= end:
                return
            try:
                result = await execs[op](values)
            except Exception as exc:  # noqa: BLE001 - every failure is counted by kind
                result = await self._failed(phase, op, values, exc)
                if result is _FAILED:
                    continue
            st[op].append(now() - t_send)
            if op == read and not rows(result):
                empty[op] += 1

    async def _paced(self, phase: _Phase, take: Callable[[], tuple[int, list[Any]] | None]) -> None:
        now, execs, end, sleep = time.monotonic_ns, self.execs, phase.end_ns, asyncio.sleep
        schedule = phase.schedule
        assert schedule is not None
        st = [phase.samples.buffers[f"{op.upper()}-st"] for op in self.ops]
        rt = [phase.samples.buffers[f"{op.upper()}-rt"] for op in self.ops] if self.fixed else None
        read, rows, empty = self.read_index, self.backend.row_count, phase.empty
        while True:
            item = take()
            if item is None:
                return
            op, values = item
            intended = schedule.intended(now())
            if intended >= end:
                return
            delay = intended - now()
            if delay > 0:
                await sleep(delay / NS_PER_S)
                if self.stopping:
                    return
            t_send = now()
            try:
                result = await execs[op](values)
            except Exception as exc:  # noqa: BLE001
                result = await self._failed(phase, op, values, exc)
                if result is _FAILED:
                    continue
            t_done = now()
            st[op].append(t_done - t_send)
            if rt is not None:  # a timer that fired early (loop resolution) sent the op early
                rt[op].append(t_done - (intended if intended < t_send else t_send))
            if op == read and not rows(result):
                empty[op] += 1

    async def _failed(self, phase: _Phase, op: int, values: list[Any], exc: BaseException) -> Any:
        """After a failed send: the op sent again up to ``retries`` times (each after the pause an
        "other" error gets) until it succeeds, returning its result; else the last failure counted
        (then paused after, when "other") and _FAILED returned."""
        for _ in range(self.plan.retries):
            if self.stopping:
                break
            if self.backend.error_kind(exc) == "other":
                await asyncio.sleep(OTHER_ERROR_PAUSE_S)
            phase.retried += 1
            try:
                return await self.execs[op](values)
            except Exception as again:  # noqa: BLE001 - counted below when it is the last
                exc = again
        if self._error(phase, op, exc):
            await asyncio.sleep(OTHER_ERROR_PAUSE_S)
        return _FAILED

    def _error(self, phase: _Phase, op: int, exc: BaseException) -> bool:
        """Count a failure; True when it is of kind 'other' (the caller pauses)."""
        kind = self.backend.error_kind(exc)
        phase.errors[op][kind] += 1
        name = type(exc).__name__
        if name not in phase.examples:
            phase.examples[name] = str(exc)[:300]
        return kind == "other"

    # -- phases --------------------------------------------------------------------------------
    def _phase(self, start_ns: int, end_ns: int, budget: int | None) -> _Phase:
        spec, plan = self.plan.spec, self.plan
        schedule = None
        if spec.rate.kind != "unlimited":
            schedule = schedule_for(spec.rate, start_ns, plan.index, plan.processes)
        return _Phase(Samples(self.tags), end_ns, budget if budget is not None else _FOREVER, schedule,
                      [dict.fromkeys(ERROR_KINDS, 0) for _ in self.ops], empty=[0] * len(self.ops))

    async def _run_phase(self, phase: _Phase, salt: int) -> int:
        """Run a phase to its end; returns how many in-flight ops were abandoned on a stop
        (after DRAIN_TIMEOUT_S). A bug in a loop propagates."""
        plan = self.plan
        stream = keymod.OpStream(plan.spec, [w for _, w in op_weights(plan.spec)], plan.index,
                                 plan.processes, rng_seed=plan.rng_seed + salt, write_index=self.write_index,
                                 batch=STRESS_VALUES_BATCH if self.pool is None else 4096, pool=self.pool)
        take = self._source(stream, phase)
        loop_fn = self._paced if phase.schedule is not None else self._unpaced
        tasks = [asyncio.ensure_future(loop_fn(phase, take)) for _ in range(plan.concurrency)]
        everything = asyncio.gather(*tasks)
        while True:
            try:
                await asyncio.wait_for(asyncio.shield(everything), timeout=0.25)
                return 0
            except TimeoutError:
                if self.stopping:
                    break
        _, still = await asyncio.wait(tasks, timeout=DRAIN_TIMEOUT_S)
        for t in still:
            t.cancel()
        everything.cancel()
        for t in tasks:
            if t.done() and not t.cancelled() and t.exception() is not None:
                raise t.exception()  # type: ignore[misc]
        return len(still)

    def _interval_message(self, phase: _Phase, k: int, start_ns: int, end_ns: int) -> tuple:
        hists = {}
        for tag, samples in phase.samples.drain().items():
            h = histogram_of(samples)
            hists[tag] = (h.count, h.encoded, h.max_ns, h.clamped)
        errors = {self.ops[i]: dict(e) for i, e in enumerate(phase.errors)}
        for e in phase.errors:
            for kind in e:
                e[kind] = 0
        examples, phase.examples = phase.examples, {}
        empty, phase.empty[:] = list(phase.empty), [0] * len(phase.empty)
        return ("interval", self.plan.index, k, start_ns, end_ns, hists, errors, examples, _rss_bytes(), empty)

    async def _ticker(self, phase: _Phase, t0: int, step: int, closed: list[int]) -> None:
        """Close every interval whose boundary passes, until cancelled."""
        k = 0
        while True:
            boundary = t0 + (k + 1) * step
            if boundary >= phase.end_ns:
                return          # the run's last interval is closed after the drain, ops in flight included
            delay = boundary - time.monotonic_ns()
            if delay > 0:
                await asyncio.sleep(delay / NS_PER_S)
            self.send(self._interval_message(phase, k, t0 + k * step, boundary))
            closed[0] = k = k + 1

    async def _watch(self) -> None:
        """Poll the parent's stop flag (and the parent's life) every 100 ms."""
        parent = os.getppid()
        while not self.stopping:
            if self.stop_event.is_set() or os.getppid() != parent:
                self.stopping = True
                return
            await asyncio.sleep(0.1)

    async def run(self) -> None:
        plan, spec = self.plan, self.plan.spec
        await self.backend.connect(plan.target, spec.cl, spec.keyspace, plan.concurrency,
                                   spec.connections_per_host)
        texts = statements(spec)
        self.execs = [await self.backend.prepare(texts[op]) for op in self.ops]
        loop_name = "uvloop" if type(asyncio.get_running_loop()).__module__.startswith("uvloop") else "asyncio"
        self.send(("ready", plan.index, self.backend.version(), os.getpid(), loop_name))
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(None, self.go.wait)
        watcher = asyncio.ensure_future(self._watch())
        t0 = int(self.t0_value.value)
        step = round(spec.interval_s * NS_PER_S)
        warm_task = None
        if plan.warmup_s > 0 and not self.stopping:
            # warm-up ops still in flight at t0 finish on their own, unrecorded
            warm_task = asyncio.ensure_future(self._run_phase(self._phase(time.monotonic_ns(), t0, None), 1))
        end_ns = t0 + spec.duration * NS_PER_S if spec.duration is not None else _FOREVER
        measured = self._phase(t0, end_ns, plan.op_count)
        now = time.monotonic_ns()
        if now < t0:
            await asyncio.sleep((t0 - now) / NS_PER_S)
        use0, rss0 = _usage(), _rss_bytes()
        closed = [0]
        ticker = asyncio.ensure_future(self._ticker(measured, t0, step, closed))
        abandoned = 0
        if not self.stopping:
            abandoned = await self._run_phase(measured, salt=0)
        ticker.cancel()
        finish = time.monotonic_ns()
        k = closed[0]
        self.send(self._interval_message(measured, k, t0 + k * step, max(finish, t0 + k * step + 1)))
        use = [b - a for a, b in zip(use0, _usage(), strict=True)]
        if warm_task is not None:
            await warm_task
        watcher.cancel()
        await self.backend.close()
        self.send(("done", plan.index, k, {"cpu_s": use[0], "main_thread_cpu_s": use[1],
                                           "voluntary_switches": use[2], "involuntary_switches": use[3],
                                           "abandoned": abandoned, "stopped": self.stopping,
                                           "retried": measured.retried,
                                           "rss_start_bytes": rss0, "rss_bytes": _rss_bytes()}))


def _usage() -> tuple[float, float, int, int]:
    """This process's CPU seconds (every thread: the event loop's and the driver's I/O threads),
    the calling (event loop) thread's CPU seconds, and the process's voluntary and involuntary
    context switches. A voluntary switch is a thread going to sleep to be woken again; below
    saturation a paced client's CPU per op follows its wake-ups, not its work (bench/wakeup_cost.py)."""
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime, time.thread_time(), r.ru_nvcsw, r.ru_nivcsw


def _rss_bytes() -> int:
    try:
        with open("/proc/self/statm", encoding="ascii") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def _die_with_parent() -> None:
    """PR_SET_PDEATHSIG(SIGKILL): the kernel kills this process when its parent dies (Linux)."""
    try:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        pass


def _die_with(pid: int) -> None:
    """Kill this process when process ``pid`` (the engine) ends. A worker forked by the
    forkserver has the forkserver for its parent, and the forkserver waits for its children: with
    PR_SET_PDEATHSIG alone, a SIGKILLed engine left its workers loading until their run's end."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        os._exit(1)
    except (OSError, AttributeError):     # no pidfd here (Linux < 5.3): the parent-death signal only
        return

    def wait() -> None:
        select.select([fd], [], [])
        os.kill(os.getpid(), signal.SIGKILL)

    threading.Thread(target=wait, name="cassperf-engine-watch", daemon=True).start()


def worker_main(plan: WorkerPlan, queue: Any, go: Any, t0: Any, stop: Any,
                env: dict[str, str] | None = None, engine_pid: int | None = None) -> None:
    """Process entry point (spawned, or forked from the forkserver: then ``env`` is the engine's
    environment at the run's start, which credentials are read from). Sends ('fatal', index,
    traceback) on any failure. Dies with the engine (``engine_pid``) and with its parent."""
    if env is not None:
        os.environ.clear()
        os.environ.update(env)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _die_with_parent()
    if engine_pid is not None and engine_pid != os.getppid():
        _die_with(engine_pid)
    runner = asyncio.run
    if os.environ.get("CASSPERF_EVENT_LOOP", "uvloop") == "uvloop":
        try:
            import uvloop  # noqa: PLC0415 - pinned; about 20% less CPU per op than asyncio's loop
            runner = uvloop.run
        except ImportError:
            pass
    try:
        runner(Worker(plan, queue.put, go, t0, stop).run())
    except BaseException:  # noqa: BLE001 - reported to the parent, then exit non-zero
        queue.put(("fatal", plan.index, traceback.format_exc()))
        raise SystemExit(1) from None
    # Done, and "done" sent: flush the queue and leave without the interpreter's teardown (the
    # driver's threads and modules unwinding cost about 0.4 s per worker, which the parent
    # waited for at the end of every run).
    queue.close()
    queue.join_thread()
    for stream in (sys.stdout, sys.stderr):
        if stream is not None:
            stream.flush()
    os._exit(0)
