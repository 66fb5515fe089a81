"""`cassperf parse` and `cassperf import`, with tiny formats registered by the test itself."""

from __future__ import annotations

import hashlib
import io
import os
import subprocess
import sys
import types
from pathlib import Path

import pandas as pd
import pytest
from pandas.testing import assert_frame_equal

import cassperf.cli
import cassperf.cli.logs
import cassperf.parsers
from cassperf.errors import ParseError
from cassperf.parsers.base import Format, ParseResult, check_text
from cassperf.results.catalog import catalog
from cassperf.results.model import INTERVAL_COLUMNS, Run, conform
from cassperf.results.store import load_run

TINY = "TINY 1\n1.0 write 10 1.5\n2.0 write 20 2.5\n"
TINYTAB = "TINYTAB\nnode1 3\nnode2 4\n"


def parse_tiny(text: str, source: str) -> ParseResult:
    """'TINY 1' then 'time_s op count p99_ms' lines -> a Run; a 'NEXT' line starts another Run."""
    check_text(text, source, "a tiny log")
    lines = text.splitlines()
    if lines[0] != "TINY 1":
        raise ParseError(source, 1, lines[0], "the header 'TINY 1'")
    blocks: list[list[dict]] = [[]]
    rows = blocks[0]
    for no, line in enumerate(lines[1:], start=2):
        if line == "NEXT":
            rows = []
            blocks.append(rows)
            continue
        parts = line.split()
        if len(parts) != 4:
            raise ParseError(source, no, line, "'time_s op count p99_ms'")
        rows.append({"time_s": float(parts[0]), "op": parts[1], "count": int(parts[2]),
                     "latency_p99_ms": float(parts[3])})
    return ParseResult("tiny", source, runs=[Run({"tool": "tiny"}, intervals=block) for block in blocks])


def parse_tinytab(text: str, source: str) -> ParseResult:
    """'TINYTAB' then 'node value' lines -> a table 'values'."""
    check_text(text, source, "a tinytab file")
    lines = text.splitlines()
    if lines[0] != "TINYTAB":
        raise ParseError(source, 1, lines[0], "the header 'TINYTAB'")
    rows = [line.split() for line in lines[1:]]
    frame = pd.DataFrame({"node": [r[0] for r in rows], "value": [int(r[1]) for r in rows]})
    return ParseResult("tinytab", source, tables={"values": frame})


@pytest.fixture(autouse=True)
def tiny_formats(monkeypatch: pytest.MonkeyPatch) -> None:
    module = types.ModuleType("cassperf.parsers._test_tiny")
    module.FORMATS = [Format("tiny", "test format", lambda t: t.startswith("TINY 1\n"), parse_tiny),  # type: ignore[attr-defined]
                      Format("tinytab", "test tables", lambda t: t.startswith("TINYTAB\n"), parse_tinytab)]
    monkeypatch.setitem(sys.modules, "cassperf.parsers._test_tiny", module)
    monkeypatch.setattr(cassperf.parsers, "_FORMAT_MODULES", ["_test_tiny"])
    monkeypatch.setattr(cassperf.cli, "_SUBCOMMAND_MODULES", ["logs"])   # independent of other subcommands


@pytest.fixture
def logs(tmp_path: Path) -> Path:
    folder = tmp_path / "logs"
    (folder / "nested").mkdir(parents=True)
    (folder / "a.log").write_text(TINY)
    (folder / "a.log.source.txt").write_text("tool: tiny (a sidecar, not a log)\n")
    (folder / "nested" / "b.txt").write_text(TINYTAB)
    (folder / "nested" / "b.txt.source.txt").write_text("sidecar\n")
    (folder / ".hidden").write_text("not a log\n")
    return folder


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    rc = cassperf.cli.main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def tiny_intervals() -> pd.DataFrame:
    return conform(pd.DataFrame({"time_s": [1.0, 2.0], "op": ["write", "write"], "count": [10, 20],
                                 "latency_p99_ms": [1.5, 2.5]}), INTERVAL_COLUMNS)


