"""The catalog (one row per stored run, filtered by labels) and importing parse results."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pandas as pd
import pytest
from pandas.testing import assert_frame_equal

from cassperf.parsers.base import ParseResult
from cassperf.results.catalog import DuplicateImportError, RawSecretWarning, catalog, headline, import_parsed
from cassperf.results.model import Run
from cassperf.results.store import RunStoreWarning, RunWriter, load_run, save_run


def summary_row(op: str, count: int, rate: float, p99: float | None) -> dict:
    return {"op": op, "count": count, "rate_ops_s": rate, "latency_p99_ms": p99}


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """Three runs: RF 1 and RF 3 writes (run a), an RF 3 mixed run (run b) with a total row."""
    save_run(Run({"run_id": "20260101T000001.000000Z-w1", "tool": "cassandra-stress",
                  "labels": {"rf": "1", "run": "a", "threads": "16"},
                  "started_utc": "2026-01-01T00:00:01.000000Z", "ended_utc": "2026-01-01T00:01:41.500000Z"},
                 summary=[summary_row("write", 1_000_000, 9645.0, 1.6)]), tmp_path)
    save_run(Run({"run_id": "20260101T000002.000000Z-w3", "tool": "cassandra-stress",
                  "labels": {"rf": "3", "run": "a", "cl": "LOCAL_QUORUM"},
                  "started_utc": "2026-01-01T00:00:02.000000Z", "ended_utc": None, "complete": False},
                 summary=[summary_row("read", 600, 6.0, 30.5), summary_row("write", 400, 4.0, 2.25)]),
             tmp_path)
    save_run(Run({"run_id": "20260101T000003.000000Z-m3", "tool": "tlp-stress",
                  "labels": {"rf": "3", "run": "b"}, "started_utc": "2026-01-01T00:00:03.000000Z"},
                 summary=[summary_row("select", 500, 5.0, 3.0), summary_row("insert", 500, 5.0, 4.0),
                          summary_row("Total", 1000, 10.0, None)]), tmp_path)
    return tmp_path


def test_catalog_has_one_row_per_run_with_labels_and_headline_figures(root: Path) -> None:
    cat = catalog(root)
    assert list(cat.columns) == ["run_id", "tool", "started_utc", "ended_utc", "complete", "failed", "rf", "run",
                                 "threads",
                                 "cl", "total_ops", "rate_ops_s", "p99_ms_insert", "p99_ms_read", "p99_ms_select",
                                 "p99_ms_write", "path"]
    expected = pd.DataFrame({
        "run_id": ["20260101T000001.000000Z-w1", "20260101T000002.000000Z-w3", "20260101T000003.000000Z-m3"],
        "tool": ["cassandra-stress", "cassandra-stress", "tlp-stress"],
        "started_utc": pd.to_datetime(["2026-01-01T00:00:01Z", "2026-01-01T00:00:02Z", "2026-01-01T00:00:03Z"],
                                      utc=True).astype("datetime64[ns, UTC]"),
        "ended_utc": pd.to_datetime(["2026-01-01T00:01:41.5Z", None, None], utc=True).astype("datetime64[ns, UTC]"),
        "complete": [True, False, True],
        "failed": [False, False, False],
        "rf": ["1", "3", "3"], "run": ["a", "a", "b"], "threads": ["16", None, None],
        "cl": [None, "LOCAL_QUORUM", None],
        "total_ops": pd.array([1_000_000, 1000, 1000], dtype="Int64"),   # sum of read+write; the Total row
        "rate_ops_s": [9645.0, 10.0, 10.0],
        "p99_ms_insert": [float("nan"), float("nan"), 4.0],
        "p99_ms_read": [float("nan"), 30.5, float("nan")],
        "p99_ms_select": [float("nan"), float("nan"), 3.0],
        "p99_ms_write": [1.6, 2.25, float("nan")],
        "path": [str(root / r) for r in ("20260101T000001.000000Z-w1", "20260101T000002.000000Z-w3",
                                         "20260101T000003.000000Z-m3")],
    })
    for col in ("run_id", "tool", "rf", "run", "threads", "cl", "path"):
        expected[col] = expected[col].astype("string")
    assert_frame_equal(cat, expected, check_exact=True)
    assert cat.attrs["skipped"] == []


@pytest.mark.parametrize(("filters", "ids"), [
    ({"rf": "3"}, ["w3", "m3"]),
    ({"rf": 3}, ["w3", "m3"]),                          # compared as strings
    ({"rf": "3", "run": "a"}, ["w3"]),
    ({"run": ["a", "b"], "rf": ["1", 3]}, ["w1", "w3", "m3"]),
    ({"threads": 16}, ["w1"]),
    ({"cl": "ONE"}, []),
    ({"nosuchlabel": "x"}, []),
])
def test_catalog_filters_by_labels(root: Path, filters: dict, ids: list[str]) -> None:
    cat = catalog(root, **filters)
    assert [r.rsplit("-", 1)[1] for r in cat["run_id"]] == ids


def test_an_empty_or_missing_store_is_an_empty_catalog(tmp_path: Path) -> None:
    for where in (tmp_path, tmp_path / "nowhere"):
        cat = catalog(where)
        assert cat.empty and list(cat.columns) == ["run_id", "tool", "started_utc", "ended_utc", "complete",
                                                   "failed", "total_ops", "rate_ops_s", "path"]


def test_unreadable_folders_are_skipped_with_a_warning(root: Path) -> None:
    (root / "corrupt").mkdir()
    (root / "corrupt" / "manifest.json").write_text('{"schema_version": 1, ')
    (root / "future").mkdir()
    (root / "future" / "manifest.json").write_text(json.dumps({"schema_version": 99}))
    (root / "stray").mkdir()
    save_run(Run({"run_id": "when", "started_utc": "yesterday"}), root)
    (root / ".20260101T000009.000000Z-x.partial-123").mkdir()      # a save in progress: not reported
    (root / "notes.txt").write_text("a file, not a run")
    with pytest.warns(RunStoreWarning) as record:
        cat = catalog(root)
    assert len(cat) == 3
    assert [p for p, _ in cat.attrs["skipped"]] == [str(root / n) for n in ("corrupt", "future", "stray", "when")]
    messages = [str(r.message) for r in record]
    assert len(messages) == 4
    assert messages[0].startswith(f"catalog: skipped {root / 'corrupt'}: {root / 'corrupt' / 'manifest.json'}:1")
    assert "schema_version 99" in messages[1]
    assert messages[2] == f"catalog: skipped {root / 'stray'}: no manifest.json"
    assert messages[3].startswith(f"catalog: skipped {root / 'when'}: ") and "yesterday" in messages[3]


def test_a_crashed_run_is_listed_as_incomplete_with_its_figures(tmp_path: Path) -> None:
    w = RunWriter({"run_id": "crashed", "tool": "x", "labels": {"rf": "1"}}, root=tmp_path).open()
    w.append_summary(summary_row("write", 50, 5.0, 1.0))        # never closed: only jsonl on disk
    cat = catalog(tmp_path)
    assert cat[["run_id", "complete", "total_ops", "rate_ops_s", "p99_ms_write"]].to_dict("records") == [
        {"run_id": "crashed", "complete": False, "total_ops": 50, "rate_ops_s": 5.0, "p99_ms_write": 1.0}]
    w.close()


def test_labels_named_like_catalog_columns_are_prefixed(tmp_path: Path) -> None:
    save_run(Run({"run_id": "r", "tool": "x", "labels": {"tool": "custom", "path": "/p", "rf": "1"}}), tmp_path)
    cat = catalog(tmp_path)
    assert cat["tool"].tolist() == ["x"]
    assert cat[["label_tool", "label_path", "rf"]].iloc[0].tolist() == ["custom", "/p", "1"]
    assert catalog(tmp_path, tool="custom")["run_id"].tolist() == ["r"]     # filters are on labels


def test_failed_runs_are_left_out_unless_asked_for(root: Path) -> None:
    # issue 11, item 2: a run that started and then failed is stored marked failed, and the
    # catalog leaves it out unless asked
    save_run(Run({"run_id": "20260101T000004.000000Z-f3", "tool": "cassandra-stress", "labels": {"rf": "3"},
                  "started_utc": "2026-01-01T00:00:04.000000Z", "complete": True, "failed": True,
                  "failure": "100 of 100 operations failed (error share 1.00 > 0.05)"},
                 summary=[summary_row("write", 0, 0.0, None)]), root)
    cat = catalog(root)
    assert [r.rsplit("-", 1)[1] for r in cat["run_id"]] == ["w1", "w3", "m3"]
    assert cat["failed"].tolist() == [False, False, False]
    assert cat.attrs["failed_left_out"] == ["20260101T000004.000000Z-f3"]
    everything = catalog(root, include_failed=True)
    assert [r.rsplit("-", 1)[1] for r in everything["run_id"]] == ["w1", "w3", "m3", "f3"]
    assert everything["failed"].tolist() == [False, False, False, True] and everything["failed"].dtype == bool
    assert everything.attrs["failed_left_out"] == []
    assert catalog(root, include_failed=True, rf="3")["run_id"].str[-2:].tolist() == ["w3", "m3", "f3"]
    assert catalog(root, rf="3")["run_id"].str[-2:].tolist() == ["w3", "m3"]


def test_headline_never_averages_percentiles() -> None:
    two_ops = pd.DataFrame([summary_row("read", 10, 1.0, 5.0), summary_row("write", 30, 3.0, 1.0)])
    figures = headline(two_ops)
    assert figures == {"total_ops": 40, "rate_ops_s": 4.0, "p99_ms_read": 5.0, "p99_ms_write": 1.0}
    assert "p99_ms" not in figures


# ---- import_parsed ---------------------------------------------------------------------------

def parse_result(source: Path | str, complete: bool = True) -> ParseResult:
    result = ParseResult(format="tiny-stress", source=str(source), complete=complete, skipped_lines=2)
    result.runs = [
        Run({"tool": "tiny-stress", "tool_version": "1.0", "labels": {"threads": "4"}, "latency_type": "service"},
            intervals=[{"time_s": 1.0, "op": "write", "count": 10, "latency_p99_ms": 1.25}],
            summary=[summary_row("write", 10, 10.0, 1.25)], warnings=["threads=4 block ended early"]),
        Run({"tool": "tiny-stress", "labels": {"threads": "8"}},
            intervals=[{"time_s": 1.0, "op": "write", "count": 20, "latency_p99_ms": 2.5}]),
    ]
    result.tables = {"per-thread summary": pd.DataFrame({"threads": [4, 8], "ops_s": [10.0, 20.0]})}
    result.warn(7, "garbage", "an interval row")
    return result


def test_import_parsed_stores_every_run_and_the_tables(tmp_path: Path) -> None:
    source = tmp_path / "stress.log"
    source.write_bytes(b"tiny stress output\r\n")
    ids = import_parsed(parse_result(source), {"rf": 3, "threads": "override"}, root=tmp_path / "runs")
    assert len(ids) == 3 and ids == sorted(ids)
    assert [i[-3:] for i in ids] == ["-01", "-02", "-03"] and len({i[:-3] for i in ids}) == 1
    assert re.match(r"^\d{8}T\d{6}\.\d{6}Z-tiny-stress-[0-9a-f]{6}-01$", ids[0])
    first, second, tables = (load_run(i, tmp_path / "runs") for i in ids)
    assert first.labels == {"threads": "override", "rf": "3"}              # given labels win
    assert first.manifest["tool_version"] == "1.0" and first.manifest["latency_type"] == "service"
    assert first.manifest["source"] == str(source) and first.manifest["format"] == "tiny-stress"
    assert first.manifest["source_part"] == "1/3" and first.manifest["skipped_lines"] == 2
    assert first.manifest["source_sha256"] == hashlib.sha256(b"tiny stress output\r\n").hexdigest()
    assert first.warnings == ["threads=4 block ended early", f"{source}:7: expected an interval row; got 'garbage'"]
    assert first.intervals["count"].tolist() == [10] and second.intervals["count"].tolist() == [20]
    assert second.labels == {"threads": "override", "rf": "3"}
    assert tables.manifest["tool"] == "tiny-stress" and tables.intervals.empty
    assert_frame_equal(tables.tables["per-thread summary"],
                       pd.DataFrame({"threads": [4, 8], "ops_s": [10.0, 20.0]}))
    for run_id in ids:
        assert (tmp_path / "runs" / run_id / "raw" / "stress.log").read_bytes() == b"tiny stress output\r\n"
    assert catalog(tmp_path / "runs", threads="override")["run_id"].tolist() == ids


def test_import_parsed_marks_runs_of_a_truncated_file_incomplete(tmp_path: Path) -> None:
    result = parse_result("<text>", complete=False)
    result.tables = {}
    ids = import_parsed(result, {}, root=tmp_path)
    assert len(ids) == 2
    runs = [load_run(i, tmp_path) for i in ids]
    assert [r.complete for r in runs] == [False, False]
    assert runs[0].manifest["source_sha256"] is None
    assert list((tmp_path / ids[0] / "raw").iterdir()) == []
    assert import_parsed(ParseResult(format="empty", source="<text>"), {}, root=tmp_path) == []


def test_the_same_file_content_is_imported_once_unless_a_duplicate_is_asked_for(tmp_path: Path) -> None:
    # issue 11, item 5: importing the same file twice made two identical runs (same source_sha256),
    # so every aggregate over labels counted it twice
    source = tmp_path / "stress.log"
    source.write_bytes(b"tiny stress output\n")
    first = import_parsed(parse_result(source), {"run": "a"}, root=tmp_path / "runs")
    copy = tmp_path / "elsewhere" / "copy.log"               # another name, the same bytes
    copy.parent.mkdir()
    copy.write_bytes(source.read_bytes())
    sha = hashlib.sha256(b"tiny stress output\n").hexdigest()
    for again in (source, copy):
        with pytest.raises(DuplicateImportError) as info:
            import_parsed(parse_result(again), {"run": "b"}, root=tmp_path / "runs")
        assert str(info.value) == (
            f"{again} was imported before as run {first[0]} (and 2 more run(s) from the same file) (same content, "
            f"sha256 {sha[:12]}...); import it again only with --allow-duplicate (allow_duplicate=True)")
        assert info.value.run_ids == first and info.value.sha256 == sha
    assert catalog(tmp_path / "runs")["run_id"].tolist() == first         # nothing stored by a refusal
    second = import_parsed(parse_result(copy), {"run": "b"}, root=tmp_path / "runs", allow_duplicate=True)
    assert len(second) == 3 and catalog(tmp_path / "runs")["run_id"].tolist() == first + second
    # other content is no duplicate
    source.write_bytes(b"tiny stress output, another run\n")
    assert len(import_parsed(parse_result(source), {}, root=tmp_path / "runs")) == 3


def test_a_secret_in_an_imported_file_is_named_in_a_warning_and_kept_unless_redaction_is_asked_for(
        tmp_path: Path) -> None:
    # issue 11, item 8: a password inside an imported log stayed verbatim in raw/ without a word
    source = tmp_path / "stress.log"
    content = (b"Command: cassandra-stress write n=10 -mode native cql3 user=bob password=hunter2\n"
               b"  Password: null\n"                          # cassandra-stress settings dump: no secret
               b"total, 10, 10, 1.25\n")
    source.write_bytes(content)
    result = parse_result(source)
    result.tables = {}
    with pytest.warns(RawSecretWarning) as record:
        kept = import_parsed(result, {}, root=tmp_path / "kept")
    message = (f"{source}: line 1 holds what looks like a password or other secret; the run's raw/ copy keeps "
               f"the file as it came (import with --redact-raw, or redact_raw=True, to store a redacted copy instead)")
    assert [str(r.message) for r in record] == [message]
    for run_id in kept:
        assert (tmp_path / "kept" / run_id / "raw" / "stress.log").read_bytes() == content
        assert load_run(run_id, tmp_path / "kept").warnings[-1] == message
    import warnings as warnings_module
    with warnings_module.catch_warnings():
        warnings_module.simplefilter("error")                    # no warning when the copy is redacted
        redacted = import_parsed(result, {}, root=tmp_path / "redacted", redact_raw=True)
    run = load_run(redacted[0], tmp_path / "redacted")
    assert (tmp_path / "redacted" / redacted[0] / "raw" / "stress.log").read_bytes() == (
        b"Command: cassandra-stress write n=10 -mode native cql3 user=bob password=<redacted>\n"
        b"  Password: null\n"
        b"total, 10, 10, 1.25\n")
    assert run.manifest["raw_redacted"] == 1
    assert run.manifest["source_sha256"] == hashlib.sha256(content).hexdigest()   # of the file as it came
    assert run.warnings == ["threads=4 block ended early", f"{source}:7: expected an interval row; got 'garbage'"]


def test_what_the_registered_parsers_return_for_real_fixtures_round_trips(tmp_path: Path) -> None:
    """One fixture per registered format (whichever parsers exist when this runs): import, load,
    and every frame and table comes back equal, dtypes included."""
    from cassperf import parsers
    from cassperf.errors import CassperfError
    from tests.conftest import public_fixture_files

    seen: dict[str, Path] = {}
    for path in public_fixture_files():
        try:
            fmt = parsers.detect(parsers.read_text(path)[:65536], str(path))
            if fmt.name in seen:
                continue
            result = parsers.parse(path, format=fmt.name)
        except CassperfError:
            continue                                   # not a registered format (yet), or a bad file
        except Exception:  # noqa: BLE001 - a parser still being written; its own tests say so
            continue
        seen[result.format] = path
        result.runs = result.runs[:2]                  # two runs tell as much as twenty, faster
        ids = import_parsed(result, {"fixture": path.name}, root=tmp_path)
        originals = [*result.runs, *([Run({}, tables=result.tables)] if result.tables else [])]
        assert len(ids) == len(originals)
        for run_id, original in zip(ids, originals, strict=True):
            loaded = load_run(run_id, tmp_path)
            for stem in ("intervals", "summary", "metrics", "events", "histograms"):
                assert_frame_equal(getattr(loaded, stem), getattr(original, stem), check_exact=True,
                                   obj=f"{path.name} {stem}")
            assert list(loaded.tables) == list(original.tables)
            for name, table in original.tables.items():
                assert_frame_equal(loaded.tables[name], table, check_exact=True, obj=f"{path.name} {name}")
            assert (tmp_path / run_id / "raw" / path.name).read_bytes() == path.read_bytes()
    assert seen, "no registered parser reads any fixture"
    assert len(catalog(tmp_path)) >= len(seen)
