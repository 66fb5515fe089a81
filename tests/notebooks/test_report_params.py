"""Which notebooks the pipeline runs, with which parameters, on which cluster: found on disk,
parameter sets checked before anything runs, bad input refused in one line. No kernel, no node."""

from __future__ import annotations

import json
import re

import pytest
import yaml

from cassperf import config
from cassperf.cli import main
from cassperf.errors import ConfigError
from cassperf.report.clusters import ClusterNeed, cluster_need
from cassperf.report.index import ReportRecord, write_index, write_record
from cassperf.report.params import discover_notebooks, notebook_parameters, resolve, select_notebooks
from cassperf.report.pipeline import execution_order, load_seconds
from tests.notebooks.reportkit import write_notebook

PARAMS = '''rows: int = 10  # rows to write
label: str = "a"  # a label
rate: float = 1.5  # ops/s
analyse_only: bool = False  # run nothing'''


@pytest.fixture
def home(tmp_path, monkeypatch):
    """A project root of its own: notebooks/, reports/ and data/ under tmp."""
    monkeypatch.setenv("CASSPERF_HOME", str(tmp_path))
    monkeypatch.setenv("CASSPERF_REPORTS", str(tmp_path / "reports"))
    monkeypatch.setenv("CASSPERF_DATA", str(tmp_path / "data"))
    nbs = tmp_path / "notebooks"
    write_notebook(nbs, "02-second.ipynb", PARAMS, ["print(rows)"])
    write_notebook(nbs, "01-first.ipynb", PARAMS, ["print(rows)"])
    write_notebook(nbs, "notes.ipynb", PARAMS, [])
    write_notebook(nbs, "1-short.ipynb", PARAMS, [])
    return tmp_path


def test_notebooks_are_found_on_disk_in_name_order(home):
    assert [p.name for p in discover_notebooks()] == ["01-first.ipynb", "02-second.ipynb"]
    assert [p.name for p in select_notebooks(["02-second", "01-first.ipynb"])] == ["01-first.ipynb", "02-second.ipynb"]
    with pytest.raises(ConfigError, match=r"--notebook 03-x: no such report notebook; known: 01-first.ipynb, "
                                          r"02-second.ipynb"):
        select_notebooks(["03-x"])


def test_parameters_come_from_the_parameters_cell_with_values_and_types(home):
    params = notebook_parameters(home / "notebooks" / "01-first.ipynb")
    assert {n: (p.type_name, p.default) for n, p in params.items()} == {
        "rows": ("int", 10), "label": ("str", "a"), "rate": ("float", 1.5), "analyse_only": ("bool", False)}


def test_defaults_then_the_local_file_then_explicit_values(home):
    nb = home / "notebooks" / "01-first.ipynb"
    assert resolve(nb).effective == {"rows": 10, "label": "a", "rate": 1.5, "analyse_only": False}
    assert resolve(nb).given == {}
    (home / "notebooks" / "params" / "local").mkdir(parents=True)
    (home / "notebooks" / "params" / "local" / "01-first.yaml").write_text("rows: 20\nlabel: b\n")
    r = resolve(nb, "local", {"label": "z", "rate": "2.5", "not_mine": 1})
    assert r.given == {"rows": 20, "label": "z", "rate": 2.5}
    assert r.effective == {"rows": 20, "label": "z", "rate": 2.5, "analyse_only": False}


def test_paper_set_reads_its_file_and_names_a_missing_one(home):
    nb = home / "notebooks" / "01-first.ipynb"
    with pytest.raises(ConfigError) as exc:
        resolve(nb, "paper")
    assert str(exc.value) == (f"parameter set 'paper': {home}/notebooks/params/paper/01-first.yaml is absent; write the "
                              "published-scale values of 01-first.ipynb there (name: value lines), or run with "
                              "--params local")
    (home / "notebooks" / "params" / "paper").mkdir(parents=True)
    (home / "notebooks" / "params" / "paper" / "01-first.yaml").write_text("# published scale\nrows: 10000000\n")
    assert resolve(nb, "paper").effective["rows"] == 10_000_000


def test_unknown_key_in_a_file_is_one_line_naming_file_key_and_parameters(home, capsys):
    bad = home / "mine.yaml"
    bad.write_text("rows: 5\nthreads: 64\n")
    rc = main(["report", "--params", str(bad), "--notebook", "01-first"])
    err = capsys.readouterr().err
    assert rc == 2
    assert err == (f"cassperf: error: {bad}: 'threads' is not a parameter of 01-first.ipynb; its parameters: "
                   "rows, label, rate, analyse_only\n")
    assert not (home / "reports").exists(), "nothing runs when a parameter is wrong"


def test_a_value_of_the_wrong_type_names_the_declared_type(home):
    bad = home / "mine.yaml"
    bad.write_text("rows: many\n")
    with pytest.raises(ConfigError, match=re.escape(f"{bad}: rows = 'many' is a str; 01-first.ipynb declares "
                                                    "rows: int (e.g. rows: 10)")):
        resolve(home / "notebooks" / "01-first.ipynb", str(bad))
    bad.write_text("analyse_only: 1\n")
    with pytest.raises(ConfigError, match="declares analyse_only: bool"):
        resolve(home / "notebooks" / "01-first.ipynb", str(bad))


