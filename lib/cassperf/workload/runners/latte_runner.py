"""latte (crates.io `latte-cli`, 0.29) as a subprocess, from a WorkloadSpec, into a run being written.

    with RunWriter(tool="latte") as run:
        run_latte(spec, run, cluster=cluster)

Where it is found (first hit wins): the file `$LATTE` names, `latte` on PATH, `~/.cargo/bin/latte`
(where `cargo install latte-cli` puts it; the Makefile's optional `make latte` does that).

latte runs Rune scripts; this runner ships `latte/standard1.rn`, which writes, reads and deletes
rows of cassandra-stress's keyspace1.standard1 schema. The spec maps onto latte like this:

    op / ratio          -f write | read | delete | write:4,read:5,delete:1 (weights, as latte takes them)
    n / duration        -d <n> (cycles) | -d <seconds>s
    warmup=False        -w 0 (otherwise latte's default, one warmup cycle)
    concurrency         -t <worker_threads> -p <ceil(concurrency / worker_threads)>  (requests in flight)
    rate                -r <ops/s> for fixed and throttle (latte has one rate mode: a schedule)
    interval_s          -s <interval>
    cl                  --consistency (latte has no SERIAL / LOCAL_SERIAL: a WorkloadSpecError)
    local_dc            --datacenter
    connections_per_host  -c
    population          -P key_dist/key_low/key_high/key_mean/key_stdev; None: cassandra-stress's
                        defaults (write: seq=1..N; others gaussian(1..N), mean (1+N)/2, stdev (N-1)/6;
                        N = n, or 1,000,000 for duration runs)
    keyspace, replication, compaction, compression, columns
                        -P keyspace_cql / table_cql: exactly `schema_cql(spec)` (cassandra-stress's own
                        CREATE statements), run by `latte schema` first unless schema=False
    nodes               positional addresses (the cluster's contact points when the spec names none;
                        "address:port" when its CQL port is not 9042)
    max_pending, hdr_file, log_file, graph_file
                        not expressible: each becomes a run warning (latte keeps its JSON report,
                        raw/latte-report.json; `latte hdr` turns that into an HDR log)

Output: `latte schema` to raw/latte-schema.txt, `latte run` (with -q: no progress bar of its own)
to raw/latte.txt and a tqdm bar; latte's own log file goes to raw/ (--log-dir). raw/latte.txt is
parsed with the "latte" parser into the run (streaming.store_result); tool_version comes from
`latte --version` (the report does not print it). A non-zero exit raises ToolError after
everything printed has been stored.

A secured cluster (streaming.tool_credentials: the handle's CASSPERF_USERNAME / CASSPERF_PASSWORD
variables): latte 0.29 reads `--user` / `--password` from the environment variables
CASSANDRA_USER / CASSANDRA_PASSWORD (clap `env`), so the runner puts them in the environment of
`latte schema` and `latte run` and the argv stays exactly as without credentials (the password
is in no process list). latte writes the whole connection config, password in clear text, into
its JSON report (`Report.conf.connection`), so with credentials `-o` and `--log-dir` point at a
private temporary folder outside the run; afterwards the report and log are copied into raw/
through the redaction filter (`"password": "<redacted>"`) and the folder is removed. Every
printed line is filtered too. A CASSANDRA_PASSWORD already in the tool's environment is
redacted in the same way. The manifest says `tool_auth`: "environment" and
`tool_auth_from_env`: the variables' names (`tool_auth_from_file`: an embedded cluster's role
file).

A TLS cluster (streaming.tool_tls): `--ssl --ssl-ca <CA file>` (and `--ssl-cert`, `--ssl-key`
for a client certificate) on both commands, the PEM files as they are. latte 0.29 builds its
OpenSSL context without a verify mode (connect.rs: SslContextBuilder::new), so it encrypts but
does not check the node's certificate, whatever the CA file holds.
"""

from __future__ import annotations

import dataclasses
import math
import os
import re
import subprocess
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from cassperf.cluster.tls import TlsOptions
from cassperf.constraints import Whole
from cassperf.errors import ToolError
from cassperf.parsers.base import ParseResult
from cassperf.workload.runners.streaming import (
    Progress, ProcessOutcome, Redactor, ToolNotFoundError, copy_tool_files, executable_from_env, is_executable_file,
    private_workdir, raise_if_failed, store_tool_output, stream_process, tail_text, tool_credentials, tool_tls, which,
)
from cassperf.workload.runners.stress_cmdline import schema_cql
from cassperf.workload.spec import Population, WorkloadSpec, WorkloadSpecError

