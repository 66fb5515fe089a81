"""Stress tools against a secured cluster: the credentials come from the environment
(CASSPERF_USERNAME / CASSPERF_PASSWORD, or the variables a cluster handle names), reach
cassandra-stress (-mode user= password=, or a 5.0 -credentials-file) and latte (CASSANDRA_USER /
CASSANDRA_PASSWORD in its environment), and the password is written nowhere in the run: not in
raw/ (lines the tool prints, files it writes itself), not in the manifest, events, warnings, the
parsed tables, the returned result or a ToolError. Without credentials, argv and working
directory are exactly as before. The redaction rule (streaming.Redactor) never alters a figure:
short and number-like passwords are redacted only after a password key, and the real captures
come out of the filter with the same parsed numbers.

Stand-ins play the tools (neither cassandra-stress nor a secured cluster is here): each records
its argv, working directory and credentials to a file outside the run folder and prints a real
capture with the password put where the tools print it, plus once where no key announces it."""

from __future__ import annotations

import json
import os
import re
import sys
import types
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import public_fixture
from cassperf.cluster import RemoteCluster
from cassperf.errors import ConfigError, ToolError
from cassperf.parsers import parse, parse_text
from cassperf.parsers.hdr_log import write_hdr_log
from cassperf.results import hdr
from cassperf.results.manifest import REDACTED
from cassperf.results.store import RunWriter, load_run
from cassperf.workload import WorkloadSpec
from cassperf.workload.runners import latte_commands, run_cassandra_stress, run_latte
from cassperf.workload.runners.stress_cmdline import to_stress_args, to_stress_command
from cassperf.workload.runners.streaming import Redactor, ToolCredentials, stream_process, tool_credentials
from cassperf.workload.runners.stress_runner import (
    credentials_properties, properties_value, stress_install_version, with_mode_credentials,
)

CS_FIXTURE = "cassandra-stress/cs_4.1.11_write_n25000_threads3_full_crystalloide.txt"
LATTE_FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "latte-0.29" / "write-unthrottled.txt"
USER = "bench"
SECRET = "Zq8!pa55 w\u00f6rd"          # a space, a '!' and a non-ASCII letter
FUZZ_EXAMPLES = int(os.environ.get("CASSPERF_FUZZ_EXAMPLES", "150"))

FAKE_STRESS = r'''
import json, os, pathlib, sys
args = sys.argv[1:]
record = {"argv": args, "cwd": os.getcwd(), "credentials": None, "credentials_mode": None}
if "-credentials-file" in args:
    path = pathlib.Path(args[args.index("-credentials-file") + 1])
    record["credentials"] = path.read_text()
    record["credentials_mode"] = oct(path.stat().st_mode & 0o777)
pathlib.Path(os.environ["FAKE_RECORD"]).write_text(json.dumps(record))
secret, user = os.environ["FAKE_SECRET"], os.environ["FAKE_USER"]
text = pathlib.Path(os.environ["FAKE_OUTPUT"]).read_text()
# the settings dump with the password in clear text, and once where no key announces it
text = text.replace("  Username: null", "  Username: " + user).replace("  Password: null", "  Password: " + secret)
text = text.replace("Connected to cluster:", "Warning: a tool echo of " + secret + "\nConnected to cluster:", 1)
sys.stdout.write(text)
sys.stdout.flush()
command = " ".join(args)
for arg in args:
    if arg.startswith("file="):          # -log file= gets the same settings dump
        pathlib.Path(arg[5:]).write_text(text)
    if arg.startswith("hdrfile="):
        pathlib.Path(arg[8:]).write_text(os.environ.get("FAKE_HDR", ""))
if "-graph" in args:                    # the graph file echoes the command (password last: not scrubbed)
    pathlib.Path(args[args.index("-graph") + 1][5:]).write_text('{"command": "' + command + '"}\n')
pathlib.Path("hs_err_pid4242.log").write_text("Command Line: org.apache.cassandra.stress.Stress " + command + "\n")
sys.exit(int(os.environ.get("FAKE_EXIT", "0")))
'''

