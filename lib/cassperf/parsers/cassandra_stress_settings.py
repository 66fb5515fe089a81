"""The settings dump and command line of a cassandra-stress run, and what they say about latency.

cassandra-stress prints its settings before running (unless `-log no-settings`):

    ******************** Stress Settings ********************
    Command:
      Type: write
      Count: 25,000
    Rate:
      Auto: false
      Thread Count: 3
      OpsPer Sec: 0

User mode (`user profile=...`) adds the profile dump after the settings, one block per profile
(StressSettings.printSettings, then StressProfile.printSettings; 3.x/4.0 print 'Profile', 4.1/5.0
'Profile(s)'):

    ******************** Profile(s) ********************
      Keyspace Name: ks_user
      Keyspace CQL:
    ***
    CREATE KEYSPACE IF NOT EXISTS "ks_user" WITH replication = {...} AND durable_writes = true;
    ***

      Table Name: standard1
      ...
      Query Definitions:
        read: CQL:SELECT * FROM standard1 WHERE key = ?;Fields:samerow;

Its structure is the rule that recognises it (profile_line_kind): two-space `Key: value` entries,
four-space `name: value` items of the entry above them (Generator Configs, Query Definitions,
Token Range Queries, Insert Settings), `***` fences around verbatim CQL (any lines, unindented;
the closing fence may end the last CQL line: `null***` when the YAML has no keyspace/table
definition), and blank lines. A line that fits none of these continues the value above it when it follows an
entry, an item or such a line directly (the YAML's multi-line queries are printed verbatim, e.g.
`simple1: CQL:select ... > '2020-01-01'` then `LIMIT 15000`), unless it is a line cassandra-stress
or the driver prints after the dump (`Connected to cluster`, `Insert Statement:`, a JDK or driver
log line, ...): that line, or any other line after a blank one, ends the dump. `Generating
batches ...` (printed after each profile) is tool chatter and does not end it. parse_profile keeps
the dump as sections 'Profile' (then 'Profile 2', ...): entries by key, CQL as its text, items as 'Entry.name'
(e.g. 'Query Definitions.read'). The `Insert Statement:` line cassandra-stress prints when it
prepares a user-mode insert, and the indented statement after it, become section
'Insert Statement', key 'CQL' ('CQL 2', ... for more).

Latency type. cassandra-stress reports service time (send -> response) unless the run used
`-rate fixed=N/s`: then each op has an intended start on a fixed schedule and the printed
latency is response time (intended start -> response, coordinated omission corrected;
TimingInterval.getLatencyHistogram). `throttle=N/s` (and 2.1/3.0's `limit=N/s`) only caps the
rate: service time. The settings dump prints the rate ('OpsPer Sec: 2000') but not which of
fixed/throttle set it, so a non-zero rate with no echoed command line is 'unknown'.
"""

from __future__ import annotations

import re
from typing import Any

SETTINGS_MARKER = "******************** Stress Settings ********************"
PROFILE_MARKER = "******************** Profile ********************"          # 3.x, 4.0
PROFILE_MARKERS = frozenset({PROFILE_MARKER, "******************** Profile(s) ********************"})  # 4.1, 5.0

# Insert Statement:        (StressProfile.getInsert; the next line is '  ' + the statement)
INSERT_STATEMENT_MARKER = "Insert Statement:"

#: top-level sections of the settings dump (to recognise a dump whose head was cut off)
SECTIONS = frozenset({"Command", "Rate", "Population", "Insert", "Columns", "Errors", "Log", "Mode", "Node",
                      "Schema", "Transport", "Port", "Send To Daemon", "Graph", "TokenRange", "Reporting",
                      "Sample", "Misc", "JMX", "Credentials file"})

# Rate:
SECTION_RE = re.compile(r"^([A-Z][A-Za-z ]*):\s*$")

#   Thread Count: 3
ENTRY_RE = re.compile(r"^\s+([^:]+?):\s?(.*)$")

#   Keyspace Name: ks_user   |     read: CQL:SELECT * FROM standard1 WHERE key = ?;Fields:samerow;
PROFILE_ENTRY_RE = re.compile(r"^(  |    )(\S[^:]*?):(?: (.*?))?\s*$")

# ***      (fence around a profile's verbatim CQL)
CQL_FENCE = "***"

