"""Your question as you write it (cassperf.experiments.question): each arm's options and each
workload, from their text, and whether an arm's table and node were what it asked.

    parse_setting("LCS: compaction LCS(sstable_size_in_mb=160), compression LZ4") -> Setting
    parse_workload("heavy: read cl=ONE -rate threads=64", study) -> Workload (its spec filled in)
    took(setting, measured) -> (True, "LCS: compaction LeveledCompactionStrategy, ...")

Bad text is one ConfigError line naming the entry, what was expected and an example.
"""

from __future__ import annotations

import dataclasses
import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from cassperf.errors import ConfigError
from cassperf.workload.spec import Compaction, Compression, Replication, WorkloadSpec

#: the options of an arm, each with an example value
OPTIONS = {"compaction": "LCS(sstable_size_in_mb=160)", "compression": "LZ4(chunk_length_in_kb=16)",
           "cassandra": "4.1.10", "jvm": "-XX:+UseZGC"}
ARM_FORM = ("'NAME: OPTION VALUE, ...' with OPTION VALUE one of compaction STRATEGY[(key=value,...)], "
            "compression COMPRESSOR[(chunk_length_in_kb=N)], cassandra VERSION, jvm -OPTION")
ARM_EXAMPLE = "LCS: compaction LCS(sstable_size_in_mb=160), compression LZ4"
_ARM = re.compile(r"\s*(?P<name>[A-Za-z0-9][A-Za-z0-9_.+-]*)\s*:(?P<options>.*)", re.S)
_VALUE = re.compile(r"(?P<value>[^\s(]+)(?:\((?P<sub>[^()]*)\))?")
_WORKLOAD_NAME = re.compile(r"\s*(?P<name>[a-z][a-z0-9_-]*)\s*:\s+(?P<command>.*)", re.S)
_VERSION = re.compile(r"\d+\.\d+\.\d+")


@dataclass(frozen=True)
class Setting:
    """What one arm sets: table options (compaction, compression) and node options (Cassandra
    version, JVM options; None / () keep the given cluster's)."""

    name: str
    compaction: Compaction | None = None
    compression: Compression | None = None
    cassandra: str | None = None
    jvm: tuple[str, ...] = ()

    @property
    def context(self) -> str:
        """"" (the given cluster) without node options, else the node setting's own context."""
        node = ", ".join([f"cassandra {self.cassandra}"] * bool(self.cassandra) + [f"jvm {o}" for o in self.jvm])
        return f"node {node}" if node else ""

    @property
    def table_key(self) -> str:
        """6 hex digits of the table options: a keyspace per distinct table, never one made otherwise."""
        return hashlib.sha256(repr((self.compaction, self.compression)).encode()).hexdigest()[:6]

    def labels(self) -> dict[str, str]:
        out = {"setting": self.name}
        if self.compaction is not None:
            out["compaction"] = self.compaction.strategy.rsplit(".", 1)[-1] + "".join(
                f" {k}={v}" for k, v in self.compaction.options)
        if self.compression is not None:
            chunk = self.compression.chunk_length_in_kb
            out["compression"] = self.compression.compressor + (f" {chunk} KiB" if chunk else "")
        if self.cassandra:
            out["cassandra"] = self.cassandra
        if self.jvm:
            out["jvm"] = " ".join(self.jvm)
        return out


def _top_level(options: str) -> list[str]:
    """The words of an arm's options: commas outside parentheses separate like spaces, and no
    space is kept inside parentheses or around '='."""
    text = re.sub(r"\s*([(=])\s*", r"\1", options)
    depth, out = 0, []
    for ch in text:
        depth += (ch == "(") - (ch == ")")
        if not (depth > 0 and ch.isspace()):
            out.append(" " if ch == "," and depth == 0 else ch)
    return "".join(out).split()


def parse_setting(text: str) -> Setting:
    """One ``arm_options`` entry (cassperf.experiments.question's module doc) as a Setting;
    ConfigError in one line naming it."""
    def fail(what: str) -> ConfigError:
        return ConfigError(f"arm_options: {text!r}: {what}; expected {ARM_FORM}, e.g. {ARM_EXAMPLE!r}")

    m = _ARM.fullmatch(str(text))
    if not m:
        raise fail("no arm name before ':'")
    words = _top_level(m.group("options"))
    found: dict[str, Any] = {"jvm": []}
    for key, value in zip(words[::2], [*words[1::2], ""], strict=False):
        if key not in OPTIONS:
            raise fail(f"{key!r} is not an option")
        o = _VALUE.fullmatch(value)
        if not o:
            raise fail(f"{key} needs a value, e.g. {OPTIONS[key]!r}")
        if key != "jvm" and key in found:
            raise fail(f"{key} is given twice")
        sub = [p.partition("=") for p in (o.group("sub") or "").split(",") if p]
        if any(not s or not k or not v for k, s, v in sub):
            raise fail(f"'{key} {value}': the part in parentheses is key=value,...")
        try:
            if key == "compaction":
                found[key] = Compaction(o.group("value"), tuple((k, v) for k, _, v in sub))
            elif key == "compression":
                chunk = dict((k, v) for k, _, v in sub)
                if set(chunk) - {"chunk_length_in_kb"} or not all(v.isdigit() for v in chunk.values()):
                    raise fail(f"'{key} {value}': a compressor takes only (chunk_length_in_kb=N)")
                kb = chunk.get("chunk_length_in_kb")
                found[key] = Compression(o.group("value"), int(kb) if kb else None)
            elif key == "cassandra":
                if sub or not _VERSION.fullmatch(value):
                    raise fail(f"'{key} {value}': a Cassandra version is like 4.1.10")
                found[key] = _cassandra_version(value, fail)
            elif not value.startswith("-"):
                raise fail(f"'{key} {value}': a JVM option starts with '-', e.g. 'jvm -XX:+UseZGC'")
            else:
                found["jvm"].append(value)
        except ConfigError as exc:
            if str(exc).startswith("arm_options: "):
                raise
            raise fail(str(exc)) from None
    return Setting(m.group("name"), found.get("compaction"), found.get("compression"), found.get("cassandra"),
                   tuple(found["jvm"]))


