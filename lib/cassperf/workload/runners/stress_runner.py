"""cassandra-stress as a subprocess, from a WorkloadSpec, into a run being written.

    with RunWriter(tool="cassandra-stress", labels={"rf": 3}) as run, \\
            ClusterSampler(cluster, tables=[("keyspace1", "standard1")], writer=run):
        run_cassandra_stress(spec, run, cluster=cluster)

Where it is found (first hit wins): the file `$CASSANDRA_STRESS` names (it must then exist and
be executable), `$CASSANDRA_HOME/tools/bin/cassandra-stress`, `cassandra-stress` on PATH.
cassandra-stress ships only in the Apache Cassandra tarball (not on Maven Central).

The argv is `[cassandra-stress, *to_stress_args(spec)]` (`stress_cmdline`), plus `-node <contact points>` when
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

A secured cluster (streaming.tool_credentials: the handle's CASSPERF_USERNAME / CASSPERF_PASSWORD
variables). cassandra-stress 5.0 reads `-credentials-file <file>` (a Java properties file,
cql.username / cql.password): the runner uses it when the install beside the executable is 5.0 or
later (`lib/apache-cassandra-<version>.jar`, see `stress_install_version`) or when
`credentials_file=True`; the file is written 0600 in a private temporary folder and removed
after the run, so the password is in no argv. Earlier versions (2.1.3 to 4.1) have no such file:
then `user=<u> password=<p>` go into the `-mode` group (`-mode native cql3 ... user=u
password=p`), and the password is visible in the process list of this machine while the tool
runs. Either way the manifest's `command`, the phase events, StressResult.argv and ToolError show
`password=<redacted>` (or `-credentials-file <redacted>`), the tool runs in a private temporary
folder (hdrfile=, file= and graph files are copied into raw/ through the redaction filter
afterwards, the HDR log by the keyed rule only), and every printed line is filtered before it
reaches raw/cassandra-stress.txt, the progress bar or the parser: cassandra-stress before 5.0
prints `Password: <clear text>` in its settings dump, and its graph file echoes the command.
The manifest says how (`tool_auth`: "credentials-file" | "mode-options"; `tool_auth_from_env`:
the variables' names, or `tool_auth_from_file`: an embedded cluster's role file). Without
credentials nothing of this happens: argv, cwd and output are as they always were.

A TLS cluster (streaming.tool_tls: the handle's TlsOptions, a user's cluster's CASSPERF_SSL_CA
and friends or an embedded cluster's own CA): cassandra-stress takes Java stores, not PEM
files, so the runner makes them in the private folder (`StressTransport`: the CA certificates
as a PKCS#12 trust store, a client certificate and key as a key store, both under a fresh random
password) and adds `-transport truststore=<file> [keystore=<file>] ssl-ciphers=<TLS 1.3 and
ECDHE-GCM suites>` (cassandra-stress's default suites are RSA key exchange only, which an EC
node key cannot serve). The stores' password goes into the -credentials-file
(`transport.truststore.password`, 5.0) or, before 5.0, into `-transport` as
`truststore-password=` (redacted wherever the command is shown). Shown commands name the private
folder `<private>`.
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from cassperf import certs
from cassperf.cluster.tls import JAVA_CIPHER_SUITES, TlsOptions, java_keystore, java_truststore, store_password
from cassperf.errors import ConfigError, ParseError
from cassperf.parsers import parse
from cassperf.parsers.base import ParseResult
from cassperf.results.manifest import REDACTED
from cassperf.workload.runners.streaming import (
    Progress, ProcessOutcome, Redactor, ToolCredentials, ToolNotFoundError, copy_tool_files, executable_from_env,
    is_executable_file, private_workdir, raise_if_failed, store_tool_output, stream_process, tool_credentials, tool_tls,
    which, write_private,
)
from cassperf.workload.runners.stress_cmdline import display_command, to_stress_args
from cassperf.workload.runners.stress_profile import PROFILE_NAME, needs_profile, profile_yaml, to_user_args
from cassperf.workload.spec import WorkloadSpec

TOOL = "cassandra-stress"
RAW_NAME = "cassandra-stress.txt"
ENV_VAR = "CASSANDRA_STRESS"

CREDENTIALS_NAME = "credentials.properties"

# total,                                                   164,     160,     160,     160,    19.1,     1.6,    93.1,    96.9,   193.5,   193.5,    2.0,  0.67580,      0,      0,       0,       0,       0,       0
_TOTAL_ROW_RE = re.compile(r"^total,\s*(\d+),")
# apache-cassandra-5.0.6.jar (the tarball's lib/; not apache-cassandra-clientutil-5.0.6.jar)
_INSTALL_JAR_RE = re.compile(r"^apache-cassandra-(\d+)\.(\d+)\.(\d+)\.jar$")


def locate_cassandra_stress(environ: Mapping[str, str] | None = None) -> Path:
    """The cassandra-stress to run: $CASSANDRA_STRESS, else $CASSANDRA_HOME/tools/bin, else PATH.
    ToolNotFoundError names every place looked at and what was found there."""
    env = os.environ if environ is None else environ
    explicit = executable_from_env(env, ENV_VAR, "point it at the cassandra-stress script of a Cassandra install "
                                   "(<install>/tools/bin/cassandra-stress), or unset it to search "
                                   "$CASSANDRA_HOME/tools/bin and PATH")
    if explicit is not None:
        return explicit
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
    """The full argv: the executable, to_stress_args(spec) (or, given a `profile` path, the
    user-mode arguments to_user_args(spec, profile)), and the cluster's contact points
    (`-node a,b`) and CQL port (`-port native=N`, only when not 9042) where the spec names no
    nodes."""
    if cluster is not None and not spec.nodes:
        spec = dataclasses.replace(spec, nodes=tuple(cluster.contact_points))
    args = (to_user_args(spec, profile) if profile is not None
            else to_stress_args(spec, schema_precreated=schema_precreated))
    argv = [str(executable), *args]
    if cluster is not None and int(cluster.port) != 9042:
        argv += ["-port", f"native={int(cluster.port)}"]
    return argv


def stress_install_version(executable: str | Path) -> tuple[int, int, int] | None:
    """The Cassandra version of the tarball install `executable` belongs to
    (<install>/tools/bin/cassandra-stress beside <install>/lib/apache-cassandra-X.Y.Z.jar), or
    None when it is not laid out so (a package install, a stand-in, a source build)."""
    exe = Path(executable).resolve()
    if exe.parent.name != "bin" or exe.parent.parent.name != "tools":
        return None
    lib = exe.parent.parent.parent / "lib"
    found: set[tuple[int, int, int]] = set()
    for jar in lib.iterdir() if lib.is_dir() else ():
        m = _INSTALL_JAR_RE.match(jar.name)
        if m:
            found.add((int(m.group(1)), int(m.group(2)), int(m.group(3))))
    return found.pop() if len(found) == 1 else None


def properties_value(text: str) -> str:
    """`text` as a java.util.Properties value (Properties.load reads ISO-8859-1: everything
    outside printable ASCII becomes \\uXXXX, UTF-16 units as Java strings hold them)."""
    out = []
    for i, ch in enumerate(text):
        if ch == "\\":
            out.append("\\\\")
        elif ch in "=:#!" or (ch == " " and i == 0):
            out.append("\\" + ch)
        elif " " <= ch <= "~":
            out.append(ch)
        else:
            data = ch.encode("utf-16-be")
            out.extend(f"\\u{int.from_bytes(data[k:k + 2], 'big'):04x}" for k in range(0, len(data), 2))
    return "".join(out)


def credentials_properties(creds: ToolCredentials | None, transport: StressTransport | None = None) -> str:
    """The -credentials-file content cassandra-stress 5.0 reads (SettingsCredentials): the CQL
    login and the TLS stores' password."""
    lines = []
    if creds is not None:
        lines += [f"cql.username={properties_value(creds.username)}", f"cql.password={properties_value(creds.password)}"]
    if transport is not None:
        lines.append(f"transport.truststore.password={properties_value(transport.password)}")
        if transport.keystore is not None:
            lines.append(f"transport.keystore.password={properties_value(transport.password)}")
    return "".join(line + "\n" for line in lines)


