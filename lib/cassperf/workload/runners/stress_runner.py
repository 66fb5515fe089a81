"""cassandra-stress as a subprocess, from a WorkloadSpec, into a run being written.

    with RunWriter(tool="cassandra-stress", labels={"rf": 3}) as run, \\
            ClusterSampler(cluster, tables=[("keyspace1", "standard1")], writer=run):
        run_cassandra_stress(spec, run, cluster=cluster)

Where it is found (first hit wins): the file `$CASSANDRA_STRESS` names (it must then exist and
be executable), `$CASSANDRA_HOME/tools/bin/cassandra-stress`, `cassandra-stress` on PATH.
cassandra-stress ships only in the Apache Cassandra tarball (not on Maven Central).

The argv is `[cassandra-stress, *spec.to_stress_args()]`, plus `-node <contact points>` when
the spec names no nodes and a cluster is given, and `-port native=<port>` when that cluster's
CQL port is not 9042. A spec with a delete share (which simple mode cannot run), or any spec
when `user_profile=True`, runs in user mode instead: the profile YAML
(`stress_profile.profile_yaml(spec)`) is written to raw/cassandra-stress-profile.yaml (the
manifest's `stress_profile` names it) and the argv is `[cassandra-stress, user
profile=cassandra-stress-profile.yaml ops(...) ...]` (`stress_profile.to_user_args`); the
manifest's `command` shows that line. `user_profile=False` forces simple mode (a delete share
then raises). In user mode the parsed per-op rows are named by the ops: insert, read, delete
(simple mode prints WRITE, READ), and keys differ from simple mode's for the same seed (see
stress_profile), so load a table for a user-mode run in user mode. The tool runs in the run's raw/ folder, so relative hdrfile=, file= and
graph file= paths land there. Its stdout and stderr go line by line to raw/cassandra-stress.txt
and to a progress bar (total ops, or seconds for duration= runs); afterwards the file is parsed
with the "cassandra-stress" parser (and an hdrfile= log with "hdr-log") into the run: intervals
(times moved to the run's clock, see streaming.store_result), summary, histograms, the parser's
tables (prefixed "cassandra_stress_"), its warnings. A non-zero exit raises ToolError after
everything that was printed has been stored.
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cassperf.errors import ParseError, ToolError
from cassperf.parsers import parse
from cassperf.parsers.base import ParseResult
from cassperf.workload.runners.streaming import (
    Progress, ProcessOutcome, ToolNotFoundError, is_executable_file, store_result, stream_process, tail_text,
    which,
)
from cassperf.workload.spec import WorkloadSpec
from cassperf.workload.stress_cmdline import display_command
from cassperf.workload.stress_profile import PROFILE_NAME, needs_profile, profile_yaml, to_user_args

TOOL = "cassandra-stress"
RAW_NAME = "cassandra-stress.txt"
ENV_VAR = "CASSANDRA_STRESS"

# total,                                                   164,     160,     160,     160,    19.1,     1.6,    93.1,    96.9,   193.5,   193.5,    2.0,  0.67580,      0,      0,       0,       0,       0,       0
_TOTAL_ROW_RE = re.compile(r"^total,\s*(\d+),")


def locate_cassandra_stress(environ: Mapping[str, str] | None = None) -> Path:
    """The cassandra-stress to run: $CASSANDRA_STRESS, else $CASSANDRA_HOME/tools/bin, else PATH.
    ToolNotFoundError names every place looked at and what was found there."""
    env = os.environ if environ is None else environ
    explicit = env.get(ENV_VAR)
    if explicit:
        path = Path(explicit).expanduser()
        if is_executable_file(path):
            return path
        why = "does not exist" if not path.exists() else ("is not a file" if not path.is_file() else
                                                          "is not executable (chmod +x?)")
        raise ToolNotFoundError(f"{ENV_VAR}={explicit} {why}; point it at the cassandra-stress script of a "
                                f"Cassandra install (<install>/tools/bin/cassandra-stress), or unset it to search "
                                f"$CASSANDRA_HOME/tools/bin and PATH")
    looked = []
    home = env.get("CASSANDRA_HOME")
    if home:
        path = Path(home).expanduser() / "tools" / "bin" / "cassandra-stress"
        if is_executable_file(path):
            return path
        state = "is not executable" if path.is_file() else "does not exist"
        looked.append(f"$CASSANDRA_HOME/tools/bin/cassandra-stress ({path}) {state}")
    else:
        looked.append("$CASSANDRA_HOME/tools/bin: CASSANDRA_HOME is not set")
    found = which("cassandra-stress", env.get("PATH"))
    if found is not None:
        return found
    looked.append("no cassandra-stress on PATH")
    raise ToolNotFoundError(
        "cassandra-stress was not found: " + "; ".join(looked) + f"; {ENV_VAR} is not set. Set {ENV_VAR} to "
        "the script, or CASSANDRA_HOME to a Cassandra install (the Apache tarball has tools/bin/cassandra-stress), "
        "or put cassandra-stress on PATH. It is not on Maven Central; without it, run the workload with latte "
        "(`make latte`) or the python-driver engine")


def stress_argv(spec: WorkloadSpec, executable: str | Path, cluster: Any = None, *,
                schema_precreated: bool = False, profile: str | None = None) -> list[str]:
    """The full argv: the executable, spec.to_stress_args() (or, given a `profile` path, the
    user-mode arguments to_user_args(spec, profile)), and the cluster's contact points
    (`-node a,b`) and CQL port (`-port native=N`, only when not 9042) where the spec names no
    nodes."""
    if cluster is not None and not spec.nodes:
        spec = dataclasses.replace(spec, nodes=tuple(cluster.contact_points))
    args = (to_user_args(spec, profile) if profile is not None
            else spec.to_stress_args(schema_precreated=schema_precreated))
    argv = [str(executable), *args]
    if cluster is not None and int(cluster.port) != 9042:
        argv += ["-port", f"native={int(cluster.port)}"]
    return argv


def stress_progress_row(line: str) -> tuple[float, float] | None:
    """(total ops so far, tool time in s) from a cassandra-stress `total,` interval row."""
    if not _TOTAL_ROW_RE.match(line):
        return None
    fields = [f.strip() for f in line.split(",")]
    return float(fields[1]), float(fields[11])


@dataclass(frozen=True)
class StressResult:
    argv: list[str]
    process: ProcessOutcome
    raw_path: Path
    parsed: ParseResult | None


def run_cassandra_stress(spec: WorkloadSpec, writer: Any, *, cluster: Any = None, executable: str | Path | None = None,
                         schema_precreated: bool = False, progress: bool = True, timeout_s: float | None = None,
                         env: Mapping[str, str] | None = None, user_profile: bool | None = None) -> StressResult:
    """Run cassandra-stress for `spec` into `writer` (an open RunWriter); see the module doc.
    `user_profile`: None runs user mode only for a spec with a delete share, True always,
    False never."""
    exe = Path(executable) if executable is not None else locate_cassandra_stress(env)
    use_profile = needs_profile(spec) if user_profile is None else user_profile
    argv = stress_argv(spec, exe, cluster, schema_precreated=schema_precreated,
                       profile=PROFILE_NAME if use_profile else None)
    if use_profile:
        writer.add_raw(PROFILE_NAME, profile_yaml(spec))
        writer.manifest["stress_profile"] = f"raw/{PROFILE_NAME}"
    shown = display_command(["cassandra-stress", *argv[1:]])
    writer.manifest.update(tool=TOOL, command=shown, executable=str(exe))
    writer.manifest.setdefault("parameters", {})["workload"] = dataclasses.asdict(spec)
    raw = writer.raw_stream(RAW_NAME)
    raw_path = writer.path / "raw" / RAW_NAME
    counted = spec.n is not None
    bar = Progress(lambda line: _bar_units(line, counted), total=float(spec.n or spec.duration or 0) or None,
                   unit="op" if counted else "s", desc=f"cassandra-stress {spec.op}", enabled=progress)
    try:
        with writer.phase(TOOL, shown):
            outcome = stream_process(argv, raw, bar.line, env=env, cwd=writer.path / "raw", timeout_s=timeout_s)
    finally:
        bar.close()
    parsed = None
    try:
        parsed = parse(raw_path, format="cassandra-stress")
    except ParseError as exc:
        if outcome.returncode == 0:
            raise
        writer.warn(f"cassandra-stress printed nothing parseable: {exc}")
    if parsed is not None:
        store_result(writer, parsed, bar.anchor, table_prefix="cassandra_stress_")
    if spec.hdr_file is not None:
        _store_hdr(writer, writer.path / "raw" / spec.hdr_file)
    if outcome.returncode != 0 or outcome.timed_out:
        hint = f"stopped after timeout_s={timeout_s}" if outcome.timed_out else f"output in {raw_path}"
        raise ToolError(argv, outcome.returncode, tail_text(raw_path), "", hint=hint)
    return StressResult(argv, outcome, raw_path, parsed)


def _bar_units(line: str, counted: bool) -> tuple[float, float] | None:
    row = stress_progress_row(line)
    if row is None:
        return None
    ops, tool_s = row
    return (ops if counted else tool_s), tool_s


def _store_hdr(writer: Any, path: Path) -> None:
    if not path.is_file():
        writer.warn(f"cassandra-stress wrote no HDR log at {path}")
        return
    try:
        result = parse(path, format="hdr-log")
    except ParseError as exc:
        writer.warn(f"HDR log {path.name} not read: {exc}")
        return
    for run in result.runs:
        if not run.histograms.empty:
            writer.append_histograms(run.histograms)
    writer.manifest.setdefault("histogram_unit", "ns")

