"""Java Flight Recorder files -> tables of stack samples and GC pauses.

A run recorded with a profile (``cassperf.cluster.profiler``) keeps each node's recording as
raw output, ``raw/profiles/<node>.jfr``. ``profile_samples`` reads the recordings of many runs
into one table of stack samples (``cassperf.analysis.profiles.SAMPLE_COLUMNS``) on each run's
own time axis, and a table of GC pauses:

    from cassperf.parsers.jfr import profile_samples
    found = profile_samples(runs_frame["path"])        # run folders or run ids
    found.samples        # run_id node state thread pool stack time_s count
    found.gc             # run_id node event name cause time_s duration_ms
    found.notes          # one line per run or recording that gave no samples, and why

The conversion is ``JfrSamples.java`` (beside this module) on the JDK's own reader
(``jdk.jfr.consumer.RecordingFile``): one JVM converts every file of the call, so a report of
hundreds of runs pays one JVM start, not one per file. It is compiled once with the JDK's javac
into the cache (``<cache>/jfr/<source hash>-java<N>/``; source-file mode where there is no
javac). The Java is $JAVA_HOME's, else the ``java`` on PATH; ``java=`` names another.

Derived tables are rebuilt from the raw .jfr and never written into a run folder (run folders
are immutable): they are cached beside the runs, ``<runs>/.profiles/<run_id>/<node>-<key>.*``
(parquet, and a JSON that commits them), ``key`` a hash of the recording's bytes and of the
converter, so a new recording or a new converter never reads a stale table. Deleting
``.profiles`` loses nothing.

A file that is not a whole recording (cut short, empty, not a .jfr) is one line naming it,
what was expected and the fix: ``read_jfr`` raises it as a ParseError; ``profile_samples`` puts
it in ``notes`` and goes on with the other files (``errors="raise"`` raises the first).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
from pandas.api.types import union_categoricals

from cassperf import config
from cassperf.analysis.profiles import SAMPLE_COLUMNS, pools_of
from cassperf.errors import CassperfError, ParseError
from cassperf.results.store import read_manifest, run_folder

SOURCE = Path(__file__).with_name("JfrSamples.java")
#: where a run keeps its recordings, inside its folder: raw/profiles/<node>.jfr
PROFILES_DIR = Path("raw") / "profiles"
#: the cache of derived tables, beside the run folders
CACHE_DIR = ".profiles"
#: the note of a run recorded without a profile whose manifest gives no reason
UNRECORDED = "no profile (recorded without one)"


class BadRecording(ParseError):
    """A file that is not a whole recording, in one line: the file, what was expected, what the
    reader said (``why``), the fix."""

    def __init__(self, path: str | Path, why: str) -> None:
        super().__init__(str(path), None, None,
                         f"a whole Java Flight Recorder file, as a node writes it when its recording stops (the "
                         f"reader said: {why}); fix: a recording cut short (a killed run, a full disk) cannot be "
                         f"read: delete the file to leave its run without this profile, or run the run again")
        self.why = why

GC_COLUMNS: dict[str, str] = {"run_id": "string", "node": "string", "event": "string", "name": "string",
                              "cause": "string", "time_s": "float64", "duration_ms": "float64"}
_STATES = {"J": "java", "N": "native"}


class JfrUnavailable(CassperfError):
    """No Java here can read Flight Recorder files (no java, or one without the jdk.jfr module)."""


@dataclass(frozen=True)
class JfrTables:
    """One recording as read: ``samples`` (state, thread, stack, epoch_ns; one row per sample),
    ``gc`` (event, name, cause, epoch_ns, duration_ns) and the execution-sample ``period`` the
    recording ran with, as JFR states it ("20 ms"; "" when the recording does not say)."""

    path: str
    samples: pd.DataFrame
    gc: pd.DataFrame
    period: str


# -- the converter ---------------------------------------------------------------------------
def jfr_java(java: str | Path | None = None) -> Path:
    """The Java that reads recordings: ``java``, else $JAVA_HOME/bin/java, else ``java`` on PATH."""
    if java is not None:
        return Path(java)
    home = os.environ.get("JAVA_HOME")
    if home and (Path(home) / "bin" / "java").exists():
        return Path(home) / "bin" / "java"
    found = shutil.which("java")
    if not found:
        raise JfrUnavailable("no Java to read Flight Recorder files (JAVA_HOME unset, no java on PATH); install a "
                             "JDK 17 (Debian: apt-get install openjdk-17-jdk-headless) or set JAVA_HOME")
    return Path(found)


def _digest(path: Path) -> str:
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def _converter(java: Path) -> list[str]:
    """The command that runs JfrSamples: its class compiled once into the cache with the javac
    beside ``java``, else the source file in source-file mode."""
    javac = java.parent / "javac"
    if not javac.exists():
        return [str(java), "-XX:TieredStopAtLevel=1", str(SOURCE)]
    out = config.cache_dir() / "jfr" / f"{_digest(SOURCE)[:12]}-{hashlib.sha256(str(java).encode()).hexdigest()[:8]}"
    if not (out / "JfrSamples.class").exists():
        out.parent.mkdir(parents=True, exist_ok=True)
        work = Path(tempfile.mkdtemp(prefix=".compile-", dir=out.parent))
        try:
            proc = subprocess.run([str(javac), "-nowarn", "-d", str(work), str(SOURCE)], capture_output=True,
                                  text=True, timeout=300)
            if proc.returncode != 0:
                raise JfrUnavailable(f"compiling {SOURCE.name} with {javac} failed (exit {proc.returncode}): "
                                     f"{(proc.stderr.strip().splitlines() or [''])[0]}")
            try:
                os.rename(work, out)
            except OSError:
                if not (out / "JfrSamples.class").exists():
                    raise
        finally:
            shutil.rmtree(work, ignore_errors=True)
    return [str(java), "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-cp", str(out), "JfrSamples"]


def convert_jfr(paths: Sequence[str | Path], *, java: str | Path | None = None,
                timeout_s: float = 1800.0) -> list[JfrTables | BadRecording]:
    """Every recording of ``paths`` read in one JVM: a JfrTables each, or the ParseError of a
    file that is not a whole recording, in the given order. JfrUnavailable when no Java here
    can read recordings."""
    if not paths:
        return []
    exe = jfr_java(java)
    with tempfile.TemporaryDirectory(prefix="cassperf-jfr-") as tmp:
        prefixes = [str(Path(tmp) / str(k)) for k in range(len(paths))]
        lines = [f"{Path(p).resolve()}\t{prefix}" for p, prefix in zip(paths, prefixes, strict=True)]
        if any("\n" in line or line.count("\t") != 1 for line in lines):
            raise ValueError("a recording's path has a tab or a newline in it")
        try:
            proc = subprocess.run(_converter(exe), input="\n".join(lines) + "\n", capture_output=True, text=True,
                                  timeout=timeout_s)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise JfrUnavailable(f"{exe} did not convert the recordings: {exc}") from None
        answers: dict[int, list[str]] = {}
        for text in proc.stdout.splitlines():
            parts = text.split("\t")
            if len(parts) >= 3 and parts[0] in ("OK", "ERR") and parts[1].isdigit():
                answers[int(parts[1])] = parts
        if not answers:
            why = (proc.stderr.strip().splitlines() or [f"exit {proc.returncode}"])[0]
            raise JfrUnavailable(f"{exe} cannot read Flight Recorder files ({why}); a JDK 11 or later with the "
                                 f"jdk.jfr module reads them: set JAVA_HOME to one")
        out: list[JfrTables | BadRecording] = []
        for k, path in enumerate(paths):
            parts = answers.get(k, ["ERR", str(k), "no answer (the converter ended early)"])
            if parts[0] == "ERR":
                out.append(BadRecording(path, parts[2]))
                continue
            out.append(JfrTables(str(path), _read_samples(prefixes[k]), _read_gc(prefixes[k] + ".gc.tsv"),
                                 parts[4] if len(parts) > 4 else ""))
        return out


def read_jfr(path: str | Path, *, java: str | Path | None = None) -> JfrTables:
    """One recording's tables; ParseError (one line: the file, what was expected, the fix) when
    it is not a whole recording."""
    (got,) = convert_jfr([path], java=java)
    if isinstance(got, BadRecording):
        raise got
    return got


def _read_samples(prefix: str) -> pd.DataFrame:
    stacks = pd.read_csv(prefix + ".stacks.tsv", sep="\t", header=None, names=["id", "frames"], quoting=3,
                         dtype={"id": "int64", "frames": "string"}, keep_default_na=False, na_filter=False)
    rows = pd.read_csv(prefix + ".samples.tsv", sep="\t", header=None, names=["state", "thread", "stack", "epoch_ns"],
                       quoting=3, dtype={"state": "string", "thread": "string", "stack": "int64", "epoch_ns": "int64"},
                       keep_default_na=False, na_filter=False)
    frames = pd.Categorical(stacks["frames"].astype(str))
    codes = pd.Series(frames.codes, index=stacks["id"].to_numpy())
    stack = pd.Categorical.from_codes(codes.reindex(rows["stack"].to_numpy()).to_numpy(), categories=frames.categories)
    return pd.DataFrame({"state": pd.Categorical(rows["state"].map(_STATES)),
                         "thread": pd.Categorical(rows["thread"].astype(str)),
                         "stack": stack, "epoch_ns": rows["epoch_ns"].to_numpy()})


def _read_gc(path: str) -> pd.DataFrame:
    return pd.read_csv(path, sep="\t", header=None, names=["event", "name", "cause", "epoch_ns", "duration_ns"],
                       quoting=3, dtype={"event": "string", "name": "string", "cause": "string", "epoch_ns": "int64",
                                         "duration_ns": "int64"}, keep_default_na=False, na_filter=False)


# -- runs ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Profiles:
    """The profiles of a set of runs: ``samples`` (SAMPLE_COLUMNS; thread, pool and stack as
    categoricals), ``gc`` (GC_COLUMNS: each pause, and each collection with its sum of pauses),
    ``notes`` (one line per run or recording that gave no samples, and why), ``periods``
    (run_id -> the execution-sample period its recordings ran with)."""

    samples: pd.DataFrame
    gc: pd.DataFrame
    notes: list[str] = field(default_factory=list)
    periods: dict[str, str] = field(default_factory=dict)


def run_t0_ns(manifest: dict) -> int:
    """The run's time origin (time_s = 0) in ns since the epoch: the engine's ``t0_epoch_s``,
    else ``started_utc``."""
    if isinstance(manifest.get("t0_epoch_s"), (int, float)):
        return int(round(float(manifest["t0_epoch_s"]) * 1e9))
    return int(pd.Timestamp(manifest["started_utc"]).value)


def _cached(cache: Path, node: str, key: str) -> tuple[JfrTables | BadRecording | None, Path]:
    """The tables cached for this recording, or None (not cached, or a cache that cannot be
    read: it is rebuilt)."""
    stem = cache / f"{node}-{key}"
    meta = stem.with_suffix(".json")
    if not meta.exists():
        return None, stem
    try:
        data = json.loads(meta.read_text(encoding="utf-8"))
        if data.get("error") is not None:
            return BadRecording(data["path"], data["error"]), stem
        return JfrTables(data["path"], pd.read_parquet(f"{stem}.samples.parquet"),
                         pd.read_parquet(f"{stem}.gc.parquet"), data.get("period", "")), stem
    except Exception:  # noqa: BLE001 - a damaged cache entry is rebuilt from the recording
        return None, stem


def _store(stem: Path, got: JfrTables | BadRecording) -> None:
    """Cache the tables of one recording; a runs folder this process cannot write to caches
    nothing (the tables are rebuilt next time)."""
    try:
        stem.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(got, BadRecording):
            meta = {"path": got.path, "error": got.why}
        else:
            got.samples.to_parquet(f"{stem}.samples.parquet", index=False)
            got.gc.to_parquet(f"{stem}.gc.parquet", index=False)
            meta = {"path": got.path, "error": None, "period": got.period}
        tmp = stem.with_name(f".{stem.name}.json.tmp")
        tmp.write_text(json.dumps(meta), encoding="utf-8")
        os.replace(tmp, stem.with_suffix(".json"))      # written last: the parquet files are whole
    except OSError:
        pass


def profile_samples(runs: Iterable[str | Path], *, root: str | Path | None = None, java: str | Path | None = None,
                    cache: bool = True, errors: str = "note") -> Profiles:
    """The stack samples and GC pauses of ``runs`` (run folders or run ids under ``root``), each
    on its run's own time axis (module doc). Recordings not in the cache are converted in one
    JVM. A run without recordings gets a note (the reason its manifest gives, when it gives
    one), a run with some gets a note per line its manifest gives (a node not recorded); a
    recording that is not whole gets its one-line ParseError as a note, or raised with
    ``errors="raise"``."""
    if errors not in ("note", "raise"):
        raise ValueError(f"errors={errors!r}: expected 'note' or 'raise'")
    notes: list[str] = []
    periods: dict[str, str] = {}
    todo: list[tuple[str, str, int, Path, Path]] = []           # run_id, node, t0_ns, jfr, cache stem
    found: list[tuple[str, str, int, JfrTables]] = []
    converter = _digest(SOURCE)
    folders = [run_folder(str(r) if not isinstance(r, Path) else r, root) for r in runs]
    for folder in dict.fromkeys(f.resolve() for f in folders):        # each run once
        manifest = read_manifest(folder)
        run_id = str(manifest.get("run_id", folder.name))
        files = sorted((folder / PROFILES_DIR).glob("*.jfr"))
        said = (manifest.get("profile") or {}).get("notes") or []
        if not files:
            notes.append(f"run {run_id}: " + (f"no profile ({'; '.join(said)})" if said else UNRECORDED))
            continue
        notes.extend(f"run {run_id}: {line}" for line in said)       # e.g. one node of several not recorded
        t0 = run_t0_ns(manifest)
        for jfr in files:
            key = hashlib.sha256((_digest(jfr) + converter).encode()).hexdigest()[:16]
            got, stem = _cached(folder.parent / CACHE_DIR / run_id, jfr.stem, key) if cache else (None, Path())
            if got is None:
                todo.append((run_id, jfr.stem, t0, jfr, folder.parent / CACHE_DIR / run_id / f"{jfr.stem}-{key}"))
            elif isinstance(got, BadRecording):
                _bad(got, errors, notes)
            else:
                found.append((run_id, jfr.stem, t0, got))
    if todo:
        for (run_id, node, t0, _, stem), got in zip(todo, convert_jfr([t[3] for t in todo], java=java), strict=True):
            if cache:
                _store(stem, got)
            if isinstance(got, BadRecording):
                _bad(got, errors, notes)
            else:
                found.append((run_id, node, t0, got))
    for run_id, _, _, got in found:
        periods.setdefault(run_id, got.period)
    return Profiles(_samples(found), _gc(found), notes, periods)


def _bad(error: BadRecording, errors: str, notes: list[str]) -> None:
    if errors == "raise":
        raise error
    notes.append(str(error))


def _cat(parts: list[pd.Categorical | pd.Series]) -> pd.Categorical:
    return union_categoricals([pd.Categorical(p) for p in parts], ignore_order=True)


def _samples(found: list[tuple[str, str, int, JfrTables]]) -> pd.DataFrame:
    parts = [(run_id, node, t0, got.samples) for run_id, node, t0, got in found if len(got.samples)]
    if not parts:
        return pd.DataFrame({c: pd.Series(dtype=t) for c, t in SAMPLE_COLUMNS.items()})
    sizes = [len(s) for *_, s in parts]
    thread = _cat([s["thread"] for *_, s in parts])
    stack = _cat([s["stack"] for *_, s in parts])
    frame = pd.DataFrame({
        "run_id": _repeated([r for r, *_ in parts], sizes),
        "node": _repeated([n for _, n, *_ in parts], sizes),
        "state": _cat([s["state"] for *_, s in parts]),
        "thread": thread,
        "pool": pools_of(pd.Series(thread), pd.Series(stack)).to_numpy(),
        "stack": stack,
        "time_s": pd.concat([(s["epoch_ns"] - t0) / 1e9 for _, _, t0, s in parts], ignore_index=True).to_numpy(),
        "count": 1,
    })
    frame["count"] = frame["count"].astype("int64")
    return frame


def _repeated(values: list[str], sizes: list[int]) -> pd.Categorical:
    """values[k] repeated sizes[k] times, as a categorical."""
    codes, uniques = pd.factorize(pd.Series(values, dtype="string"))
    return pd.Categorical.from_codes(np.repeat(codes, sizes), categories=uniques)


def _gc(found: list[tuple[str, str, int, JfrTables]]) -> pd.DataFrame:
    parts = [got.gc.assign(run_id=run_id, node=node, time_s=(got.gc["epoch_ns"] - t0) / 1e9,
                           duration_ms=got.gc["duration_ns"] / 1e6)
             for run_id, node, t0, got in found if len(got.gc)]
    if not parts:
        return pd.DataFrame({c: pd.Series(dtype=t) for c, t in GC_COLUMNS.items()})
    return pd.concat(parts, ignore_index=True)[list(GC_COLUMNS)].astype(GC_COLUMNS)
