"""Your question's plan (cassperf.experiments.question): arms and workloads as the user writes them
become exact settings, specs and arms; bad text is one line before any cluster starts; the
settings check says whether each arm's table and node were what it asked; and the analysis
decides each claim on the runs of the arms it names."""

from __future__ import annotations

import dataclasses

import pytest

from cassperf.errors import ConfigError
from cassperf.experiments.outcome import StudyOutcome
from cassperf.experiments.question import QuestionStudy
from cassperf.experiments.question_arms import Setting, parse_setting, took
from cassperf.experiments.study import Calibrated
from cassperf.workload.spec import Compaction, Compression, Population, Replication
from tests.unit.analysis_runs import shaped_run


def test_an_arm_is_its_name_and_options() -> None:
    assert parse_setting("LCS: compaction LCS( sstable_size_in_mb = 160, fanout_size=10 ), "
                         "compression ZSTD(chunk_length_in_kb=16)") == Setting(
        "LCS", Compaction("LeveledCompactionStrategy", (("sstable_size_in_mb", "160"), ("fanout_size", "10"))),
        Compression("ZstdCompressor", 16))
    assert parse_setting("v4.1: cassandra 4.1.10 jvm -XX:+UseG1GC, jvm -XX:MaxGCPauseMillis=50") == Setting(
        "v4.1", None, None, "4.1.10", ("-XX:+UseG1GC", "-XX:MaxGCPauseMillis=50"))
    assert parse_setting("default:") == Setting("default")


def test_node_options_make_a_context_of_their_own_and_table_options_a_keyspace_of_their_own() -> None:
    study = QuestionStudy(arm_options=("a: compaction STCS", "b: compaction STCS, jvm -XX:+UseSerialGC",
                                       "c: compaction LCS, cassandra 4.1.10"), claims=())
    a, b, c = study.parsed_arms
    assert (a.context, b.context, c.context) == ("", "node jvm -XX:+UseSerialGC", "node cassandra 4.1.10")
    assert study.keyspace(a)[:-6] == "q_a_" and study.keyspace(a)[-6:] == study.keyspace(b)[-6:]
    assert study.keyspace(a)[-6:] != study.keyspace(c)[-6:]
    assert [p.context for p in study.preparations()] == [a.context, b.context, c.context]


ARM_FORM = ("expected 'NAME: OPTION VALUE, ...' with OPTION VALUE one of compaction STRATEGY[(key=value,...)], "
            "compression COMPRESSOR[(chunk_length_in_kb=N)], cassandra VERSION, jvm -OPTION, "
            "e.g. 'LCS: compaction LCS(sstable_size_in_mb=160), compression LZ4'")


@pytest.mark.parametrize("text, what", [
    ("compaction LCS", "no arm name before ':'"),
    ("LCS: compaction LCS, colour blue", "'colour' is not an option"),
    ("LCS: compaction", "compaction needs a value, e.g. 'LCS(sstable_size_in_mb=160)'"),
    ("LCS: compaction LCS, compaction STCS", "compaction is given twice"),
    ("LCS: compaction LCX", "compaction strategy 'LCX' is not one of LeveledCompactionStrategy, "
                            "SizeTieredCompactionStrategy, UnifiedCompactionStrategy, TimeWindowCompactionStrategy, "
                            "LCS, STCS, UCS, TWCS (did you mean LCS?)"),
    ("LZ4: compression LZ4(chunk=16)", "'compression LZ4(chunk=16)': a compressor takes only (chunk_length_in_kb=N)"),
    ("old: cassandra 3.11.16", "'cassandra 3.11.16': not a line cassperf runs locally (5.0.x, 4.1.x, 4.0.x)"),
    ("old: cassandra five", "'cassandra five': a Cassandra version is like 4.1.10"),
    ("gc: jvm UseZGC", "'jvm UseZGC': a JVM option starts with '-', e.g. 'jvm -XX:+UseZGC'"),
])
def test_a_bad_arm_is_one_line_naming_it(text: str, what: str) -> None:
    with pytest.raises(ConfigError) as err:
        parse_setting(text)
    assert str(err.value) == f"arm_options: {text!r}: {what}; {ARM_FORM}"


