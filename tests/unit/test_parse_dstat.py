"""dstat parsers: CSV (0.7.2, 0.7.3, appended runs, pcp-dstat) and console output.

The sidecars describe structure rather than summary figures, so the expected values here are
cells read off the fixture files themselves (line numbers in comments), plus the structure each
sidecar states (runs, groups, time columns, sample counts).
"""

from __future__ import annotations

from functools import partial

import pandas as pd
import pytest
from tests.conftest import public_fixture, public_fixture_files, public_fixture_text
from tests.fuzzing import fuzz_parser, mutated

from cassperf.errors import ConfigError, ParseError
from cassperf.parsers import read_text
from cassperf.parsers.base import ParseResult
from cassperf.parsers.dstat import (COLUMN_COLUMNS, SAMPLE_COLUMNS, parse_dstat_console, parse_dstat_csv,
                                    sniff_console, sniff_csv, unit_for)

SGURJAR = "dstat0.7.2_csv_-t-cdns-tcp_60s_sgurjar.csv"
SCIENTIFIC = "dstat0.7.2_csv_time-v-net_5s_scientific-notation_jschaub30.csv"
APPENDED = "dstat0.7.3_csv_TWO-APPENDED-RUNS_129cpu-columns_bigdatalyn.csv"
THIRTY = "dstat0.7.3_csv_time-v-net_1s_30samples_bigdatalyn.csv"
PCP = "dstat_pcp-dstat-5.0.3_epoch_many_plugins_pkb.csv"
CONSOLE = "dstat_-am_2_7_console_cassandra-node_FRAGMENT_mohanmca.txt"
CSV_FIXTURES = [SGURJAR, SCIENTIFIC, APPENDED, THIRTY, PCP]


network = partial(public_fixture, "network")
text_of = partial(public_fixture_text, "network")


def csv_of(name: str, tz: str | None = None) -> ParseResult:
    path = network(name)
    return parse_dstat_csv(read_text(path), str(path), tz=tz)


def value(samples: pd.DataFrame, sample: int, group: str, metric: str, run: int = 0) -> float:
    hit = samples[(samples["run"] == run) & (samples["sample"] == sample) & (samples["group"] == group)
                  & (samples["metric"] == metric)]
    assert len(hit) == 1, (run, sample, group, metric, len(hit))
    return float(hit["value"].iloc[0])


# file -> (runs, samples per run, header columns per run incl. the time column, time column)
STRUCTURE = {
    SGURJAR: (1, [61], [18], "time"),
    SCIENTIFIC: (1, [88], [22], "time"),
    APPENDED: (2, [30, 69], [21, 29], "time"),
    THIRTY: (1, [30], [21], "time"),
    PCP: (1, [383], [62], "epoch"),
}


@pytest.mark.parametrize("name", CSV_FIXTURES)
def test_csv_structure_runs_samples_and_the_two_row_header(name: str) -> None:
    n_runs, samples_per_run, columns_per_run, time_column = STRUCTURE[name]
    result = csv_of(name)
    assert result.format == "dstat-csv"
    assert (result.complete, result.warnings, result.skipped_lines) == (True, [], 0)
    runs = result.tables["runs"]
    assert runs["samples"].tolist() == samples_per_run
    columns = result.tables["columns"]
    assert list(columns.columns) == list(COLUMN_COLUMNS)
    assert columns.groupby("run").size().tolist() == columns_per_run
    assert columns[columns["unit"] == "time"]["column"].unique().tolist() == [time_column]
    samples = result.tables["samples"]
    assert list(samples.columns) == list(SAMPLE_COLUMNS)
    assert len(samples) == sum(s * (c - 1) for s, c in zip(samples_per_run, columns_per_run, strict=True))
    assert samples.groupby("run")["sample"].nunique().tolist() == samples_per_run
    assert samples.loc[samples["since_boot"], "sample"].unique().tolist() == [0]
    assert len(runs) == n_runs


