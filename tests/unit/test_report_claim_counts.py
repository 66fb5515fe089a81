"""The index counts a study's findings by verdict, the A/A control aside (it is no finding)."""

from __future__ import annotations

import nbformat

from cassperf.report.pipeline import claim_counts


def test_the_index_counts_findings_not_the_aa_control(tmp_path) -> None:
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("")
    cell.outputs = [nbformat.v4.new_output("display_data", data={"application/json": {"claims": [
        {"claim": "A/A control: 'write rf=1' against its identical twin", "verdict": "holds"},
        {"claim": "Writes at RF 1 are much faster", "verdict": "holds"},
        {"claim": "RF 2 and RF 3 write at about the same rate", "verdict": "not shown"},
        {"claim": "A 4 KiB chunk reads slower", "verdict": "does not hold"}]}})]
    nb.cells = [cell]
    path = tmp_path / "01.ipynb"
    nbformat.write(nb, path)
    assert claim_counts(path) == {"holds": 1, "not shown": 1, "does not hold": 1}
    assert claim_counts(tmp_path / "missing.ipynb") is None


def test_findings_withheld_by_a_significant_aa_control_are_counted_as_such(tmp_path) -> None:
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("")
    withheld = "withheld: the A/A control differs significantly (-11.4%, p = 0.045): this machine's noise is beyond"
    cell.outputs = [nbformat.v4.new_output("display_data", data={"application/json": {"claims": [
        {"claim": "A/A control: 'disk 64 KiB' against its identical twin", "verdict": "does not hold"},
        {"claim": "A 4 KiB chunk reads slower", "verdict": "not shown", "reason": withheld},
        {"claim": "128 KiB chunks may read slightly faster", "verdict": "not shown",
         "reason": "not addressed by these parameters: needs 128 KiB"}]}})]
    nb.cells = [cell]
    path = tmp_path / "05.ipynb"
    nbformat.write(nb, path)
    assert claim_counts(path) == {"not shown": 2, "withheld": 1}


def test_the_index_shows_a_title_s_code_spans_as_code() -> None:
    from cassperf.report.index import ReportRecord, _row

    record = ReportRecord("03-garbagecollect-impact.ipynb", "`nodetool garbagecollect` on a live <LCS> table",
                          "03.html", True, None, 208.0, "local", 25, "cassperf-dc1_3", 0.0, 2_400_000,
                          "2026-11-26T05:09:00Z", "a14a9a1")
    assert '<a href="03.html"><code>nodetool garbagecollect</code> on a live &lt;LCS&gt; table</a>' in _row(record)