def test_a_workload_is_a_command_line_the_study_fills_in() -> None:
    study = QuestionStudy(workloads=("write", "heavy: read cl=ONE n=1000 -rate threads=64 -pop dist=gaussian(1..500)",
                                     "mixed ratio(write=1,read=3) -col n=FIXED(1) size=FIXED(100)"), claims=(),
                          rows=1000, run_s=5, interval_s=0.25)
    write, heavy, mixed = study.parsed_workloads
    assert (write.name, write.calibrated, write.op) == ("write", True, "write")
    assert (write.spec.duration, write.spec.n, write.spec.cl, write.spec.population, write.spec.column_size,
            write.spec.interval_s, write.spec.replication) == (
        5, None, "LOCAL_ONE", Population("uniform", 1, 1000), 818, 0.25, Replication.network_topology({"dc1": 1}))
    assert (heavy.name, heavy.calibrated, heavy.spec.concurrency, heavy.spec.cl, heavy.spec.duration) == (
        "heavy", False, 64, "ONE", 5)
    assert heavy.spec.population == Population("gaussian", 1, 500)
    assert (mixed.name, mixed.op, mixed.spec.ratio.read, mixed.spec.column_count, mixed.spec.column_size) == (
        "mixed", "read", 3, 1, 100)
    arms = study.arms(Calibrated(((1, 100.0), (16, 900.0)), 16, 900.0))
    assert [(a.name, a.spec.concurrency, a.spec.keyspace[:6], a.spec.compaction.strategy[:4]) for a in arms[:3]] == [
        ("STCS write", 8, "q_stcs", "Size"), ("STCS heavy", 64, "q_stcs", "Size"), ("STCS mixed", 8, "q_stcs", "Size")]
    assert arms[3].labels == {"setting": "LCS", "compaction": "LeveledCompactionStrategy", "workload": "write",
                              "op": "write", "concurrency": "8"}
    assert study.aa_arm(arms) == "STCS write"


@pytest.mark.parametrize("workload, what", [
    ("delete", "operation 'delete' is not one of write, read, mixed (cassandra-stress user / counter commands are "
               "not modelled by WorkloadSpec)"),
    ("read -node 10.0.0.1", "-node is not taken: the cluster is the study's"),
    ("read -rate auto", "-rate 'auto': auto thread ramps are not modelled; give threads=N"),
])
def test_a_bad_workload_is_one_line_naming_it(workload: str, what: str) -> None:
    with pytest.raises(ConfigError) as err:
        QuestionStudy(workloads=(workload,), claims=())
    assert str(err.value) == (f"workloads: {workload!r}: {what}; e.g. 'read', or 'heavy: read cl=ONE "
                              f"-rate threads=64'")


def test_table_options_in_a_workload_are_the_arms() -> None:
    with pytest.raises(ConfigError, match=r"^workloads: 'read -schema compaction\(strategy=LCS\)': -schema keyspace=, "
                                          r"compaction\(\.\.\.\) and compression= are the arms'"):
        QuestionStudy(workloads=("read -schema compaction(strategy=LCS)",), claims=())


def test_bad_parameters_stop_the_study_before_anything_runs() -> None:
    with pytest.raises(ConfigError, match=r"^claim 'LCS writes quicker than STCS': expected "):
        QuestionStudy(claims=("LCS writes quicker than STCS",))
    with pytest.raises(ConfigError, match=r"^arm_options=\['LCS: compaction LCS'\]: a question compares at least 2 "):
        QuestionStudy(arm_options=("LCS: compaction LCS",), claims=())
    with pytest.raises(ConfigError, match=r"^arm_options: arms A-1 and a_1 would write one keyspace \(q_a_1_"):
        QuestionStudy(arm_options=("A-1: compaction LCS", "a_1: compaction LCS"), claims=())
    with pytest.raises(ConfigError, match=r"^workloads: 'read' names two of them; give each its own name$"):
        QuestionStudy(workloads=("read", "read cl=ONE"), claims=())
    with pytest.raises(ConfigError, match=r"^arms b set node options \(cassandra, jvm\): they need a cluster of their "
                                          r"own, which the workbook makes only embedded"):
        QuestionStudy(arm_options=("a: compaction STCS", "b: jvm -XX:+UseSerialGC"), claims=()).check_parameters(
            {"contact_points": "10.0.0.5"})