def test_parse_prints_text_tables_by_default(logs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, err = run_cli(capsys, "parse", str(logs / "a.log"))
    assert rc == 0
    assert out.splitlines() == [
        f"== {logs / 'a.log'} [tiny] intervals ==",
        " time_s    op  count  latency_p99_ms",
        "    1.0 write     10             1.5",
        "    2.0 write     20             2.5",
        "",
    ]
    assert err == f"{logs / 'a.log'}: tiny, 1 run(s), 0 table(s), 0 skipped line(s), 0 warning(s)\n"


def test_parse_names_the_runs_of_a_file_with_several(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "two.log").write_text("TINY 1\n1.0 write 10 1.5\nNEXT\n1.0 read 5 9.0\n")
    rc, out, err = run_cli(capsys, "parse", str(tmp_path / "two.log"))
    assert rc == 0 and "tiny, 2 run(s)" in err
    assert [line for line in out.splitlines() if line.startswith("==") or "read" in line] == [
        f"== {tmp_path / 'two.log'} [tiny] run1.intervals ==",
        f"== {tmp_path / 'two.log'} [tiny] run2.intervals ==",
        "    1.0 read      5             9.0"]


def test_parse_walks_folders_and_skips_sidecars(logs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = run_cli(capsys, "parse", str(logs))
    assert rc == 0
    headers = [line for line in out.splitlines() if line.startswith("==")]
    assert headers == [f"== {logs / 'a.log'} [tiny] intervals ==", f"== {logs / 'nested' / 'b.txt'} [tinytab] values =="]
    assert "node1      3" in out


def test_parse_accepts_globs(logs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = run_cli(capsys, "parse", str(logs / "**" / "*.txt"))
    assert rc == 0      # b.txt only: the sidecars match *.txt but are left out
    assert [line for line in out.splitlines() if line.startswith("==")] == [
        f"== {logs / 'nested' / 'b.txt'} [tinytab] values =="]


def test_parse_csv_goes_to_stdout_one_block_per_frame(logs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = run_cli(capsys, "parse", str(logs), "--output", "csv")
    assert rc == 0
    blocks = out.strip().split("\n\n")
    assert [b.splitlines()[0] for b in blocks] == [f"# {logs / 'a.log'} [tiny] intervals",
                                                   f"# {logs / 'nested' / 'b.txt'} [tinytab] values"]
    intervals = pd.read_csv(io.StringIO(blocks[0]), comment="#")
    assert list(intervals.columns) == list(INTERVAL_COLUMNS)          # the whole schema, empty columns too
    assert intervals.dropna(axis=1, how="all").to_dict("list") == {
        "time_s": [1.0, 2.0], "op": ["write", "write"], "count": [10, 20], "latency_p99_ms": [1.5, 2.5]}
    assert pd.read_csv(io.StringIO(blocks[1]), comment="#").to_dict("list") == {"node": ["node1", "node2"],
                                                                                 "value": [3, 4]}


def test_parse_parquet_needs_out_and_writes_one_file_per_frame(logs: Path, tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, err = run_cli(capsys, "parse", str(logs), "--output", "parquet")
    assert (rc, out, err) == (2, "", "cassperf: error: --output parquet needs --out DIR\n")
    rc, out, _ = run_cli(capsys, "parse", str(logs), "--output", "parquet", "--out", str(tmp_path / "out"))
    assert rc == 0
    assert out.splitlines() == [str(tmp_path / "out" / "a.log.intervals.parquet"),
                                str(tmp_path / "out" / "b.txt.values.parquet")]
    written = pd.read_parquet(tmp_path / "out" / "a.log.intervals.parquet")
    assert_frame_equal(written, tiny_intervals())


def test_parse_with_a_named_format(logs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc, _, err = run_cli(capsys, "parse", str(logs / "a.log"), "--format", "tiny")
    assert rc == 0 and "tiny, 1 run(s), 0 table(s)" in err
    rc, _, err = run_cli(capsys, "parse", str(logs / "a.log"), "--format", "tinytab")   # named, not detected
    assert (rc, err) == (2, f"cassperf: error: {logs / 'a.log'}:1: expected the header 'TINYTAB'; got 'TINY 1'\n")
    rc, _, err = run_cli(capsys, "parse", str(logs / "a.log"), "--format", "nope")
    assert (rc, err) == (2, "cassperf: error: unknown format 'nope'; known formats: tiny, tinytab\n")


@pytest.mark.parametrize("bad", ["missing.log", "nothing-*.log"])
def test_parse_a_path_that_is_not_there_is_one_line_and_exit_2(tmp_path: Path, bad: str,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    path = str(tmp_path / bad)
    rc, out, err = run_cli(capsys, "parse", path)
    assert rc == 2 and out == ""
    assert err.count("\n") == 1 and path in err and err.startswith("cassperf: error: ")


def test_parse_errors_name_file_and_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.log"
    bad.write_text("TINY 1\n1.0 write 10 1.5\n2.0 write\n")
    rc, out, err = run_cli(capsys, "parse", str(bad))
    assert (rc, out) == (2, "")
    assert err == f"cassperf: error: {bad}:3: expected 'time_s op count p99_ms'; got '2.0 write'\n"
    unknown = tmp_path / "unknown.log"
    unknown.write_text("something else\n")
    rc, _, err = run_cli(capsys, "parse", str(unknown))
    assert rc == 2 and err == f"cassperf: error: {unknown}: expected one of the known formats (tried: tiny, tinytab)\n"


def test_import_stores_runs_with_labels_and_prints_their_ids(logs: Path, tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "runs"
    rc, out, _ = run_cli(capsys, "import", str(logs), "--label", "rf=3", "--label", "run=a",
                         "--label", "note=x=y", "--root", str(root))
    assert rc == 0
    ids = out.split()
    assert len(ids) == 2 and sorted(p.name for p in root.iterdir()) == sorted(ids)
    tiny = load_run(ids[0], root)
    assert tiny.labels == {"rf": "3", "run": "a", "note": "x=y"}
    assert_frame_equal(tiny.intervals, tiny_intervals())
    assert (root / ids[0] / "raw" / "a.log").read_text() == TINY
    tab = load_run(ids[1], root)
    assert tab.manifest["tool"] == "tinytab" and tab.tables["values"]["value"].tolist() == [3, 4]
    assert catalog(root, rf="3", run="a")["run_id"].tolist() == sorted(ids)


def test_import_stores_nothing_when_any_file_fails(logs: Path, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    (logs / "nested" / "c.log").write_text("TINY 1\nbroken\n")
    rc, out, err = run_cli(capsys, "import", str(logs), "--label", "rf=3", "--root", str(tmp_path / "runs"))
    assert (rc, out) == (2, "") and f"{logs / 'nested' / 'c.log'}:2:" in err
    assert not (tmp_path / "runs").exists()


def test_import_rejects_a_label_without_equals(logs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        cassperf.cli.main(["import", str(logs), "--label", "rf3"])
    assert info.value.code == 2
    assert "a label is key=value, got 'rf3'" in capsys.readouterr().err


def test_python_m_cassperf_cli_on_a_missing_path_exits_2_with_one_line(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-dir" / "stress.log"
    proc = subprocess.run([sys.executable, "-m", "cassperf.cli", "parse", str(missing)], capture_output=True,
                          text=True, timeout=60, cwd=tmp_path, env={**os.environ, "PYTHONWARNINGS": "ignore"})
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr == f"cassperf: error: no such file or folder: {missing}\n"


# ---- issue 11: duplicates, secrets in raw/, and one line instead of a traceback ----------------

def test_import_refuses_content_already_imported_naming_the_run(logs: Path, tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    # item 5: a second import of the same content made a second, identical run
    root = tmp_path / "runs"
    rc, out, _ = run_cli(capsys, "import", str(logs / "a.log"), "--root", str(root))
    assert rc == 0
    first = out.split()
    sha = hashlib.sha256(TINY.encode()).hexdigest()
    rc, out, err = run_cli(capsys, "import", str(logs), "--label", "run=b", "--root", str(root))
    assert (rc, out) == (2, "")
    assert err.splitlines()[-1] == (
        f"cassperf: error: {logs / 'a.log'} was imported before as run {first[0]} (same content, sha256 "
        f"{sha[:12]}...); import it again only with --allow-duplicate (allow_duplicate=True)")
    assert catalog(root)["run_id"].tolist() == first                       # nothing stored, not even b.txt
    rc, out, _ = run_cli(capsys, "import", str(logs), "--label", "run=b", "--root", str(root), "--allow-duplicate")
    assert rc == 0 and len(out.split()) == 2
    assert catalog(root, run="b")["run_id"].tolist() == out.split()


def test_import_refuses_two_files_with_the_same_content_before_storing_either(
        logs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (logs / "nested" / "a-copy.log").write_text(TINY)
    rc, out, err = run_cli(capsys, "import", str(logs), "--root", str(tmp_path / "runs"))
    sha = hashlib.sha256(TINY.encode()).hexdigest()
    assert (rc, out) == (2, "")
    assert err.splitlines()[-1] == (
        f"cassperf: error: {logs / 'nested' / 'a-copy.log'} has the same content as {logs / 'a.log'} (sha256 "
        f"{sha[:12]}...), given in the same import; import one of them, or both with --allow-duplicate "
        f"(allow_duplicate=True)")
    assert not (tmp_path / "runs").exists()


def test_import_warns_once_about_a_secret_in_a_file_and_redacts_only_when_asked(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # item 8: a password inside an imported log stayed verbatim in raw/ without a word
    source = tmp_path / "values.txt"
    source.write_text("TINYTAB\nnode1 3\npassword=hunter2 4\n")
    rc, out, err = run_cli(capsys, "import", str(source), "--root", str(tmp_path / "kept"))
    assert rc == 0
    warning = (f"cassperf: warning: {source}: line 3 holds what looks like a password or other secret; the run's "
               f"raw/ copy keeps the file as it came (import with --redact-raw, or redact_raw=True, to store a "
               f"redacted copy instead)")
    assert err.splitlines() == [f"{source}: tinytab, 0 run(s), 1 table(s), 0 skipped line(s), 0 warning(s)", warning]
    run_id = out.strip()
    assert (tmp_path / "kept" / run_id / "raw" / "values.txt").read_text() == "TINYTAB\nnode1 3\npassword=hunter2 4\n"
    rc, out, err = run_cli(capsys, "import", str(source), "--root", str(tmp_path / "redacted"), "--redact-raw")
    assert (rc, err) == (0, f"{source}: tinytab, 0 run(s), 1 table(s), 0 skipped line(s), 0 warning(s)\n")
    run_id = out.strip()
    assert (tmp_path / "redacted" / run_id / "raw" / "values.txt").read_text() == (
        "TINYTAB\nnode1 3\npassword=<redacted> 4\n")
    assert load_run(run_id, tmp_path / "redacted").manifest["raw_redacted"] == 1


def test_import_into_a_root_that_is_a_file_is_one_line(logs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # item 6: `cassperf import --root FILE FILE` was a FileExistsError traceback
    rc, out, err = run_cli(capsys, "import", "--root", str(logs / "a.log"), str(logs / "a.log"))
    assert (rc, out, err) == (2, "", f"cassperf: error: --root {logs / 'a.log'} is a file, not a folder; give the "
                                     f"runs folder (made when missing)\n")
    assert (logs / "a.log").read_text() == TINY


@pytest.mark.parametrize("out_dir, reason", [
    ("/proc/foo", "No such file or directory"),
    ("{logs}/a.log/out", "Not a directory"),
])
def test_parse_to_a_folder_that_cannot_be_made_is_one_line(logs: Path, capsys: pytest.CaptureFixture[str],
                                                           out_dir: str, reason: str) -> None:
    # item 6: `cassperf parse --output csv --out /proc/foo FILE` was a FileNotFoundError traceback
    out_dir = out_dir.format(logs=logs)
    rc, out, err = run_cli(capsys, "parse", "--output", "csv", "--out", out_dir, str(logs / "a.log"))
    assert (rc, out, err) == (2, "", f"cassperf: error: --out {out_dir}: cannot make the folder ({reason}); give a "
                                     f"folder you can write to\n")


def test_an_os_error_no_command_turned_into_a_message_is_still_one_line(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    def cannot_read(args: object) -> int:
        raise PermissionError(13, "Permission denied", str(tmp_path / "secret.log"))

    monkeypatch.setattr(cassperf.cli.logs, "cmd_parse", cannot_read)
    rc, out, err = run_cli(capsys, "parse", "x")
    assert (rc, out, err) == (2, "", f"cassperf: error: {tmp_path / 'secret.log'}: Permission denied\n")


def test_parse_into_a_closed_pipe_stops_quietly(tmp_path: Path) -> None:
    # item 6: `cassperf parse FILE | head -1` was a BrokenPipeError traceback; Unix tools stop quietly.
    # 30 copies of a real log: far more output than a pipe holds, so the write after head exits fails
    fixture = Path(__file__).resolve().parents[1] / "fixtures" / "cassandra-stress-5.0" / "mixed.stdout.txt"
    folder = tmp_path / "logs"
    folder.mkdir()
    for i in range(30):
        (folder / f"mixed-{i:02d}.txt").write_bytes(fixture.read_bytes())
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    cli = subprocess.Popen([sys.executable, "-m", "cassperf.cli", "parse", "--output", "csv", str(folder)],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    head = subprocess.Popen(["head", "-1"], stdin=cli.stdout, stdout=subprocess.PIPE)
    assert cli.stdout is not None and cli.stderr is not None
    cli.stdout.close()                                   # head holds the only reading end
    first, _ = head.communicate(timeout=120)
    err = cli.stderr.read().decode()
    assert cli.wait(timeout=120) == 141                  # 128 + SIGPIPE, as a shell reports such a tool
    assert first.decode() == f"# {folder / 'mixed-00.txt'} [cassandra-stress] summary\n"
    assert "Traceback" not in err and "error" not in err
    assert all(line.startswith(f"{folder}/mixed-") and ": cassandra-stress, 1 run(s)" in line
               for line in err.splitlines())