def _cassandra_version(version: str, fail: Any) -> str:
    from cassperf.cluster.java import SUPPORTED_JAVA, cassandra_line

    if SUPPORTED_JAVA.get(cassandra_line(version)) is None:
        raise fail(f"'cassandra {version}': not a line cassperf runs locally "
                   f"({', '.join(k + '.x' for k in SUPPORTED_JAVA)})")
    return version


@dataclass(frozen=True)
class Workload:
    """One workload: its name, its spec with the study's defaults filled in (keyspace and table
    options are each arm's), and whether its concurrency is the study's (calibrated at 0)."""

    name: str
    command: str
    spec: WorkloadSpec
    calibrated: bool

    @property
    def op(self) -> str:
        """The op a claim on this workload compares: its own, the reads of a mixed one."""
        return "read" if self.spec.op == "mixed" else self.spec.op


def parse_workload(text: str, study: Any) -> Workload:
    """One ``workloads`` entry (cassperf.experiments.question's module doc) as a Workload, the
    study's parameters (rows, run_s, interval_s, cl, rf, local_dc, column_size, column_count)
    filling in what its command line leaves out; ConfigError in one line naming it."""
    from cassperf.workload.runners.stress_cmdline import (command_tokens, option_key, parse_stress_command,
                                                          split_groups)

    named = _WORKLOAD_NAME.fullmatch(str(text))
    command = named.group("command") if named else str(text)
    try:
        tokens = command_tokens(command)
        op, params, groups = split_groups(tokens)
        given = {option_key(p) for p in params}
        if "-node" in groups:
            raise ConfigError("-node is not taken: the cluster is the study's")
        kept = [p for p in params if option_key(p) not in ("n", "duration")]
        argv = [op, *kept, f"duration={study.run_s}s", *tokens[1 + len(params):]]
        spec = parse_stress_command(argv + ([] if "-rate" in groups else ["-rate", "threads=1"]))
    except ConfigError as exc:
        raise ConfigError(f"workloads: {text!r}: {exc}; e.g. 'read', or 'heavy: read cl=ONE -rate threads=64'") \
            from None
    if spec.keyspace != "keyspace1" or spec.compaction is not None or spec.compression is not None:
        raise ConfigError(f"workloads: {text!r}: -schema keyspace=, compaction(...) and compression= are the arms' "
                          f"(each arm its own table); give only replication(...) there, or no -schema")
    fill: dict[str, Any] = {"duration": study.run_s, "n": None, "interval_s": study.interval_s,
                            "local_dc": spec.local_dc or study.local_dc}
    if "-pop" not in groups:
        fill["population"] = f"uniform(1..{study.rows})"
    if "cl" not in given:
        fill["cl"] = study.cl
    if "-col" not in groups:
        fill.update(column_count=study.column_count, column_size=study.column_size)
    if "-schema" not in groups:
        fill["replication"] = Replication.network_topology({study.local_dc: study.rf})
    name = named.group("name") if named else spec.op
    return Workload(name, " ".join(str(command).split()), dataclasses.replace(spec, **fill), "-rate" not in groups)


def took(s: Setting, found: Mapping[str, str]) -> tuple[bool, str]:
    """Whether the arm's table and node are what it asked, as measured: (took, the figure)."""
    said, ok = [], True
    have = {k: v for k, _, v in (p.partition("=") for p in str(found.get("measured_compaction", "")).split(", "))}
    if s.compaction is not None:
        want = {"class": s.compaction.strategy.rsplit(".", 1)[-1], **dict(s.compaction.options)}
        ok &= all(have.get(k) == v for k, v in want.items())
    said.append(f"compaction {have.get('class') or 'unknown'}")
    comp = {k: v for k, _, v in (p.partition("=") for p in str(found.get("measured_compression", "")).split(", "))}
    if s.compression is not None:
        chunk = s.compression.chunk_length_in_kb
        ok &= comp.get("class") == s.compression.compressor and (
            chunk is None or comp.get("chunk_length_in_kb") == str(chunk))
    said.append(f"compression {found.get('measured_compression') or 'none'}")
    if s.cassandra:
        ok &= found.get("measured_cassandra") == s.cassandra
        said.append(f"Cassandra {found.get('measured_cassandra') or 'unknown'}")
    if s.jvm:
        jvm = str(found.get("measured_jvm", "")).split()
        ok &= all(o in jvm for o in s.jvm)
        said.append(f"JVM options {'found' if all(o in jvm for o in s.jvm) else 'missing'}: {' '.join(s.jvm)}")
    return ok, f"{s.name}: " + ", ".join(said)