@dataclass(frozen=True)
class StressTransport:
    """cassandra-stress's TLS: Java stores made from a TlsOptions' PEM files (module doc)."""

    truststore: Path
    keystore: Path | None
    password: str = dataclasses.field(repr=False)

    def args(self, with_passwords: bool) -> list[str]:
        """The -transport group; the stores' password in it only `with_passwords` (before 5.0)."""
        out = ["-transport", f"truststore={self.truststore}"]
        if with_passwords:
            out.append(f"truststore-password={self.password}")
        if self.keystore is not None:
            out.append(f"keystore={self.keystore}")
            if with_passwords:
                out.append(f"keystore-password={self.password}")
        return [*out, "ssl-ciphers=" + ",".join(JAVA_CIPHER_SUITES)]


def stress_transport(tls: TlsOptions, folder: Path) -> StressTransport:
    """Write the Java stores for `tls` into `folder` (private, 0600 files) under a fresh password.
    ConfigError when there is no CA file (cassandra-stress verifies against a trust store it is given)."""
    ca = tls.read("ca_file")
    if ca is None:
        raise ConfigError("cassandra-stress over TLS needs the CA certificate that signed the nodes' certificates: "
                          "set CASSPERF_SSL_CA to its PEM file")
    password = store_password()
    truststore = folder / "truststore.p12"
    certs.write_private(truststore, java_truststore(ca, password))
    keystore = None
    cert, key = tls.read("cert_file"), tls.read("key_file")
    if cert is not None:
        if key is None:
            raise ConfigError("CASSPERF_SSL_CERT is set but CASSPERF_SSL_KEY is not; cassandra-stress needs the "
                              "client certificate's key too")
        keystore = folder / "keystore.p12"
        certs.write_private(keystore, java_keystore(cert, key, password))
    return StressTransport(truststore, keystore, password)