TOOL = "latte"
ENV_VAR = "LATTE"
RAW_NAME = "latte.txt"
SCHEMA_RAW_NAME = "latte-schema.txt"
REPORT_NAME = "latte-report.json"
WORKLOAD = Path(__file__).resolve().parent / "latte" / "standard1.rn"
INSTALL_HINT = "`make latte`, or `cargo install latte-cli --version 0.29.0` (about 10 minutes to build)"
#: latte 0.29's environment variables for --user / --password (config.rs ConnectionConf).
USER_ENV_VAR = "CASSANDRA_USER"
PASSWORD_ENV_VAR = "CASSANDRA_PASSWORD"
LATTE_CONSISTENCY = ("ONE", "TWO", "THREE", "QUORUM", "ALL", "LOCAL_ONE", "LOCAL_QUORUM", "EACH_QUORUM")
DEFAULT_POPULATION_SIZE = 1_000_000   # cassandra-stress's key count for runs without n=

# Cassandra Latency and Throughput Tester 0.29.0
_VERSION_RE = re.compile(r"(\d+\.\d+\.\d+\S*)")
# latte 0.29 LOG row: time [s], cycles [op], errors [op], throughput [op/s], latency percentiles [ms]
#    1.000     19891         0     19888             0.4       1.3       1.9       2.6       3.4       6.1      11.4      22.8
_LOG_ROW_RE = re.compile(r"^\s*(\d+\.\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s")


def locate_latte(environ: Mapping[str, str] | None = None) -> Path:
    """The latte to run: $LATTE, else PATH, else ~/.cargo/bin/latte; ToolNotFoundError otherwise."""
    env = os.environ if environ is None else environ
    explicit = executable_from_env(env, ENV_VAR, "point it at latte, or unset it to search PATH and ~/.cargo/bin")
    if explicit is not None:
        return explicit
    found = which("latte", env.get("PATH"))
    if found is not None:
        return found
    home = Path(env["HOME"]) if env.get("HOME") else Path.home()
    cargo = home / ".cargo" / "bin" / "latte"
    if is_executable_file(cargo):
        return cargo
    raise ToolNotFoundError(f"latte was not found: not on PATH, not at {cargo}, and {ENV_VAR} is not set. "
                            f"Install it with {INSTALL_HINT}")


def latte_version(executable: str | Path, env: Mapping[str, str] | None = None) -> str | None:
    """latte's version from `latte --version` ('0.29.0'), None when it does not say."""
    try:
        proc = subprocess.run([str(executable), "--version"], capture_output=True, text=True, timeout=30,
                              env=dict(env) if env is not None else None)
    except (OSError, subprocess.TimeoutExpired):
        return None
    m = _VERSION_RE.search(proc.stdout)
    return m.group(1) if proc.returncode == 0 and m else None


def rune_string(text: str) -> str:
    """A Rune string literal (what -P needs for a string parameter)."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _rune_float(x: float) -> str:
    return repr(float(x))                    # 500000.0 stays a float literal in Rune


def default_population(spec: WorkloadSpec) -> Population:
    """cassandra-stress's default population for the spec (SettingsPopulation)."""
    size = spec.n or DEFAULT_POPULATION_SIZE
    if spec.op == "write":
        return Population("seq", 1, size)
    return Population("gaussian", 1, size)


def population_params(pop: Population) -> list[tuple[str, str]]:
    params = [("key_dist", rune_string(pop.kind)), ("key_low", str(pop.low)), ("key_high", str(pop.high))]
    if pop.kind == "gaussian":
        mean = pop.mean if pop.mean is not None else (pop.low + pop.high) / 2
        stdev = pop.stdev if pop.stdev is not None else max((pop.high - pop.low) / 6, 1e-9)
        params += [("key_mean", _rune_float(mean)), ("key_stdev", _rune_float(stdev))]
    return params


def _interval(seconds: float) -> str:
    ms = round(seconds * 1000)
    return f"{ms // 1000}s" if ms % 1000 == 0 else f"{ms}ms"


@dataclass(frozen=True)
class LatteCommand:
    run: list[str]                 # latte run ...
    schema: list[str]              # latte schema ...
    notes: list[str] = field(default_factory=list)   # what the spec asks and latte cannot do