def test_the_settings_check_compares_what_was_asked_with_what_the_cluster_reports() -> None:
    lcs = parse_setting("LCS: compaction LCS(sstable_size_in_mb=160), compression LZ4(chunk_length_in_kb=16)")
    found = {"measured_compaction": "class=LeveledCompactionStrategy, max_threshold=32, sstable_size_in_mb=160",
             "measured_compression": "chunk_length_in_kb=16, class=LZ4Compressor", "measured_cassandra": "5.0.6"}
    assert took(lcs, found) == (True, "LCS: compaction LeveledCompactionStrategy, compression chunk_length_in_kb=16, "
                                      "class=LZ4Compressor")
    assert took(lcs, {**found, "measured_compaction": "class=LeveledCompactionStrategy, sstable_size_in_mb=80"})[0] \
        is False
    node = parse_setting("v4: cassandra 4.1.10, jvm -XX:+UseSerialGC")
    assert took(node, {"measured_cassandra": "4.1.10", "measured_jvm": "-Xmx512M -XX:+UseSerialGC"}) == (
        True, "v4: compaction unknown, compression none, Cassandra 4.1.10, JVM options found: -XX:+UseSerialGC")
    assert took(node, {"measured_cassandra": "5.0.6", "measured_jvm": "-Xmx512M"})[0] is False


def _outcome(study: QuestionStudy, lcs_write: float, baseline: list | None = None) -> StudyOutcome:
    """Three blocks of every arm (and the A/A twin): STCS at 1000 ops/s, LCS writes at lcs_write of it."""
    runs = []
    names = [a.name for a in study.arms(None)] + ["STCS write (A/A)"]
    for block, level in ((1, 1.0), (2, 1.1), (3, 0.9)):
        for name in names:
            scale = lcs_write if name == "LCS write" else 1.0
            counts = [int(1000 * level * scale * (1 + 0.02 * ((i * 7 + block + len(name)) % 5 - 2)))
                      for i in range(40)]
            op = "write" if "write" in name else "read"
            labels = {"arm": name, "block": str(block), **({"aa": "twin"} if "(A/A)" in name else {}),
                      **next(a.labels for a in study.arms(None) if name.startswith(a.name))}
            runs.append(shaped_run(counts, 1.0 / scale, op=op, labels=labels, run_id=f"{name}-{block}"))
    return StudyOutcome(study, {"baseline": baseline or []}, runs)


def test_the_analysis_decides_each_claim_on_the_arms_it_names() -> None:
    study = QuestionStudy(arm_options=("STCS: compaction STCS", "LCS: compaction LCS"),
                          claims=("LCS writes at least 10% slower than STCS", "LCS within ±5% of STCS for reads"))
    found = study.analysis().conclude(_outcome(study, 0.7))
    table = found.claims
    assert table["claim"].tolist() == ["A/A control: 'STCS write' against its identical twin", *study.claims]
    assert table["verdict"].tolist() == ["holds", "holds", "holds"]
    assert (table["arm_a"][1], table["arm_b"][1]) == ("STCS write", "LCS write")
    assert table["change_pct"][1] == pytest.approx(-30.0, abs=0.5)
    assert table["check"].tolist() == ["", "", ""]            # no baseline (imported logs): no check
    assert set(found.sections) == {"throughput", "latency", "settings"}
    assert found.sections["throughput"]().items and found.sections["latency"]().items


def test_a_claim_whose_arm_did_not_take_is_not_tested_here() -> None:
    study = QuestionStudy(arm_options=("STCS: compaction STCS", "LCS: compaction LCS"),
                          claims=("LCS writes slower than STCS",))
    baseline = [{"utc": "x", "settings": [
        {"setting": "STCS", "measured_compaction": "class=SizeTieredCompactionStrategy", "measured_compression": ""},
        {"setting": "LCS", "measured_compaction": "class=SizeTieredCompactionStrategy", "measured_compression": ""}]}]
    table = study.analysis().conclude(_outcome(study, 0.7, baseline)).claims
    assert table["verdict"].tolist() == ["holds", "not tested here"]
    assert table["reason"][1] == ("the arms' settings did not take: STCS: compaction SizeTieredCompactionStrategy, "
                                  "compression none; LCS: compaction SizeTieredCompactionStrategy, compression none")


def test_an_imported_run_gets_its_arms_labels_from_the_plan() -> None:
    study = QuestionStudy()
    assert study.arm_labels({"arm": "LCS read", "study": "your-question"}) == {
        "setting": "LCS", "compaction": "LeveledCompactionStrategy", "workload": "read", "op": "read",
        "concurrency": "16", "arm": "LCS read", "study": "your-question"}
    assert study.arm_labels({"arm": "nope"}) == {"arm": "nope"}


def test_the_plan_is_the_arms_and_workloads_not_the_claims_on_them() -> None:
    study = QuestionStudy()
    assert dataclasses.replace(study, claims=study.claims[:1], repeats=9).plan_key() == study.plan_key()
    assert dataclasses.replace(study, workloads=("write", "read cl=ONE")).plan_key() != study.plan_key()