def with_mode_credentials(argv: list[str], creds: ToolCredentials) -> list[str]:
    """argv with `user=<u> password=<p>` at the end of its -mode group (a `-mode native cql3
    prepared` group is added when there is none, keeping prepared statements, cassandra-stress's
    default without -mode)."""
    extra = [f"user={creds.username}", f"password={creds.password}"]
    if "-mode" not in argv:
        return [*argv, "-mode", "native", "cql3", "prepared", *extra]
    end = argv.index("-mode") + 1
    while end < len(argv) and not argv[end].startswith("-"):
        end += 1
    return [*argv[:end], *extra, *argv[end:]]


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
                         env: Mapping[str, str] | None = None, user_profile: bool | None = None,
                         credentials_file: bool | None = None,
                         on_start: Callable[[int], None] | None = None) -> StressResult:
    """Run cassandra-stress for `spec` into `writer` (an open RunWriter); see the module doc.
    `user_profile`: None runs user mode only for a spec with a delete share, True always,
    False never. `credentials_file` (only with credentials): None uses -credentials-file when
    the install is 5.0 or later, True always, False never (user= password= in -mode).
    StressResult.argv is the argv as shown (password redacted). `on_start`: called with the
    tool's pid once it runs."""
    exe = Path(executable) if executable is not None else locate_cassandra_stress(env)
    creds = tool_credentials(cluster)
    tls = tool_tls(cluster)
    use_profile = needs_profile(spec) if user_profile is None else user_profile
    argv = stress_argv(spec, exe, cluster, schema_precreated=schema_precreated,
                       profile=PROFILE_NAME if use_profile else None)
    raw_dir = writer.path / "raw"
    with private_workdir(enabled=creds is not None or tls is not None) as private:
        redactor = None
        cwd = raw_dir
        if private is not None:
            transport = stress_transport(tls, private) if tls is not None else None
            redactor = Redactor([creds.password if creds else "", transport.password if transport else ""])
            cwd = private / "cwd"
            if credentials_file is None:
                credentials_file = (stress_install_version(exe) or (0, 0, 0)) >= (5, 0, 0)
            if credentials_file:
                secret_file = write_private(private / CREDENTIALS_NAME, credentials_properties(creds, transport))
                argv = [*argv, "-credentials-file", str(secret_file)]
            elif creds is not None:
                argv = with_mode_credentials(argv, creds)
            if transport is not None:
                argv += transport.args(with_passwords=not credentials_file)
                writer.manifest.update(tool_tls="transport")
            if creds is not None:
                writer.manifest.update(tool_auth="credentials-file" if credentials_file else "mode-options",
                                       **creds.origin())
        if use_profile:
            profile_text = profile_yaml(spec)
            writer.add_raw(PROFILE_NAME, profile_text)
            writer.manifest["stress_profile"] = f"raw/{PROFILE_NAME}"
            if cwd != raw_dir:
                (cwd / PROFILE_NAME).write_text(profile_text, encoding="utf-8")
        shown_argv = redactor.argv(argv) if redactor else list(argv)
        if "-credentials-file" in shown_argv:       # a private temporary path, gone after the run
            shown_argv[shown_argv.index("-credentials-file") + 1] = REDACTED
        if private is not None:
            shown_argv = [a.replace(str(private), "<private>") for a in shown_argv]
        shown = display_command(["cassandra-stress", *shown_argv[1:]])
        writer.manifest.update(tool=TOOL, command=shown, executable=str(exe))
        writer.manifest.setdefault("parameters", {})["workload"] = dataclasses.asdict(spec)
        raw = writer.raw_stream(RAW_NAME)
        raw_path = raw_dir / RAW_NAME
        counted = spec.n is not None
        bar = Progress(lambda line: _bar_units(line, counted), total=float(spec.n or spec.duration or 0) or None,
                       unit="op" if counted else "s", desc=f"cassandra-stress {spec.op}", enabled=progress)
        try:
            with writer.phase(TOOL, shown):
                outcome = stream_process(argv, raw, bar.line, env=env, cwd=cwd, timeout_s=timeout_s,
                                         redactor=redactor, on_start=on_start)
        finally:
            bar.close()
            if redactor is not None:
                hdr = {Path(spec.hdr_file).as_posix()} if spec.hdr_file is not None else set()
                copy_tool_files(cwd, writer, redactor, keyed_only=hdr, skip={PROFILE_NAME})
    parsed = store_tool_output(writer, raw_path, outcome, bar.anchor, tool=TOOL, table_prefix="cassandra_stress_",
                               redactor=redactor)
    if spec.hdr_file is not None:
        _store_hdr(writer, writer.path / "raw" / spec.hdr_file)
    raise_if_failed(shown_argv, outcome, raw_path, timeout_s)
    return StressResult(shown_argv, outcome, raw_path, parsed)


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
    started = pd.Timestamp(writer.manifest["started_utc"]).timestamp()
    for run in result.runs:
        hist = run.histograms
        if hist.empty:
            continue
        if "start_epoch_s" in hist.columns and hist["start_epoch_s"].notna().all():
            # the log's own epoch times put each interval on the run's clock (seconds since started_utc)
            length = hist["end_s"] - hist["start_s"]
            hist = hist.assign(start_s=hist["start_epoch_s"] - started, end_s=hist["start_epoch_s"] - started + length)
        writer.append_histograms(hist)
    writer.manifest.setdefault("histogram_unit", "ns")