def test_0_7_2_values_units_and_the_year_from_the_date_row() -> None:
    result = csv_of(SGURJAR)
    s = result.tables["samples"]
    # line 8: 31-01 14:44:21,0.247,0.020,99.730,0.000,0.0,0.004,1046.665,36607.595,0.0,0.0,0.0,74837913600.0,18.0,...
    assert value(s, 0, "total cpu usage", "usr_pct") == 0.247
    assert value(s, 0, "dsk/total", "writ_bytes_s") == 36607.595
    assert value(s, 0, "swap", "free_bytes") == 74837913600.0
    assert value(s, 0, "tcp sockets", "act_count") == 221.0
    # line 9: 31-01 14:45:21,...,41001069.650,39000197.983,...
    assert value(s, 1, "net/total", "recv_bytes_s") == 41001069.650
    assert value(s, 1, "net/total", "send_bytes_s") == 39000197.983
    times = s.drop_duplicates("sample")
    assert times["time_local"].iloc[0] == pd.Timestamp("2019-01-31 14:44:21")     # Date: 31 Jan 2019
    assert times["time_local"].iloc[-1] == pd.Timestamp("2019-01-31 15:44:21")
    assert times["time_s"].iloc[-1] == 3600.0
    assert times["time"].isna().all()                           # EST is not resolved without tz=
    run = result.tables["runs"].iloc[0]
    assert (run.tool, run.tool_version, run.host, run.user) == ("Dstat", "0.7.2", "myhost1", "myuser1")
    assert run.date == "31 Jan 2019 14:44:21 EST"


def test_tz_turns_the_local_wall_clock_into_utc() -> None:
    s = csv_of(SGURJAR, tz="America/New_York").tables["samples"]
    assert s["time"].iloc[0] == pd.Timestamp("2019-01-31 19:44:21", tz="UTC")     # 14:44:21 EST


def test_an_unknown_time_zone_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="unknown time zone 'Mars/Olympus'"):
        csv_of(SGURJAR, tz="Mars/Olympus")


def test_scientific_notation_cells() -> None:
    s = csv_of(SCIENTIFIC).tables["samples"]
    # line 8: 16-06 11:06:42,0.000,0.0,0.591,21852717056.0,1340276736.0,2.05011812352e+11,8.68834476032e+11,...
    assert value(s, 0, "memory usage", "cach_bytes") == 2.05011812352e+11
    assert value(s, 0, "memory usage", "free_bytes") == 8.68834476032e+11
    assert value(s, 0, "procs", "new_per_s") == 0.591
    # line 11: 16-06 11:06:57,22.400,0.200,65.0,1.18025617408e+11,...,45341501.600
    assert value(s, 3, "memory usage", "used_bytes") == 1.18025617408e+11
    assert value(s, 3, "net/total", "send_bytes_s") == 45341501.600


def test_two_appended_runs_split_with_their_own_headers() -> None:
    result = csv_of(APPENDED)
    runs = result.tables["runs"]
    assert runs["first_line"].tolist() == [1, 39]                # run 2 starts at its "Host:" row
    assert runs["cmdline"].iloc[1].startswith("dstat -t -v -C 0,1,2,")
    assert runs["date"].tolist() == ["02 Aug 2019 12:26:38 CST", "05 Aug 2019 11:37:43 CST"]
    columns = result.tables["columns"]
    groups_1 = columns[columns["run"] == 1]["group"].unique().tolist()
    assert groups_1 == ["system", "procs", "memory usage", "paging", "dsk/total", "cpu0 usage", "cpu1 usage",
                        "total cpu usage"]                        # no net in run 2
    assert "net/total" in columns[columns["run"] == 0]["group"].tolist()
    # "cpu0 usage:usr" is stored as group "cpu0 usage", column "usr"
    assert columns[(columns["run"] == 1) & (columns["group"] == "cpu0 usage")]["column"].tolist() == \
        ["usr", "sys", "idl", "wai", "stl"]
    s = result.tables["samples"]
    # line 43: 05-08 11:37:43,0,0,3.207,...,0.496,0.424,98.626,0.454,0,0.585,0.428,98.637,0.350,0,0.540,...
    assert value(s, 0, "cpu0 usage", "usr_pct", run=1) == 0.496
    assert value(s, 0, "cpu1 usage", "wai_pct", run=1) == 0.350
    assert value(s, 0, "total cpu usage", "usr_pct", run=1) == 0.540
    assert value(s, 0, "procs", "new_per_s", run=1) == 3.207
    first = s[s["run"] == 1].drop_duplicates("sample")["time_local"].iloc[0]
    assert first == pd.Timestamp("2019-08-05 11:37:43")
    assert s.loc[s["run"] == 1, "since_boot"].sum() == 28        # one row (28 metrics) since boot per run


def test_thirty_samples_file_has_thirty_rows() -> None:
    # The sidecar says "31 data rows"; the file holds 30 (12:26:38 .. 12:27:07, dstat ... 1 30).
    s = csv_of(THIRTY).tables["samples"].drop_duplicates("sample")
    assert len(s) == 30
    assert (s["time_local"].iloc[0], s["time_local"].iloc[-1]) == (pd.Timestamp("2019-08-02 12:26:38"),
                                                                   pd.Timestamp("2019-08-02 12:27:07"))