def latte_commands(spec: WorkloadSpec, executable: str | Path, *, cluster: Any = None, workload: Path = WORKLOAD,
                   worker_threads: int = 1, report_path: str | Path | None = None,
                   log_dir: str | Path | None = None) -> LatteCommand:
    """The `latte schema` and `latte run` argv for `spec` (see the module doc for the mapping)."""
    if not Whole(1).accepts(worker_threads):
        raise WorkloadSpecError("worker_threads",
                                f"latte worker_threads must be a whole number >= 1, got {worker_threads!r}")
    if spec.cl not in LATTE_CONSISTENCY:
        raise WorkloadSpecError("cl", f"latte has no consistency level {spec.cl} (it takes "
                                      f"{', '.join(LATTE_CONSISTENCY)})")
    notes: list[str] = []
    head = [str(executable)] + (["--log-dir", str(log_dir)] if log_dir is not None else [])
    nodes = list(spec.nodes) or (list(cluster.contact_points) if cluster is not None else [])
    if cluster is not None and int(cluster.port) != 9042:
        nodes = [f"{n}:{int(cluster.port)}" for n in nodes]
    keyspace_stmt, table_stmt = (s.strip().rstrip(";") for s in schema_cql(spec))
    schema_params = [("keyspace", rune_string(spec.keyspace)), ("keyspace_cql", rune_string(keyspace_stmt)),
                     ("table_cql", rune_string(table_stmt))]
    data_params = [("keyspace", rune_string(spec.keyspace)), ("columns", str(spec.column_count)),
                   ("column_size", str(spec.column_size)),
                   *population_params(spec.population or default_population(spec))]
    dc = ["--datacenter", spec.local_dc] if spec.local_dc is not None else []

    if spec.op == "mixed":
        assert spec.ratio is not None
        functions = ",".join(f"{name}:{weight}" for name, weight in spec.ratio.items())
    else:
        functions = spec.op
    run = [*head, "run", str(workload), "-f", functions,
           "-d", str(spec.n) if spec.n is not None else f"{spec.duration}s"]
    if not spec.warmup:
        run += ["-w", "0"]
    per_thread = math.ceil(spec.concurrency / worker_threads)
    if per_thread * worker_threads != spec.concurrency:
        notes.append(f"concurrency {spec.concurrency} over {worker_threads} latte worker threads: {per_thread} per "
                     f"thread, {per_thread * worker_threads} requests in flight")
    run += ["-t", str(worker_threads), "-p", str(per_thread)]
    if spec.rate.kind != "unlimited":
        run += ["-r", str(spec.rate.ops_per_s)]
        if spec.rate.kind == "throttle":
            notes.append(f"rate throttle={spec.rate.ops_per_s}/s runs as latte -r {spec.rate.ops_per_s}: latte "
                         f"has one rate mode, a fixed schedule")
    run += ["-s", _interval(spec.interval_s), "--consistency", spec.cl, *dc]
    if spec.connections_per_host is not None:
        run += ["-c", str(spec.connections_per_host)]
    tls = tls_args(tool_tls(cluster))
    for name in ("max_pending", "hdr_file", "log_file", "graph_file"):
        if getattr(spec, name) is not None:
            notes.append(f"{name}={getattr(spec, name)} has no latte equivalent and is ignored (latte keeps its "
                         f"JSON report; `latte hdr <report>` writes an HDR log)")
    for key, value in data_params:
        run += ["-P", f"{key}={value}"]
    run += ["-q"]
    if report_path is not None:
        run += ["-o", str(report_path)]
    run += tls + nodes
    schema = [*head, "schema", str(workload), *dc]
    for key, value in schema_params:
        schema += ["-P", f"{key}={value}"]
    schema += tls + nodes
    return LatteCommand(run, schema, notes)


def tls_args(tls: TlsOptions | None) -> list[str]:
    """latte's TLS flags for `tls` (none for plaintext)."""
    if tls is None:
        return []
    out = ["--ssl"]
    for flag, path in (("--ssl-ca", tls.ca_file), ("--ssl-cert", tls.cert_file), ("--ssl-key", tls.key_file)):
        if path:
            out += [flag, str(path)]
    return out


class LatteProgress:
    """(done, tool time) from latte 0.29 LOG rows: done is cycles so far (counted runs) or seconds."""

    def __init__(self, counted: bool) -> None:
        self.counted = counted
        self.cycles = 0.0

    def __call__(self, line: str) -> tuple[float, float] | None:
        m = _LOG_ROW_RE.match(line)
        if not m:
            return None
        time_s = float(m.group(1))
        self.cycles += float(m.group(2))
        return (self.cycles if self.counted else time_s), time_s


@dataclass(frozen=True)
class LatteResult:
    command: LatteCommand
    process: ProcessOutcome
    raw_path: Path
    parsed: ParseResult | None


