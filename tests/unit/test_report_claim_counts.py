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