def test_a_file_that_is_not_a_mapping_is_refused(home):
    bad = home / "list.yaml"
    bad.write_text("- rows\n- 5\n")
    with pytest.raises(ConfigError, match=re.escape(f"{bad}: expected a mapping of parameter names to values "
                                                    "(name: value), got a list")):
        resolve(home / "notebooks" / "01-first.ipynb", str(bad))
    bad.write_text("rows: [1\n")
    with pytest.raises(ConfigError, match=re.escape(f"{bad}:2: not valid YAML")):
        resolve(home / "notebooks" / "01-first.ipynb", str(bad))


def test_an_explicit_parameter_no_notebook_declares_is_refused(home, capsys):
    assert main(["report", "-p", "threads", "64"]) == 2
    assert capsys.readouterr().err == ("cassperf: error: parameter 'threads' is not a parameter of any selected notebook "
                                       "(01-first.ipynb, 02-second.ipynb)\n")


def test_the_cluster_a_notebook_needs_is_named_after_its_shape():
    assert cluster_need({"rows": 1}) is None, "no cluster_topology parameter: no cluster"
    assert cluster_need({"cluster_topology": "dc1:3", "contact_points": " 10.0.0.5 "}) is None, "the user's cluster"
    need = cluster_need({"cluster_topology": "dc1:3", "cluster_name": "publish", "first_address": "127.0.5.1",
                         "cluster_heap_mb": 512, "contact_points": "", "cassandra_version": ""})
    assert need == ClusterNeed("publish-dc1_3", "dc1:3", "127.0.5.1", 512, None)
    assert cluster_need({"cluster_topology": "dc1:6"}) == ClusterNeed("cassperf-dc1_6", "dc1:6", "127.0.0.1", None, None)


def test_notebooks_on_one_cluster_run_together_and_results_keep_name_order(home):
    nbs = home / "notebooks"
    plans = []
    for name, shape in [("00-a", None), ("01-b", "x"), ("02-c", "y"), ("03-d", "x"), ("04-e", None)]:
        res = resolve(write_notebook(nbs, f"{name}.ipynb", PARAMS, []))
        plans.append((res, ClusterNeed(shape, "dc1:1", "127.0.0.1", None, None) if shape else None))
    assert [r.notebook.stem for r, _ in execution_order(plans)] == ["00-a", "04-e", "01-b", "03-d", "02-c"]


def test_notebooks_on_one_cluster_in_one_shape_run_together_so_each_shape_starts_once(home):
    # make report's one-node notebooks: 00 and 06 on the same cluster and heap, 05 with a page-cache bound
    nbs = home / "notebooks"
    plain = ClusterNeed("cassperf-dc1_1", "dc1:1", "127.0.0.1", 512, None)
    bounded = ClusterNeed("cassperf-dc1_1", "dc1:1", "127.0.0.1", 512, None, page_cache_mb=64)
    plans = [(resolve(write_notebook(nbs, f"{name}.ipynb", PARAMS, [])), need)
             for name, need in [("00-overview", plain), ("05-storage", bounded), ("06-question", plain)]]
    assert [r.notebook.stem for r, _ in execution_order(plans)] == ["00-overview", "06-question", "05-storage"]


def _record(name: str, ok: bool, **kw) -> ReportRecord:
    base = dict(notebook=name, title=name.upper(), html=name.replace(".ipynb", ".html"), ok=ok,
                error=None if ok else "cell 4: RuntimeError: disk full", duration_s=75.4, parameter_set="local",
                runs_stored=3, cluster="publish-dc1_1 (dc1:1 on 127.0.5.1)", cluster_s=8.0, size_bytes=5_200_000,
                finished_utc="2026-11-23 13:00 UTC", commit="abc1234")
    return ReportRecord(**{**base, **kw})


def test_the_index_lists_every_report_with_status_duration_parameters_and_runs(tmp_path):
    write_record(tmp_path, _record("02-b.ipynb", False, duration_s=130.0, parameter_set="mine.yaml", runs_stored=0))
    write_record(tmp_path, _record("01-a.ipynb", True, load_s=60.3))
    page = write_index(tmp_path).read_text()
    rows = re.findall(r"<tr class=\"(ok-row|failed-row)\">(.*?)</tr>", page, re.S)
    assert [r[0] for r in rows] == ["ok-row", "failed-row"]
    cells = [re.findall(r"<td[^>]*>(.*?)</td>", r[1], re.S) for r in rows]
    strip = [[re.sub(r"<[^>]+>", " ", c).split() for c in row] for row in cells]
    # the Claims cell is empty for a notebook that publishes no claims table
    assert strip[0][:6] == [["01-A.IPYNB", "01-a.ipynb"], ["ok"], [], ["75", "s", "80%", "in", "workload", "runs"],
                            ["local"], ["3"]]
    assert strip[1][:6] == [["02-B.IPYNB", "02-b.ipynb"], ["failed", "cell", "4:", "RuntimeError:", "disk", "full"],
                            [], ["2", "min", "10", "s"], ["mine.yaml"], ["0"]]
    assert '<a href="01-a.html">' in page and '<a href="02-b.html">' in page
    assert "5.2 MB" in page
    # a later run of one notebook keeps the other's row
    write_record(tmp_path, _record("01-a.ipynb", True, runs_stored=7))
    page = write_index(tmp_path).read_text()
    assert page.count("<tr class=") == 2 and ">7<" in page


