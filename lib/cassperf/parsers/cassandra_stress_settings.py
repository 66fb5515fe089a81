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
PROFILE_MARKER = "******************** Profile ********************"

#: top-level sections of the settings dump (to recognise a dump whose head was cut off)
SECTIONS = frozenset({"Command", "Rate", "Population", "Insert", "Columns", "Errors", "Log", "Mode", "Node",
                      "Schema", "Transport", "Port", "Send To Daemon", "Graph", "TokenRange", "Reporting",
                      "Sample", "Misc"})

# Rate:
SECTION_RE = re.compile(r"^([A-Z][A-Za-z ]*):\s*$")

#   Thread Count: 3
ENTRY_RE = re.compile(r"^\s+([^:]+?):\s?(.*)$")

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
    if cmd.get("Profile File"):
        parts.append(f"profile={cmd['Profile File']}")
    count = _digits(cmd.get("Count", ""))
    if count and count != "0" and not count.startswith("-"):
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