FAKE_LATTE = r'''
import json, os, pathlib, sys
args = sys.argv[1:]
if args == ["--version"]:
    print("latte 0.29.0")
    sys.exit(0)
with open(os.environ["FAKE_RECORD"], "a") as f:
    f.write(json.dumps({"argv": args, "cwd": os.getcwd(), "user": os.environ.get("CASSANDRA_USER"),
                        "password": os.environ.get("CASSANDRA_PASSWORD")}) + "\n")
password = os.environ.get("CASSANDRA_PASSWORD", "")
if "--log-dir" in args:
    log = pathlib.Path(args[args.index("--log-dir") + 1]) / "latte-20261121.log"
    with open(log, "a") as f:
        f.write("INFO connection conf: user=" + os.environ.get("CASSANDRA_USER", "") + " password=" + password + "\n")
if "schema" in args:
    print("info: Connecting to [\"127.0.0.1\"]... ")
    sys.exit(0)
if "-o" in args:                        # latte 0.29 serialises the whole RunCommand, password included
    report = {"conf": {"connection": {"user": os.environ.get("CASSANDRA_USER", ""), "password": password,
                                      "count": 1}, "rate": None}, "result": {"cycle_count": 16219}}
    pathlib.Path(args[args.index("-o") + 1]).write_text(json.dumps(report, indent=2, ensure_ascii=False))
sys.stdout.write(pathlib.Path(os.environ["FAKE_OUTPUT"]).read_text())
if password:
    print("error: a tool echo of " + password)
sys.exit(int(os.environ.get("FAKE_EXIT", "0")))
'''