def test_pcp_dstat_epoch_gives_utc_times_and_all_plugin_units() -> None:
    result = csv_of(PCP)
    s = result.tables["samples"]
    times = s.drop_duplicates("sample")["time"]
    assert times.iloc[0] == pd.Timestamp("2016-10-05 23:04:53.291", tz="UTC")   # 1475708693.291, Date row 23:04:53 UTC
    assert times.iloc[-1] == pd.Timestamp("2016-10-05 23:11:15.292", tz="UTC")  # 1475709075.292
    assert s["time_local"].isna().all()
    assert value(s, 0, "dsk/total", "read_bytes_s") == 72741.484
    assert value(s, 0, "io/sda", "writ_req_s") == 6.776
    assert value(s, 0, "memory usage", "used_bytes") == 2632093696.0
    assert value(s, 0, "interrupts", "25_per_s") == 3481.518
    assert value(s, 0, "load avg", "15m") == 0.070
    assert value(s, 0, "virtual memory", "free_per_s") == 3256.159
    assert value(s, 4, "net/total", "recv_bytes_s") == 34708.0
    units = result.tables["columns"].set_index(["group", "column"])["unit"]
    assert units[("unix sockets", "act")] == "count"
    assert units[("load avg", "1m")] == ""
    assert result.tables["runs"].iloc[0].tool == "pcp-dstat"


def test_unit_names() -> None:
    assert [unit_for(g, c) for g, c in [("net/total", "recv"), ("dsk/sda", "read"), ("io/total", "read"),
                                        ("total cpu usage", "usr"), ("cpu12 usage", "stl"), ("system", "csw"),
                                        ("procs", "run"), ("procs", "new"), ("memory usage", "cach"),
                                        ("swap", "used"), ("paging", "in"), ("my plugin", "x")]] == \
        ["bytes_s", "bytes_s", "req_s", "pct", "pct", "per_s", "count", "per_s", "bytes", "bytes", "bytes_s", None]


# ---------------------------------------------------------------- console

def test_console_values_with_display_units() -> None:
    path = network(CONSOLE)
    result = parse_dstat_console(read_text(path), str(path))
    assert result.format == "dstat-console"
    assert result.complete is True
    assert result.warnings == []
    assert result.skipped_lines == 2                            # the two shell prompt lines
    s = result.tables["samples"]
    assert s["sample"].nunique() == 7 and len(s) == 7 * 17
    #  3   6  89   2   0|3412k  112k|   0     0 |   0     0 | 505  1443 | 587M 6286M  100M  935M
    assert value(s, 0, "total cpu usage", "usr_pct") == 3.0
    assert value(s, 0, "dsk/total", "read_bytes_s") == 3412 * 1024
    assert value(s, 0, "dsk/total", "writ_bytes_s") == 112 * 1024
    assert value(s, 0, "system", "csw_per_s") == 1443.0
    assert value(s, 0, "memory usage", "free_bytes") == 6286 * 1024 ** 2
    #  1   1  98   0   0|   0     0 |  66B  722B|   0     0 | 506  1261 | 587M 6286M  100M  935M
    assert value(s, 1, "net/total", "send_bytes_s") == 722.0
    #  0   0 100   0   0|   0  8192B|  66B  418B| ...
    assert value(s, 6, "dsk/total", "writ_bytes_s") == 8192.0
    assert s.loc[s["since_boot"], "sample"].unique().tolist() == [0]


def test_console_kilo_of_a_count_column_is_1000() -> None:
    text = text_of(CONSOLE).replace(" 505  1443 |", " 505    12k|")
    s = parse_dstat_console(text, "k.txt").tables["samples"]
    assert value(s, 0, "system", "csw_per_s") == 12000.0


def test_console_unreadable_cell_is_nan_and_a_warning() -> None:
    text = text_of(CONSOLE).replace("3412k", "34?2k")
    result = parse_dstat_console(text, "bad.txt")
    assert len(result.warnings) == 1 and "'34?2k'" in result.warnings[0].expected
    assert pd.isna(value(result.tables["samples"], 0, "dsk/total", "read_bytes_s"))


def test_console_parser_rejects_csv_and_csv_parser_rejects_console() -> None:
    with pytest.raises(ParseError, match="dashed title line"):
        parse_dstat_console(text_of(SGURJAR), "x.csv")
    with pytest.raises(ParseError, match="two-row header") as err:
        parse_dstat_csv(text_of(CONSOLE), "x.txt")
    assert err.value.line_no == 1


# ---------------------------------------------------------------- bad CSV input

def test_empty_and_binary_input_are_parse_errors() -> None:
    with pytest.raises(ParseError, match="input is empty"):
        parse_dstat_csv("\n \n", "empty.csv")
    with pytest.raises(ParseError, match="binary"):
        parse_dstat_csv('"Dstat 0.7.2 CSV output"\n\x00\x00', "bin.csv")
    with pytest.raises(ParseError, match="input is empty"):
        parse_dstat_console("", "empty.txt")


