"""The two contracts: a study's plan (Study) names its analysis (Analysis), whose figures come from
one builder with the study's hooks; the report pipeline and the studies know nothing of each other."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import pandas as pd
import pytest

import cassperf
from cassperf.analysis.windows import Window
from cassperf.errors import ConfigError
from cassperf.experiments.analysis import Analysis, Section
from cassperf.experiments.outcome import StudyOutcome
from cassperf.experiments.study import Study
from tests.unit.analysis_runs import shaped_run
from tests.unit.test_analysis_imports import imported_names

LIB = Path(cassperf.__file__).parent


def _imports_of(package: str) -> set[tuple[str, str]]:
    return {(f.relative_to(LIB).as_posix(), n) for f in sorted((LIB / package).rglob("*.py"))
            for n in imported_names(f)}


@pytest.mark.parametrize(("package", "other"), [("report", "experiments"), ("experiments", "report")])
def test_the_report_pipeline_and_the_studies_import_nothing_of_each_other(package: str, other: str) -> None:
    assert [(f, n) for f, n in _imports_of(package) if n.startswith(f"cassperf.{other}")] == []


class Doubled(Analysis):
    """Figures of every mutation as 'write', over the first half of each run, with a column of its own."""

    OP_GROUPS = {"write": ("write", "delete")}

    def window(self, run: Any) -> Window:
        return Window(0.0, self.study.run_s / 2, "first half")

    def extra(self, run: Any, row: Any) -> dict[str, Any]:
        return {"twice_rate_ops_s": 2 * row["rate_ops_s"], "arm_again": run.labels["arm"]}

    def claims(self, outcome: StudyOutcome, figures: pd.DataFrame) -> pd.DataFrame:
        return pd.DataFrame({"claim": ["two runs"], "verdict": ["holds" if len(figures) == 2 else "not shown"]})

    def sections(self, outcome: StudyOutcome, figures: pd.DataFrame) -> dict[str, Any]:
        return {"rates": lambda: Section("Rates", "", [figures[["arm", "rate_ops_s"]]])}


@dataclass(frozen=True)
class Tiny(Study):
    name: ClassVar[str] = "tiny"
    ANALYSIS: ClassVar[Any] = Doubled
    run_s: int = 6
    interval_s: float = 0.25


def test_an_analysis_gets_its_studys_parameters_and_its_hooks_shape_the_figures(tmp_path: Path) -> None:
    runs = [shaped_run([100, 100, 100, 300, 300, 300], run_id=f"r{b}", labels={"arm": "a", "block": str(b)})
            for b in (1, 2)]
    study = Tiny(experiment="unit")
    found = study.analysis().conclude(StudyOutcome(study, {}, runs))
    figs = found.figures
    assert figs["op"].tolist() == ["write", "write"]
    assert figs["rate_ops_s"].tolist() == [100.0, 100.0]            # the first 3 s only, as the hook said
    assert figs["window_note"].tolist() == ["the first half window 0.0-3.0 s"] * 2
    assert figs["twice_rate_ops_s"].tolist() == [200.0, 200.0] and figs["arm_again"].tolist() == ["a", "a"]
    assert found.claims["verdict"].tolist() == ["holds"]
    assert found.sections["rates"]().title == "Rates"
    # runs with no folder (nothing recorded): no profile, one line why, and no claim says where time went
    assert found.profiles is not None and found.profiles.empty
    assert found.profiles.notes == ["no CPU profiles: no measured run of this study was recorded here"]
    assert found.claims["why"].tolist() == [""]
    # runs stored without a profile (a stress tool's, 02's clients per DC): one line that says so
    folders = {}
    for run in runs:
        folder = tmp_path / run.run_id
        folder.mkdir()
        (folder / "manifest.json").write_text(json.dumps({"schema_version": 1, "run_id": run.run_id}))
        folders[run.run_id] = folder
    unprofiled = study.analysis().conclude(StudyOutcome(study, {}, runs, folders=folders)).profiles
    assert unprofiled.empty and unprofiled.notes == [
        "no CPU profiles: the runs were recorded without one (runs of cassandra-stress or latte, and 02's clients "
        "per DC, are not profiled)"]
    off = Tiny(experiment="unit", profile=False)
    assert off.analysis().conclude(StudyOutcome(off, {}, runs)).profiles.notes == [
        "no CPU profiles: the study ran with profile=False"]


def test_a_study_names_its_analysis_by_class_or_by_module_and_name() -> None:
    class ByName(Tiny):
        ANALYSIS: ClassVar[Any] = "tests.unit.test_study_contract:Doubled"

    assert type(ByName(experiment="unit").analysis()) is Doubled
    assert type(Tiny(experiment="unit").analysis()) is Doubled


def test_a_study_without_an_analysis_says_so_in_one_line() -> None:
    class Nameless(Tiny):
        ANALYSIS: ClassVar[Any] = None

    with pytest.raises(ConfigError, match=r"^Nameless.ANALYSIS=None: expected a subclass of "
                                          r"cassperf.experiments.analysis.Analysis \(or 'module:Class' naming one\)$"):
        Nameless(experiment="unit").analysis()


def test_every_published_study_names_an_analysis_on_the_contract() -> None:
    from cassperf.experiments.deployment import DeploymentStudy
    from cassperf.experiments.garbagecollect import GCStudy
    from cassperf.experiments.multidc import MultiDCStudy
    from cassperf.experiments.replication_factor import RFStudy
    from cassperf.experiments.storage_cache import StorageStudy

    for study in (RFStudy(), MultiDCStudy(), GCStudy(), DeploymentStudy(), StorageStudy()):
        analysis = study.analysis()
        assert isinstance(analysis, Analysis) and analysis.study is study
        assert type(analysis).claims is not Analysis.claims, type(analysis).__name__