def stand_in(path: Path, body: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!{sys.executable}\n{body}")
    path.chmod(0o755)
    return path


@pytest.fixture
def no_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("CASSPERF_USERNAME", "CASSPERF_PASSWORD", "CASSANDRA_USER", "CASSANDRA_PASSWORD"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def credentials(monkeypatch: pytest.MonkeyPatch, no_credentials: None) -> None:
    monkeypatch.setenv("CASSPERF_USERNAME", USER)
    monkeypatch.setenv("CASSPERF_PASSWORD", SECRET)


@pytest.fixture
def fake_stress(tmp_path: Path, fixtures: Path) -> types.SimpleNamespace:
    exe = stand_in(tmp_path / "tools" / "cassandra-stress", FAKE_STRESS)
    record = tmp_path / "record.json"
    env = {**os.environ, "FAKE_RECORD": str(record), "FAKE_OUTPUT": str(fixtures / CS_FIXTURE),
           "FAKE_SECRET": os.environ.get("CASSPERF_PASSWORD", "null"), "FAKE_USER": USER}
    return types.SimpleNamespace(exe=exe, env=env, record=record, fixture=fixtures / CS_FIXTURE)


def run_stress(spec: WorkloadSpec, tmp_path: Path, fake: types.SimpleNamespace, **kw: object):
    """Run the stand-in; (result or ToolError, run folder, what the stand-in recorded)."""
    kw.setdefault("env", fake.env)
    with RunWriter(tool="cassandra-stress", root=tmp_path / "runs") as run:
        try:
            out: object = run_cassandra_stress(spec, run, executable=fake.exe, progress=False, **kw)
        except ToolError as exc:
            out = exc
    return out, run.path, json.loads(fake.record.read_text())


def leaks(folder: Path, secret: str) -> list[str]:
    """Files under `folder` holding the secret's bytes (as text, or JSON-escaped)."""
    needles = {secret.encode("utf-8"), json.dumps(secret)[1:-1].encode("utf-8")}
    return [str(p.relative_to(folder)) for p in folder.rglob("*")
            if p.is_file() and any(n in p.read_bytes() for n in needles)]


def frames_text(run) -> str:
    """Every value of every frame and table of a loaded Run, and its manifest, as one text."""
    frames = [run.intervals, run.summary, run.metrics, run.events, run.histograms, *run.tables.values()]
    return json.dumps(run.manifest, default=str) + "".join(f.to_csv() for f in frames) + "\n".join(run.warnings)


SPEC = WorkloadSpec(op="write", n=25_000, concurrency=3, warmup=False, cl="ONE", log_file="cs.log",
                    graph_file="graph.html", connections_per_host=8)


# ---- cassandra-stress -------------------------------------------------------------------------------

def test_cassandra_stress_logs_in_with_mode_options_and_the_password_reaches_no_file(credentials, tmp_path,
                                                                                     fake_stress):
    fake_stress.env["FAKE_SECRET"] = SECRET
    result, folder, seen = run_stress(SPEC, tmp_path, fake_stress)
    creds = ToolCredentials(USER, SECRET)
    # (a) the tool got them, at the end of its -mode group (before -graph), nothing else changed
    assert seen["argv"] == with_mode_credentials(to_stress_args(SPEC), creds)
    mode = seen["argv"].index("-mode")
    assert seen["argv"][mode:mode + 7] == ["-mode", "native", "cql3", "connectionsPerHost=8",
                                          f"user={USER}", f"password={SECRET}", "-graph"]
    # it ran in a private folder outside the run, gone afterwards
    assert not Path(seen["cwd"]).is_relative_to(folder) and not Path(seen["cwd"]).exists()
    # (b) the password is in no file of the run, not in the loaded run, not in the result
    assert leaks(folder, SECRET) == []
    loaded = load_run(folder)
    assert SECRET not in frames_text(loaded)
    assert SECRET not in repr(result.argv) and SECRET not in repr(result.process.argv)
    assert SECRET not in repr([r.manifest for r in result.parsed.runs]) and SECRET not in repr(result.parsed.tables)
    assert loaded.manifest["command"] == ("cassandra-stress " + to_stress_command(SPEC).replace(
        "connectionsPerHost=8", f"connectionsPerHost=8 user={USER} password={REDACTED}"))
    assert loaded.manifest["tool_auth"] == "mode-options"
    assert loaded.manifest["tool_auth_from_env"] == ["CASSPERF_USERNAME", "CASSPERF_PASSWORD"]
    assert list(loaded.events["detail"]) == [loaded.manifest["command"]] * 2
    raw = (folder / "raw" / "cassandra-stress.txt").read_text()
    assert f"  Username: {USER}\n  Password: {REDACTED}\n" in raw
    assert f"Warning: a tool echo of {REDACTED}\n" in raw
    # the files it wrote itself came through the filter into raw/
    assert f"password={REDACTED}" in (folder / "raw" / "graph.html").read_text()
    assert f"password={REDACTED}" in (folder / "raw" / "hs_err_pid4242.log").read_text()
    assert f"  Password: {REDACTED}\n" in (folder / "raw" / "cs.log").read_text()
    # the settings the parser kept say <redacted>; the figures are the capture's own
    assert result.parsed.runs[0].manifest["settings"]["Mode"]["Password"] == REDACTED
    pd.testing.assert_frame_equal(result.parsed.runs[0].summary,
                                  parse(fake_stress.fixture, format="cassandra-stress").runs[0].summary)
    total = loaded.summary[loaded.summary["op"] == "total"].iloc[0]
    assert total["count"] == 25000 and total["rate_ops_s"] == 483 and total["latency_p99_ms"] == 92.8
    # the free rule fired (the echo line, the graph and crash files) and the run says so
    assert any("occurred" in w and "outside a password setting" in w for w in loaded.warnings)


def test_without_credentials_cassandra_stress_runs_exactly_as_before(no_credentials, tmp_path, fake_stress):
    result, folder, seen = run_stress(SPEC, tmp_path, fake_stress)
    assert seen["argv"] == to_stress_args(SPEC) and seen["cwd"] == str(folder / "raw")
    loaded = load_run(folder)
    assert loaded.manifest["command"] == "cassandra-stress " + to_stress_command(SPEC)
    assert "tool_auth" not in loaded.manifest and result.argv[1:] == to_stress_args(SPEC)
    assert "  Password: null\n" in (folder / "raw" / "cassandra-stress.txt").read_text()
    assert not any("outside a password setting" in w for w in loaded.warnings)


def test_a_cassandra_5_install_reads_the_password_from_a_private_credentials_file(monkeypatch, no_credentials,
                                                                                 tmp_path, fixtures):
    secret = "pa=ss:w\u00f6rd\\x #1"
    monkeypatch.setenv("CASSPERF_USERNAME", USER)
    monkeypatch.setenv("CASSPERF_PASSWORD", secret)
    home = tmp_path / "apache-cassandra-5.0.6"
    (home / "lib").mkdir(parents=True)
    (home / "lib" / "apache-cassandra-5.0.6.jar").write_bytes(b"")
    (home / "lib" / "apache-cassandra-clientutil-5.0.6.jar").write_bytes(b"")
    exe = stand_in(home / "tools" / "bin" / "cassandra-stress", FAKE_STRESS)
    assert stress_install_version(exe) == (5, 0, 6)
    fake = types.SimpleNamespace(exe=exe, record=tmp_path / "record.json", fixture=fixtures / CS_FIXTURE,
                                 env={**os.environ, "FAKE_RECORD": str(tmp_path / "record.json"),
                                      "FAKE_OUTPUT": str(fixtures / CS_FIXTURE), "FAKE_SECRET": "*suppressed*",
                                      "FAKE_USER": USER})
    spec = WorkloadSpec(op="write", n=25_000, concurrency=3)
    result, folder, seen = run_stress(spec, tmp_path, fake)
    file_arg = seen["argv"].index("-credentials-file")
    assert seen["argv"][:file_arg] == to_stress_args(spec) and len(seen["argv"]) == file_arg + 2
    assert not any(secret in a for a in seen["argv"])
    # java.util.Properties syntax: \= \: escaped, \\ doubled, non-ASCII as \uXXXX (load reads ISO-8859-1)
    assert seen["credentials"] == "cql.username=bench\ncql.password=pa\\=ss\\:w\\u00f6rd\\\\x \\#1\n"
    assert seen["credentials_mode"] == "0o600" and not Path(seen["argv"][file_arg + 1]).exists()
    loaded = load_run(folder)
    assert loaded.manifest["command"].endswith(f"-credentials-file {REDACTED}")
    assert loaded.manifest["tool_auth"] == "credentials-file"
    assert leaks(folder, secret) == [] and secret not in frames_text(loaded)

    # asked to, the same install gets the -mode options instead
    fake.record.unlink()
    _, _, seen = run_stress(spec, tmp_path, fake, credentials_file=False)
    assert seen["argv"] == with_mode_credentials(to_stress_args(spec), ToolCredentials(USER, secret))


def test_properties_values_escape_what_java_would_misread():
    assert properties_value(" lead") == "\\ lead" and properties_value("a b") == "a b"
    assert properties_value("\U0001f600") == "\\ud83d\\ude00"          # a UTF-16 surrogate pair
    assert properties_value("tab\there") == "tab\\u0009here"
    assert credentials_properties(ToolCredentials("u", "p")) == "cql.username=u\ncql.password=p\n"


def test_stress_install_version_needs_the_tarball_layout(tmp_path):
    assert stress_install_version(tmp_path / "cassandra-stress") is None
    home = tmp_path / "cassandra"
    (home / "lib").mkdir(parents=True)
    exe = home / "tools" / "bin" / "cassandra-stress"
    assert stress_install_version(exe) is None
    (home / "lib" / "apache-cassandra-4.1.11.jar").write_bytes(b"")
    assert stress_install_version(exe) == (4, 1, 11)
    (home / "lib" / "apache-cassandra-5.0.6.jar").write_bytes(b"")
    assert stress_install_version(exe) is None                      # two versions: cannot tell


def test_with_mode_credentials_adds_a_prepared_mode_group_when_there_is_none():
    creds = ToolCredentials("u", "p")
    assert with_mode_credentials(["cs", "write", "n=1"], creds) == [
        "cs", "write", "n=1", "-mode", "native", "cql3", "prepared", "user=u", "password=p"]
    assert with_mode_credentials(["cs", "-mode", "native", "cql3"], creds)[-2:] == ["user=u", "password=p"]


def test_credentials_come_from_the_variables_the_cluster_handle_names(monkeypatch, no_credentials, tmp_path,
                                                                      fake_stress):
    monkeypatch.setenv("MY_CQL_USER", "ops")
    monkeypatch.setenv("MY_CQL_PASSWORD", SECRET)
    cluster = RemoteCluster("127.0.0.1", username_env="MY_CQL_USER", password_env="MY_CQL_PASSWORD")
    fake_stress.env["FAKE_SECRET"] = SECRET
    spec = WorkloadSpec(op="write", n=25_000, concurrency=3)
    _, folder, seen = run_stress(spec, tmp_path, fake_stress, cluster=cluster)
    assert "user=ops" in seen["argv"] and f"password={SECRET}" in seen["argv"]
    assert load_run(folder).manifest["tool_auth_from_env"] == ["MY_CQL_USER", "MY_CQL_PASSWORD"]
    assert leaks(folder, SECRET) == []
    # a handle that names no variables and no role file logs in with none
    monkeypatch.setenv("CASSPERF_USERNAME", USER)
    monkeypatch.setenv("CASSPERF_PASSWORD", SECRET)
    local = types.SimpleNamespace(contact_points=["127.0.0.1"], port=9042)
    assert tool_credentials(local) is None and tool_credentials(None) == ToolCredentials(USER, SECRET)


@pytest.mark.parametrize("password, problem", [
    (None, "CASSPERF_USERNAME is set but CASSPERF_PASSWORD is not; export both"),
    ("", "CASSPERF_USERNAME is set but CASSPERF_PASSWORD is empty; export the password too"),
    ("two\nlines", "CASSPERF_PASSWORD holds a line break"),
])
def test_a_half_set_or_unfilterable_password_is_refused_before_the_tool_runs(monkeypatch, no_credentials, tmp_path,
                                                                             fake_stress, password, problem):
    monkeypatch.setenv("CASSPERF_USERNAME", USER)
    if password is not None:
        monkeypatch.setenv("CASSPERF_PASSWORD", password)
    with RunWriter(tool="cassandra-stress", root=tmp_path / "runs") as run:
        with pytest.raises(ConfigError, match=re.escape(problem)):
            run_cassandra_stress(SPEC, run, executable=fake_stress.exe, env=fake_stress.env, progress=False)
        assert list((run.path / "raw").iterdir()) == [] and not fake_stress.record.exists()


def test_a_failed_run_reports_the_redacted_command(credentials, tmp_path, fake_stress):
    fake_stress.env.update(FAKE_SECRET=SECRET, FAKE_EXIT="2")
    err, folder, _ = run_stress(SPEC, tmp_path, fake_stress)
    assert isinstance(err, ToolError) and err.returncode == 2
    assert f"password={REDACTED}" in err.cmd and SECRET not in str(err) and SECRET not in err.stdout
    assert leaks(folder, SECRET) == []


def test_the_hdr_log_is_copied_by_the_keyed_rule_only(monkeypatch, no_credentials, tmp_path, fake_stress):
    """A password that happens to be a run of the HDR log's base64 payload: the tool never writes
    the password there, so the log is kept byte for byte (the free rule would corrupt it)."""
    layout = hdr.Layout(1, 3_600_000_000_000, 3)                  # cassandra-stress's histograms, ns
    rows = [("WRITE-st", float(i), float(i + 1), hdr.histogram_from_samples([800_000 + 1000 * i, 2_500_000], layout))
            for i in range(3)]
    hdr_text = write_hdr_log(rows, start_epoch_s=1_700_000_000.0)
    payload = hdr_text.splitlines()[-1].rsplit(",", 1)[1]
    secret = next(payload[i:i + 8] for i in range(len(payload) - 8) if re.fullmatch(r"[A-Za-z]{8}", payload[i:i + 8]))
    monkeypatch.setenv("CASSPERF_USERNAME", USER)
    monkeypatch.setenv("CASSPERF_PASSWORD", secret)
    fake_stress.env.update(FAKE_SECRET=secret, FAKE_HDR=hdr_text)
    spec = WorkloadSpec(op="write", n=25_000, concurrency=3, hdr_file="run.hdr")
    _, folder, seen = run_stress(spec, tmp_path, fake_stress)
    assert "hdrfile=run.hdr" in seen["argv"]
    assert (folder / "raw" / "run.hdr").read_text() == hdr_text
    loaded = load_run(folder)
    assert len(loaded.histograms) == 3 and loaded.manifest["histogram_unit"] == "ns"
    # the payload (raw/run.hdr and the stored encoded histograms) is the only place those characters are
    assert set(leaks(folder, secret)) <= {"raw/run.hdr", "histograms.jsonl", "histograms.parquet"}
    assert "raw/run.hdr" in leaks(folder, secret)
    assert f"  Password: {REDACTED}\n" in (folder / "raw" / "cassandra-stress.txt").read_text()


# ---- short and number-like passwords: redacted after a key only, figures untouched ------------------------

@pytest.mark.parametrize("secret", ["1", "0", "25", "2024", "25000", "25,000", "160", "1.6", "0.67580"])
def test_a_number_like_password_is_redacted_where_keyed_and_the_figures_parse_unchanged(
        monkeypatch, no_credentials, tmp_path, fake_stress, secret):
    monkeypatch.setenv("CASSPERF_USERNAME", USER)
    monkeypatch.setenv("CASSPERF_PASSWORD", secret)
    fake_stress.env["FAKE_SECRET"] = secret
    spec = WorkloadSpec(op="write", n=25_000, concurrency=3)
    result, folder, seen = run_stress(spec, tmp_path, fake_stress)
    assert f"password={secret}" in seen["argv"]
    loaded = load_run(folder)
    assert f"password={REDACTED}" in loaded.manifest["command"]
    raw = (folder / "raw" / "cassandra-stress.txt").read_text()
    assert f"  Password: {REDACTED}\n" in raw
    assert f"Warning: a tool echo of {secret}\n" in raw            # unkeyed: kept, it could be a figure
    expected = parse(fake_stress.fixture, format="cassandra-stress").runs[0]
    got = result.parsed.runs[0]
    pd.testing.assert_frame_equal(got.intervals, expected.intervals)
    pd.testing.assert_frame_equal(got.summary, expected.summary)
    # every line of the capture but the password line is byte for byte what the tool printed
    printed = fake_stress.fixture.read_text().replace("  Username: null", f"  Username: {USER}")
    kept = [ln for ln in raw.splitlines() if not ln.startswith(("  Password:", "Warning: a tool echo"))]
    assert kept == [ln for ln in printed.splitlines() if not ln.startswith("  Password:")]
    assert not any("outside a password setting" in w for w in loaded.warnings)


def _lines() -> list[str]:
    return [*public_fixture(CS_FIXTURE).read_text().splitlines(), *LATTE_FIXTURE.read_text().splitlines()]


_NUMBER = re.compile(r"[0-9][0-9.,]*")
_KEYED = re.compile(r"pass(word|wd)", re.IGNORECASE)


def _is_subsequence(small: list[str], big: list[str]) -> bool:
    it = iter(big)
    return all(any(x == y for y in it) for x in small)


def test_short_and_number_like_passwords_leave_every_unkeyed_line_of_real_captures_alone():
    lines = [ln for ln in _lines() if not _KEYED.search(ln)]
    for secret in ["1", "0", "00", "9.", ",", "e", "ms", "op", "25000", "2024", "1.6", "10,0", "0 0", "-1", "+1"]:
        redactor = Redactor([secret])
        assert [redactor.line(ln) for ln in lines] == lines, secret
        assert redactor.free_hits == 0


@settings(max_examples=FUZZ_EXAMPLES, deadline=None)
@given(data=st.data(), secret=st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\r\n"),
                                      min_size=1, max_size=10))
def test_redaction_never_alters_a_figure_and_leaves_no_long_password(fixtures_lines, data, secret):
    """Any password, any line of a real capture with the password put anywhere in it (or after
    'Password: '): the figures of the redacted line are figures of the original, in order (some may
    be gone, none changed or cut), and a password the free rule covers is gone from the line."""
    line = data.draw(st.sampled_from(fixtures_lines))
    at = data.draw(st.integers(0, len(line)))
    keyed = data.draw(st.booleans())
    text = line[:at] + ("Password: " if keyed else "") + secret + line[at:]
    out = Redactor([secret]).line(text)
    assert _is_subsequence(_NUMBER.findall(out), _NUMBER.findall(text))
    if len(secret) >= 4 and not re.fullmatch(r"[0-9.,:;+\-/%\s]*", secret):
        # not left in the text around the markers (a password such as '<red' is part of the marker itself)
        assert all(secret not in piece for piece in out.split(REDACTED)), out
    if keyed:
        if secret[0].isspace():     # where such a password begins cannot be told from the key's spacing
            assert re.search(r"Password:\s*" + re.escape(REDACTED), out), out
        else:
            assert "Password: " + REDACTED in out


def test_a_password_that_begins_with_a_space_is_redacted_after_the_keys_spacing():
    """Found by the fuzz test above (CI at 97f9d61): the password ' ' after 'Password: ', before a
    line's own leading spaces. The key's spacing takes what it can and the marker stands where the
    password's space was; the figure is whole."""
    line = "Password: " + " " + "   Elapsed time       [s]     10.042"
    assert Redactor([" "]).line(line) == "Password:    <redacted>Elapsed time       [s]     10.042"


@pytest.fixture(scope="module")
def fixtures_lines() -> list[str]:
    return _lines()


def test_the_keyed_rule_covers_the_ways_tools_print_a_password():
    r = Redactor(["s3"])
    assert r.line("  Password: s3") == f"  Password: {REDACTED}"
    assert r.line("-mode native cql3 user=u password=s3 -node x") == (
        f"-mode native cql3 user=u password={REDACTED} -node x")
    assert r.line('    "password": "s3",') == f'    "password": "{REDACTED}",'
    assert r.line("truststore-password=s3; keystore-PASSWD=s3") == (
        f"truststore-password={REDACTED}; keystore-PASSWD={REDACTED}")
    assert r.line("--password s3 and s3 elsewhere") == f"--password {REDACTED} and s3 elsewhere"
    assert r.free_hits == 0
    # a password ending in a digit takes the digits after it too: no figure is left cut
    assert Redactor(["1"]).line("password=12 rows=12") == f"password={REDACTED} rows=12"
    # JSON escapes (latte's report) are found too
    assert Redactor(['q"\\']).line('"password": "q\\"\\\\"') == f'"password": "{REDACTED}"'


def test_the_free_rule_takes_the_figure_a_password_touches():
    r = Redactor(["ab12"])
    assert r.line("x 1ab123 y ab12") == f"x 1{REDACTED} y {REDACTED}" and r.free_hits == 2
    assert Redactor(["12ab"]).line("x 3,112ab y") == f"x {REDACTED} y"           # '3,1' is not left behind
    assert Redactor(["abc-"]).line("a abc-5 b") == f"a {REDACTED} b"             # no sign dropped off a figure
    assert Redactor(["redacted"]).line("Password: redacted, redacted") == f"Password: {REDACTED}, {REDACTED}"
    assert Redactor(["d>ab"]).line("ad>abd>ab") == f"a{REDACTED}{REDACTED}"


# ---- latte ---------------------------------------------------------------------------------------------

@pytest.fixture
def fake_latte(tmp_path: Path) -> types.SimpleNamespace:
    exe = stand_in(tmp_path / "tools" / "latte", FAKE_LATTE)
    record = tmp_path / "latte-record.jsonl"
    env = {**os.environ, "FAKE_RECORD": str(record), "FAKE_OUTPUT": str(LATTE_FIXTURE)}
    return types.SimpleNamespace(exe=exe, env=env, record=record)


def run_fake_latte(spec: WorkloadSpec, tmp_path: Path, fake: types.SimpleNamespace, **kw: object):
    with RunWriter(tool="latte", root=tmp_path / "runs") as run:
        result = run_latte(spec, run, executable=fake.exe, env=fake.env, progress=False, **kw)
    return result, run.path, [json.loads(ln) for ln in fake.record.read_text().splitlines()]


LATTE_SPEC = WorkloadSpec(op="write", duration=10, concurrency=32, cl="ONE")


def test_latte_gets_the_credentials_in_its_environment_and_the_password_reaches_no_file(credentials, tmp_path,
                                                                                      fake_latte):
    result, folder, calls = run_fake_latte(LATTE_SPEC, tmp_path, fake_latte)
    schema, run = calls
    work = Path(run["cwd"])
    assert not work.is_relative_to(folder) and not work.exists()
    # the argv is the one without credentials, with latte's own files in the private folder
    cmd = latte_commands(LATTE_SPEC, fake_latte.exe, report_path=work / "latte-report.json", log_dir=work)
    assert [schema["argv"], run["argv"]] == [cmd.schema[1:], cmd.run[1:]]
    assert {(c["user"], c["password"]) for c in calls} == {(USER, SECRET)}
    assert not any(SECRET in a for c in calls for a in c["argv"])
    assert leaks(folder, SECRET) == []
    loaded = load_run(folder)
    assert SECRET not in frames_text(loaded) and SECRET not in repr(result)
    report = json.loads((folder / "raw" / "latte-report.json").read_text())
    assert report["conf"]["connection"] == {"user": USER, "password": REDACTED, "count": 1}
    assert f"password={REDACTED}" in (folder / "raw" / "latte-20261121.log").read_text()
    assert loaded.manifest["tool_auth"] == "environment" and loaded.manifest["tool_version"] == "0.29.0"
    expected = parse(LATTE_FIXTURE, format="latte").runs[0]
    pd.testing.assert_frame_equal(result.parsed.runs[0].intervals, expected.intervals)
    pd.testing.assert_frame_equal(result.parsed.runs[0].summary, expected.summary)


def test_without_credentials_latte_runs_exactly_as_before(no_credentials, tmp_path, fake_latte):
    result, folder, calls = run_fake_latte(LATTE_SPEC, tmp_path, fake_latte)
    raw = folder / "raw"
    cmd = latte_commands(LATTE_SPEC, fake_latte.exe, report_path=raw / "latte-report.json", log_dir=raw)
    assert [c["argv"] for c in calls] == [cmd.schema[1:], cmd.run[1:]]
    assert {(c["cwd"], c["user"], c["password"]) for c in calls} == {(str(raw), None, None)}
    assert "tool_auth" not in load_run(folder).manifest and result.command == cmd


def test_a_cassandra_password_already_in_latte_environment_is_redacted_too(no_credentials, tmp_path, fake_latte):
    fake_latte.env.update(CASSANDRA_USER="ops", CASSANDRA_PASSWORD=SECRET)
    _, folder, calls = run_fake_latte(LATTE_SPEC, tmp_path, fake_latte)
    assert {c["password"] for c in calls} == {SECRET}
    assert leaks(folder, SECRET) == [] and "tool_auth" not in load_run(folder).manifest


# ---- the line filter in stream_process ---------------------------------------------------------------------

def test_stream_process_filters_each_line_before_the_file_and_the_callback(tmp_path):
    seen: list[str] = []
    script = f"print('Password: {SECRET}'); print('total, 1, {SECRET}', flush=True)"
    with open(tmp_path / "out.txt", "w") as out:
        outcome = stream_process([sys.executable, "-c", script, f"password={SECRET}"], out, seen.append,
                                 redactor=Redactor([SECRET]))
    assert seen == [f"Password: {REDACTED}", f"total, 1, {REDACTED}"]
    assert (tmp_path / "out.txt").read_text() == f"Password: {REDACTED}\ntotal, 1, {REDACTED}\n"
    assert outcome.argv[-1] == f"password={REDACTED}"


def test_parse_text_of_a_redacted_capture_is_the_capture(fixtures):
    """The parser reads a settings dump whose password is <redacted> like any other."""
    text = (fixtures / CS_FIXTURE).read_text().replace("  Password: null", f"  Password: {REDACTED}")
    result = parse_text(text, format="cassandra-stress")
    assert result.runs[0].manifest["settings"]["Mode"]["Password"] == REDACTED