# ./tools/bin/cassandra-stress user profile="file:///.../x.yaml" n=100000 "ops(insert=500,simple1=1)" no-warmup
COMMAND_RE = re.compile(r"(?:^|[\s/\\$>])cassandra-stress(?:\.bat|\.sh)?\s+"
                        r"((?:write|read|mixed|counter_write|counter_read|user|legacy|print|help|version)\b.*)$")

# no-warmup./tools/bin/cassandra-stress: 2: ./tools/bin/cassandra-stress: expert: not found  (shell error glued on)
_SHELL_ERROR_RE = re.compile(r"(?:\.{1,2}/|/)\S*?cassandra-stress: \d+: .*$")

# -rate threads=3 fixed=2000/s   |   -rate throttle=500/s   |   -rate limit=1000/s
_RATE_OPTION_RE = re.compile(r"\b(fixed|throttle|limit)=(\d+)/s\b")


def parse_settings(lines: list[str]) -> dict[str, dict[str, str]]:
    """Settings dump lines (without the marker) -> {section: {key: value}}.

    Indented lines that are not `key: value` (Transport's one-line dump) go under key '_'."""
    out: dict[str, dict[str, str]] = {}
    section = "_"
    for line in lines:
        m = SECTION_RE.match(line)
        if m and not line.startswith(" "):
            section = m.group(1)
            out.setdefault(section, {})
            continue
        m = ENTRY_RE.match(line)
        if m and "=" not in m.group(1):
            out.setdefault(section, {})[m.group(1).strip()] = m.group(2).strip()
        elif line.strip():
            prev = out.setdefault(section, {}).get("_")
            out[section]["_"] = line.strip() if prev is None else prev + " " + line.strip()
    return out


def profile_line_kind(line: str, in_cql: bool) -> str | None:
    """What a line of the profile dump is: 'fence', 'cql' (inside a fence), 'blank', 'entry'
    (two-space `Key: value`), 'item' (four-space `name: value`), or None: not part of the dump."""
    stripped = line.strip()
    if stripped == CQL_FENCE or (in_cql and stripped.endswith(CQL_FENCE)):
        return "fence"          # 'null***': a CQL of null (or without a final newline) ends on the fence's line
    if in_cql:
        return "cql"
    if not stripped:
        return "blank"
    m = PROFILE_ENTRY_RE.match(line)
    if m is None:
        return None
    return "entry" if len(m.group(1)) == 2 else "item"


def parse_profile(lines: list[str]) -> dict[str, dict[str, str]]:
    """Profile dump lines (without the marker) -> {'Profile': {key: value}, 'Profile 2': ...}.

    A `Key:` entry followed by a `***` fence takes the fenced CQL as its value (lines joined
    with newlines, surrounding blank space stripped); items under an entry become 'Entry.name'."""
    out: dict[str, dict[str, str]] = {}
    section: dict[str, str] | None = None
    entry: str | None = None
    last: str | None = None           # the key the next continuation line belongs to
    cql: list[str] | None = None
    for line in lines:
        kind = profile_line_kind(line, cql is not None)
        if kind == "fence":
            if cql is None:
                cql = []
            else:
                cql.append(line.rstrip()[:-len(CQL_FENCE)])
                if section is not None and entry is not None:
                    section[entry] = "\n".join(cql).strip()
                cql, last = None, None
            continue
        if kind == "cql":
            assert cql is not None
            cql.append(line.rstrip())
            continue
        m = PROFILE_ENTRY_RE.match(line) if kind in ("entry", "item") else None
        if m is None:
            if kind is None and section is not None and last is not None:     # a value printed on more lines
                section[last] = (section[last] + "\n" + line.rstrip()).strip()
            if kind == "blank":
                last = None
            continue
        key, value = m.group(2).strip(), (m.group(3) or "").strip()
        if kind == "entry":
            if key == "Keyspace Name" or section is None:
                name = "Profile" if "Profile" not in out else f"Profile {sum(k.startswith('Profile') for k in out) + 1}"
                section = out.setdefault(name, {})
            entry = last = key
            section[key] = value
        elif section is not None and entry is not None:
            last = f"{entry}.{key}"
            section[last] = value
    if cql is not None and section is not None and entry is not None:     # a fence never closed (cut)
        section[entry] = "\n".join(cql).strip()
    return out