def test_another_tools_output_is_a_parse_error() -> None:
    with pytest.raises(ParseError) as err:
        parse_dstat_csv(text_of("ping_linux_iputils_pkb.out"), "ping.out")
    assert err.value.line_no == 1


def test_a_file_cut_inside_its_last_row_is_partial() -> None:
    text = text_of(THIRTY).rstrip("\n")
    cut = text[:text.rindex(",") - 10]
    result = parse_dstat_csv(cut, "cut.csv")
    assert result.complete is False
    assert len(result.warnings) == 1
    assert result.warnings[0].line_no == 36
    assert "truncated" in result.warnings[0].expected
    assert result.tables["samples"]["sample"].nunique() == 29


def test_a_garbage_line_in_the_middle_is_skipped_counted_and_flagged() -> None:
    lines = text_of(THIRTY).splitlines(keepends=True)
    lines.insert(15, "garbage,1,2\n")
    result = parse_dstat_csv("".join(lines), "garbage.csv")
    assert result.complete is True
    assert result.skipped_lines == 1
    assert [w.line_no for w in result.warnings] == [16]
    assert result.tables["samples"]["sample"].nunique() == 30


def test_a_cell_that_is_not_a_number_is_nan_and_a_warning() -> None:
    text = text_of(THIRTY).replace("02-08 12:26:39,0,0,1,1101815808,", "02-08 12:26:39,0,0,x1,1101815808,")
    result = parse_dstat_csv(text, "cell.csv")
    assert len(result.warnings) == 1 and "'x1'" in result.warnings[0].expected
    assert result.warnings[0].line_no == 8
    assert pd.isna(value(result.tables["samples"], 1, "procs", "new_per_s"))


def test_header_without_samples_is_partial() -> None:
    head = "".join(text_of(THIRTY).splitlines(keepends=True)[:6])
    result = parse_dstat_csv(head, "head.csv")
    assert result.complete is False
    assert "at least one sample row" in result.warnings[0].expected
    assert result.tables["samples"].empty


def test_unknown_group_keeps_raw_names_and_warns_once() -> None:
    text = text_of(THIRTY).replace('"net/total",', '"my plugin",')
    result = parse_dstat_csv(text, "plugin.csv")
    assert len(result.warnings) == 1 and "'my plugin' is unknown" in result.warnings[0].expected
    columns = result.tables["columns"]
    assert columns[columns["group"] == "my plugin"]["metric"].tolist() == ["recv", "send"]


def test_an_epoch_beyond_the_datetime_range_is_nat_and_a_warning() -> None:
    result = parse_dstat_csv('"epoch","load avg"\n"epoch","1m"\n9999999999.999999999,0.5\n', "far.csv")
    assert [w.line_no for w in result.warnings] == [3]
    samples = result.tables["samples"]
    assert samples["time"].isna().all() and samples["value"].tolist() == [0.5]


# ---------------------------------------------------------------- detection

def test_sniffers_claim_their_own_fixtures_and_nothing_else() -> None:
    for path in public_fixture_files():
        head = read_text(path)[:65536]
        assert sniff_csv(head) == (path.name.startswith("dstat") and path.suffix == ".csv"), path
        assert sniff_console(head) == (path.name == CONSOLE), path


# ---------------------------------------------------------------- fuzz



def _head(name: str, n: int = 16) -> str:
    """The first n lines: every header shape, a few samples (keeps each example fast)."""
    return "".join(text_of(name).splitlines(keepends=True)[:n])


def test_fuzz_mutated_csv_fixtures_give_a_result_or_a_parse_error() -> None:
    appended = text_of(APPENDED).splitlines(keepends=True)
    texts = [_head(n) for n in CSV_FIXTURES] + ["".join(appended[28:48])]   # across the run boundary

    def check(result: ParseResult) -> None:
        assert list(result.tables["samples"].columns) == list(SAMPLE_COLUMNS)

    tried = fuzz_parser(parse_dstat_csv, mutated(texts), "fuzz.csv", check)
    print(f"dstat csv fuzz: {tried} inputs tried")
    assert tried


def test_fuzz_mutated_console_fixture_gives_a_result_or_a_parse_error() -> None:
    texts = [text_of(CONSOLE)]

    def check(result: ParseResult) -> None:
        assert list(result.tables["samples"].columns) == list(SAMPLE_COLUMNS)

    tried = fuzz_parser(parse_dstat_console, mutated(texts), "fuzz.txt", check)
    print(f"dstat console fuzz: {tried} inputs tried")
    assert tried