def _manifest(runs, name: str, started: str, ended: str | None, warmup: bool, warmup_s: float = 2.0) -> None:
    (runs / name).mkdir(parents=True)
    m = {"run_id": name, "started_utc": started, "parameters": {"warmup": warmup, "engine": {"warmup_s": warmup_s}}}
    if ended:
        m["ended_utc"] = ended
    (runs / name / "manifest.json").write_text(json.dumps(m))


def test_time_in_workload_runs_is_each_runs_recorded_load_plus_its_warm_up(tmp_path):
    _manifest(tmp_path, "a", "2026-11-23T14:56:03.500000Z", "2026-11-23T14:56:13.500000Z", True)    # 10 s + 2 s
    _manifest(tmp_path, "b", "2026-11-23T14:57:00Z", "2026-11-23T14:57:04.250000Z", False)           # 4.25 s, cold
    _manifest(tmp_path, "c", "2026-11-23T14:58:00Z", None, True)                                     # killed: no end
    (tmp_path / "d").mkdir()                                                                         # no manifest
    assert load_seconds(tmp_path, {"a", "b", "c", "d"}) == pytest.approx(16.25)
    assert load_seconds(tmp_path, {"b"}) == pytest.approx(4.25)
    assert load_seconds(tmp_path, set()) == 0.0


def test_every_parameter_file_of_the_project_is_a_plain_mapping_of_its_notebooks_parameters():
    """notebooks/params/<set>/<stem>.yaml: names only parameters of notebooks/<stem>.ipynb, in
    their types, so `cassperf report --params <set>` and `papermill -f` both read it."""
    files = sorted((config.notebooks_dir() / "params").glob("*/*.yaml"))
    assert files, "the paper set has files"
    for path in files:
        nb = config.notebooks_dir() / f"{path.stem}.ipynb"
        assert nb.exists(), f"{path}: no notebook {nb.name}"
        data = yaml.safe_load(path.read_text())
        assert isinstance(data, dict), f"{path}: a mapping"
        resolve(nb, str(path))  # raises on an unknown key or a wrong type


def test_a_parameter_papermill_cannot_read_is_named_with_its_line_and_the_fix(home):
    """papermill skips a parameters line whose comment holds quotes; `-p` or a file naming that
    parameter gets one line saying so, not 'not a parameter'."""
    nb = write_notebook(home / "notebooks", "03-quoted.ipynb",
                        'rows: int = 10  # rows\ncontact_points: str = ""  # yours; "" = the embedded cluster', [])
    with pytest.raises(ConfigError) as exc:
        resolve(nb, "local", {"contact_points": "10.0.0.5"})
    assert str(exc.value) == ("explicit parameter: 'contact_points' is in the parameters cell of 03-quoted.ipynb (line 2) "
                              "but papermill cannot read that line: 'contact_points: str = \"\"  # yours; \"\" = the "
                              "embedded cluster'; write its comment without quotes (e.g. '# ... empty = the embedded "
                              "cluster')")
    mine = home / "mine.yaml"
    mine.write_text("contact_points: 10.0.0.5\n")
    with pytest.raises(ConfigError, match=re.escape(f"{mine}: 'contact_points' is in the parameters cell of "
                                                    "03-quoted.ipynb (line 2)")):
        resolve(nb, str(mine))


def test_a_notebook_that_starts_its_own_clusters_runs_last_and_gets_none_from_the_pipeline(home):
    from cassperf.report.clusters import starts_own_clusters

    own = PARAMS + '\ndeployments: str = "5.0.6:java17:disk"  # one cluster per deployment\ncontact_points: str = ""  # x'
    nbs = home / "notebooks"
    plans = [(resolve(write_notebook(nbs, "00-a.ipynb", PARAMS, [])), None),
             (resolve(write_notebook(nbs, "01-b.ipynb", PARAMS, [])), ClusterNeed("x", "dc1:1", "127.0.0.1", None, None)),
             (resolve(write_notebook(nbs, "02-own.ipynb", own, [])), None)]
    assert [r.notebook.stem for r, _ in execution_order(list(reversed(plans)))] == ["00-a", "01-b", "02-own"]
    assert starts_own_clusters(plans[2][0].effective)
    assert not starts_own_clusters({**plans[2][0].effective, "analyse_only": True})
    assert not starts_own_clusters({**plans[2][0].effective, "contact_points": "10.0.0.5"})
    assert not starts_own_clusters(plans[0][0].effective)