def command_from_echo(line: str) -> str | None:
    """The arguments of an echoed cassandra-stress command line, or None."""
    m = COMMAND_RE.search(line)
    if not m:
        return None
    return _SHELL_ERROR_RE.sub("", m.group(1)).strip() or None


def _digits(value: str) -> str:
    return re.sub(r"[^\d]", "", value)


def command_from_settings(settings: dict[str, dict[str, str]]) -> str | None:
    """A command line equivalent to the settings dump (the dump does not echo the real one).

    Only options the dump states unambiguously are rebuilt: type, n= or duration=, no-warmup,
    cl=, ops()/ratio(), profile=, -rate and -node."""
    cmd = settings.get("Command", {})
    kind = cmd.get("Type")
    if not kind:
        return None
    parts = [kind.lower()]
    profile = cmd.get("Profile File") or cmd.get("Profile File(s)")        # 'Profile File(s)' from 4.1
    if profile:
        parts.append(f"profile={profile}")
    count = _digits(cmd.get("Count", ""))
    if count and count != "0" and not cmd.get("Count", "").strip().startswith("-"):     # 'Count: -1': a duration run
        parts.append(f"n={count}")
    if cmd.get("Duration"):
        m = re.match(r"(\d+)\s*([A-Za-z]+)", cmd["Duration"])
        if m:
            parts.append(f"duration={m.group(1)}{m.group(2)[0].lower()}")
    ratios = cmd.get("Command Ratios")
    if ratios:
        pairs = re.findall(r"([\w.\-]+)=([\d.]+)", ratios)
        body = ",".join(f"{k}={float(v):g}" for k, v in pairs)
        parts.append(f"ops({body})" if kind.lower() == "user" else f"ratio({body})")
    if cmd.get("No Warmup", "").lower() == "true":
        parts.append("no-warmup")
    if cmd.get("Consistency Level"):
        parts.append(f"cl={cmd['Consistency Level']}")
    rate = settings.get("Rate", {})
    if rate.get("Auto", "").lower() == "true":
        lo, hi = rate.get("Min Threads"), rate.get("Max Threads")
        parts.append("-rate auto" + (f" threads>={lo}" if lo else "") + (f" threads<={hi}" if hi else ""))
    elif rate.get("Thread Count"):
        parts.append(f"-rate threads={rate['Thread Count']}")
    nodes = settings.get("Node", {}).get("Nodes")
    if nodes:
        parts.append("-node " + nodes.strip("[]").replace(" ", ""))
    return " ".join(parts)


def rate_and_latency_type(command: str | None, command_complete: bool,
                          settings: dict[str, dict[str, str]] | None,
                          auto_seen: bool) -> tuple[dict[str, Any], str]:
    """(rate description, latency type) from what the output shows.

    command_complete: the command holds every argument (an echo or a -graph record), so an
    absent -rate means the defaults (auto, or threads=200 for write n=): no rate limit."""
    if command:
        rate_part = command.split("-rate", 1)[1] if "-rate" in command else ""
        rate_part = re.split(r"\s-[a-z]", rate_part, maxsplit=1)[0]
        m = _RATE_OPTION_RE.search(rate_part)
        if m and int(m.group(2)) > 0:
            mode, ops_s = m.group(1), int(m.group(2))
            return {"mode": mode, "ops_s": ops_s}, "response" if mode == "fixed" else "service"
        threads = re.search(r"threads=(\d+)", rate_part)
        if threads:
            return {"mode": "threads", "ops_s": None, "threads": int(threads.group(1))}, "service"
        if "auto" in rate_part or "threads>=" in rate_part or "threads<=" in rate_part or command_complete:
            return {"mode": "auto" if (rate_part or auto_seen) else "default", "ops_s": None}, "service"
    rate = (settings or {}).get("Rate", {})
    if rate.get("Auto", "").lower() == "true" or auto_seen:
        return {"mode": "auto", "ops_s": None}, "service"
    if rate:
        ops_s = int(_digits(rate.get("OpsPer Sec", "0")) or 0)
        if ops_s == 0:
            return {"mode": "threads", "ops_s": None}, "service"
        return {"mode": "fixed or throttle", "ops_s": ops_s}, "unknown"
    return {"mode": "unknown", "ops_s": None}, "unknown"