def reads_without_row(parsed: ParseResult) -> tuple[int, int] | None:
    """(reads that found no row, reads) from latte's per-function summary (its 'read' row: a
    read by key returns at most one row), or None when every read found its row or latte did
    not say."""
    missing = reads = 0
    for run in parsed.runs:
        summary = run.summary
        if summary.empty or "rows" not in summary.columns:
            continue
        rows = summary[summary["op"] == "read"]
        if "latency_metric" in rows.columns:       # the cycle-time and response-time rows repeat the counts
            rows = rows.drop_duplicates(subset=["count", "rows"])
        for count, found in zip(rows["count"], rows["rows"]):
            if pd.notna(count) and pd.notna(found) and found < count:
                missing, reads = missing + int(count - found), reads + int(count)
    return (missing, reads) if missing else None


def _shown(argv: list[str]) -> str:
    return " ".join(f"'{a}'" if (" " in a or '"' in a) else a for a in ["latte", *argv[1:]])


def run_latte(spec: WorkloadSpec, writer: Any, *, cluster: Any = None, executable: str | Path | None = None,
              schema: bool = True, worker_threads: int = 1, progress: bool = True, timeout_s: float | None = None,
              env: Mapping[str, str] | None = None, on_start: Callable[[int], None] | None = None) -> LatteResult:
    """Run latte for `spec` into `writer` (an open RunWriter); see the module doc. `on_start`:
    called with the load's pid once it runs."""
    exe = Path(executable) if executable is not None else locate_latte(env)
    creds = tool_credentials(cluster)
    tool_env = env
    if creds is not None:
        tool_env = {**(os.environ if env is None else env), USER_ENV_VAR: creds.username,
                    PASSWORD_ENV_VAR: creds.password}
    secret = (os.environ if tool_env is None else tool_env).get(PASSWORD_ENV_VAR)
    redactor = Redactor([secret]) if secret else None
    raw_dir = writer.path / "raw"
    raw_path = raw_dir / RAW_NAME
    with private_workdir(enabled=redactor is not None) as private:
        out_dir = private / "cwd" if private is not None else raw_dir
        cmd = latte_commands(spec, exe, cluster=cluster, worker_threads=worker_threads, report_path=out_dir / REPORT_NAME,
                             log_dir=out_dir)
        shown_run = redactor.argv(cmd.run) if redactor else cmd.run
        shown_schema = redactor.argv(cmd.schema) if redactor else cmd.schema
        shown = _shown(shown_run)
        writer.manifest.update(tool=TOOL, command=shown, executable=str(exe))
        if creds is not None:
            writer.manifest.update(tool_auth="environment", **creds.origin())
        writer.manifest.setdefault("parameters", {})["workload"] = dataclasses.asdict(spec)
        for note in cmd.notes:
            writer.warn(f"latte: {note}")
        try:
            if schema:
                schema_out = writer.raw_stream(SCHEMA_RAW_NAME)
                with writer.phase("latte-schema", _shown(shown_schema)):
                    done = stream_process(cmd.schema, schema_out, env=tool_env, cwd=out_dir, timeout_s=timeout_s,
                                          redactor=redactor)
                if done.returncode != 0 or done.timed_out:
                    raise ToolError(shown_schema, done.returncode, tail_text(raw_dir / SCHEMA_RAW_NAME), "",
                                    hint=f"latte schema failed; output in {raw_dir / SCHEMA_RAW_NAME}")
            raw = writer.raw_stream(RAW_NAME)
            counted = spec.n is not None
            bar = Progress(LatteProgress(counted), total=float(spec.n or spec.duration or 0) or None,
                           unit="op" if counted else "s", desc=f"latte {spec.op}", enabled=progress)
            try:
                with writer.phase(TOOL, shown):
                    outcome = stream_process(cmd.run, raw, bar.line, env=tool_env, cwd=out_dir,
                                             timeout_s=timeout_s, redactor=redactor, on_start=on_start)
            finally:
                bar.close()
        finally:
            if redactor is not None:
                copy_tool_files(out_dir, writer, redactor)
    parsed = store_tool_output(writer, raw_path, outcome, bar.anchor, tool=TOOL, table_prefix="latte_",
                               redactor=redactor)
    if parsed is not None:
        missing = reads_without_row(parsed)
        if missing:
            found_none, reads = missing
            writer.warn(f"latte: {found_none:,} of {reads:,} reads ({found_none / reads:.1%}) found no row; latte's "
                        f"keys are its own bytes (latte::blob), not cassandra-stress's or the engine's, so it reads "
                        f"only rows latte wrote: load the table with latte (op write, the same population) first. "
                        f"row_rate_s counts the rows found, rate_ops_s every read")
    if not writer.manifest.get("tool_version"):
        writer.manifest["tool_version"] = latte_version(exe, tool_env)   # the text report does not print it
    raise_if_failed(shown_run, outcome, raw_path, timeout_s)
    return LatteResult(cmd, outcome, raw_path, parsed)
