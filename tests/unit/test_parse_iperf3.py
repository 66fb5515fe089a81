"""iperf3 --json parser: the end summary iperf3 printed, every interval, and what bad input gets.

Policy under test for truncated JSON: a flagged partial result (complete=False, a warning with
the line and column where the JSON stops), keeping only members that decoded whole.
"""

from __future__ import annotations

import json
from functools import partial

import pandas as pd
import pytest
from tests.conftest import public_fixture, public_fixture_files, public_fixture_text
from tests.fuzzing import fuzz_parser, mutated

from cassperf.errors import ParseError
from cassperf.parsers import read_text
from cassperf.parsers.base import ParseResult
from cassperf.parsers.iperf3 import INTERVAL_COLUMNS, STREAM_COLUMNS, SUMMARY_COLUMNS, parse_iperf3, sniff

COMPLETE = "iperf3.9_json_tcp_10s_omit3_gcp-to-ibm_cloudpilot.json"
TRUNCATED = "iperf3.9_json_TRUNCATED_10KB-transfer_cloudpilot.json"


network = partial(public_fixture, "network")
text_of = partial(public_fixture_text, "network")


def parse_fixture(name: str) -> ParseResult:
    path = network(name)
    return parse_iperf3(read_text(path), str(path))


# ---------------------------------------------------------------- the complete run

def test_summary_equals_the_end_block_the_sidecar_quotes() -> None:
    result = parse_fixture(COMPLETE)
    assert result.format == "iperf3-json"
    assert (result.complete, result.warnings, result.skipped_lines) == (True, [], 0)
    summary = result.tables["summary"]
    assert len(summary) == 1
    row = summary.iloc[0]
    # sidecar: sum_sent.bits_per_second 50331874.49, sum_received 50989560.86, retransmits 1475,
    # cpu host_total 4.23 %
    assert row.sent_bits_per_second == pytest.approx(50331874.49, abs=0.005)
    assert row.received_bits_per_second == pytest.approx(50989560.86, abs=0.005)
    assert row.retransmits == 1475
    assert row.cpu_host_total_pct == pytest.approx(4.23, abs=0.005)
    assert (row.protocol, row.streams, row.duration_s, row.omit_s) == ("TCP", 1, 10.0, 3.0)
    assert (row.sent_bytes, row.received_bytes) == (62914560, 65608064)
    assert (row.sender_tcp_congestion, row.receiver_tcp_congestion) == ("cubic", "cubic")
    assert (row.version, row.remote_host, row.remote_port) == ("iperf 3.9", "168.1.194.92", 5500)
    assert row.timestamp == pd.Timestamp("2021-08-02 15:20:03", tz="UTC")
    assert row.target_bytes is pd.NA                         # time-limited test (-t 10)
    assert bool(row.complete) is True


def test_the_exact_floats_iperf3_wrote_are_kept() -> None:
    doc = json.loads(text_of(COMPLETE))
    row = parse_fixture(COMPLETE).tables["summary"].iloc[0]
    assert row.sent_bits_per_second == doc["end"]["sum_sent"]["bits_per_second"]
    assert row.cpu_remote_system_pct == doc["end"]["cpu_utilization_percent"]["remote_system"]


def test_intervals_one_row_per_stream_and_sum_with_the_omitted_warmup_flagged() -> None:
    intervals = parse_fixture(COMPLETE).tables["intervals"]
    assert list(intervals.columns) == list(INTERVAL_COLUMNS)
    assert len(intervals) == 26                               # 13 intervals x (stream 5 + sum)
    sums = intervals[intervals["stream"] == "sum"]
    assert sums["omitted"].tolist() == [True] * 3 + [False] * 10
    assert int(sums.loc[~sums["omitted"], "bytes"].sum()) == 62914560      # == end.sum_sent.bytes
    first = intervals.iloc[0]
    assert (first.stream, first.start_s, first.end_s, first.bytes) == ("5", 0.0, 1.0002, 153472)
    assert first.bits_per_second == 1227530.4531702495
    assert (first.retransmits, first.snd_cwnd_bytes, first.pmtu_bytes) == (0, 56320, 1460)
    assert first.rtt_ms == 293.307 and first.rttvar_ms == 1.513             # 293307 us, 1513 us
    assert sums["retransmits"].sum() == 1475


def test_end_streams_sender_and_receiver() -> None:
    streams = parse_fixture(COMPLETE).tables["streams"]
    assert list(streams.columns) == list(STREAM_COLUMNS)
    assert streams["role"].tolist() == ["sender", "receiver"]
    sender = streams.iloc[0]
    assert (sender.bytes, sender.retransmits, sender.max_snd_cwnd_bytes) == (62914560, 1475, 4173312)
    assert (sender.max_rtt_ms, sender.min_rtt_ms, sender.mean_rtt_ms) == (301.559, 293.166, 294.75)


# ---------------------------------------------------------------- truncated by its producer

def test_truncated_file_is_a_flagged_partial_result_naming_where_json_stops() -> None:
    result = parse_fixture(TRUNCATED)
    assert result.complete is False
    assert len(result.warnings) == 1
    warning = result.warnings[0]
    assert warning.path.endswith(TRUNCATED)
    assert warning.line_no == 71                               # json: "line 71 column 2 (char 1527)"
    assert "line 71 column 2" in warning.expected
    assert "inside 'end'" in warning.expected


def test_truncated_file_keeps_the_complete_interval_and_start_block() -> None:
    result = parse_fixture(TRUNCATED)
    intervals = result.tables["intervals"]
    assert intervals["stream"].tolist() == ["5", "sum"]
    row = intervals.iloc[0]
    # sidecar: one interval 0-0.323972 s, 265608 bytes, 6558789.3 bit/s, rtt 188429 us
    assert (row.start_s, row.end_s, row.bytes) == (0.0, 0.323972, 265608)
    assert row.bits_per_second == pytest.approx(6558789.3, abs=0.05)
    assert row.rtt_ms == 188.429
    summary = result.tables["summary"].iloc[0]
    assert summary.target_bytes == 10240                       # sidecar: start.test_start.bytes 10240
    assert bool(summary.complete) is False
    assert pd.isna(summary.sent_bits_per_second)               # end block cut off: nothing half-read
    assert result.tables["streams"].empty


def test_nothing_recoverable_is_a_parse_error_with_the_position() -> None:
    with pytest.raises(ParseError) as err:
        parse_iperf3('{\n\t"start":\t{\n\t\t"connected":\t[{\n', "cut.json")
    assert err.value.path == "cut.json"
    assert err.value.line_no == 4
    assert "decoding stopped at line 4" in err.value.expected


# ---------------------------------------------------------------- bad input

def test_empty_input_is_a_parse_error() -> None:
    with pytest.raises(ParseError, match="input is empty"):
        parse_iperf3("\r\n  \n", "empty.json")


def test_binary_input_is_a_parse_error() -> None:
    with pytest.raises(ParseError, match="binary"):
        parse_iperf3('{"start": \x00}', "bin.json")


def test_another_tools_output_is_a_parse_error() -> None:
    with pytest.raises(ParseError) as err:
        parse_iperf3(text_of("ping_linux_iputils_pkb.out"), "ping.out")
    assert err.value.line_no == 1
    assert err.value.line == "PING 10.0.0.3 (10.0.0.3) 56(84) bytes of data."


def test_json_that_is_not_iperf3_is_a_parse_error() -> None:
    with pytest.raises(ParseError, match="start/intervals/end"):
        parse_iperf3('{"name": "not iperf", "value": 3}', "other.json")


def test_garbage_in_the_middle_keeps_what_came_before_and_flags_it() -> None:
    lines = text_of(COMPLETE).splitlines(keepends=True)
    at = next(i for i, ln in enumerate(lines) if '"end":' in ln and ln.startswith('\t"end"'))
    lines.insert(at - 20, "Killed: 9 (garbage)\n")
    result = parse_iperf3("".join(lines), "garbled.json")
    assert result.complete is False
    assert len(result.warnings) == 1
    assert result.warnings[0].line_no == at - 19
    assert result.warnings[0].line == "Killed: 9 (garbage)"
    assert len(result.tables["intervals"]) == 24               # the 13th interval was cut: dropped whole
    assert pd.isna(result.tables["summary"].iloc[0].sent_bits_per_second)


def test_text_after_the_document_is_skipped_counted_and_flagged() -> None:
    result = parse_iperf3(text_of(COMPLETE) + "\niperf3: interrupt - the client has terminated\n", "tail.json")
    assert result.skipped_lines == 1
    assert len(result.warnings) == 1
    assert result.tables["summary"].iloc[0].sent_bytes == 62914560


def test_two_appended_documents_are_two_runs() -> None:
    text = text_of(COMPLETE)
    result = parse_iperf3(text + "\n" + text, "two.json")
    assert result.tables["summary"]["run"].tolist() == [0, 1]
    assert result.tables["intervals"].groupby("run").size().tolist() == [26, 26]
    assert (result.complete, result.warnings) == (True, [])


def test_a_second_document_cut_off_keeps_the_first_and_flags_the_rest() -> None:
    result = parse_iperf3(text_of(COMPLETE) + "\n{\n\t\"start\":\t{\n", "second-cut.json")
    assert result.complete is False
    assert result.tables["summary"]["run"].tolist() == [0]
    assert "after run 0" in result.warnings[0].expected


def test_an_iperf3_error_member_is_a_warning_and_incomplete() -> None:
    text = '{\n"start": {"connected": [], "version": "iperf 3.9"},\n"intervals": [],\n"end": {},\n' \
           '"error": "unable to connect to server: Connection refused"\n}\n'
    result = parse_iperf3(text, "refused.json")
    assert result.complete is False
    assert "Connection refused" in result.warnings[0].expected
    assert result.tables["summary"].iloc[0].error == "unable to connect to server: Connection refused"


def test_stream_bytes_that_do_not_add_up_are_a_warning() -> None:
    doc = json.loads(text_of(COMPLETE))
    doc["intervals"][4]["streams"][0]["bytes"] += 1
    result = parse_iperf3(json.dumps(doc), "edited.json")
    assert [w.expected.split(":")[0] for w in result.warnings] == ["interval 4 of run 0"]


@pytest.mark.parametrize("text", [
    '{"end": {"sum_sent": 3, "streams": 7}, "intervals": [{"streams": 5, "sum": 3}]}',
    '{"start": {"version": 3, "connected": "x", "test_start": {"protocol": ["TCP"]}, "timestamp": {"timesecs": 1e30}}}',
    '{"intervals": [{"sum": {"bytes": 99999999999999999999999, "omitted": false}}], '
    '"start": {"test_start": {"protocol": "TCP"}}, "end": {"sum_sent": {"bytes": -1e300}}}',
])
def test_members_of_the_wrong_type_or_size_become_missing_values(text: str) -> None:
    result = parse_iperf3(text, "odd.json")
    row = result.tables["summary"].iloc[0]
    assert pd.isna(row.sent_bytes) and pd.isna(row.timestamp) and pd.isna(row.version)


# ---------------------------------------------------------------- detection

def test_sniff_claims_both_iperf3_fixtures_and_nothing_else() -> None:
    for path in public_fixture_files():
        assert sniff(read_text(path)[:65536]) == path.name.startswith("iperf3"), path


# ---------------------------------------------------------------- fuzz



def test_fuzz_mutated_fixtures_give_a_result_or_a_parse_error() -> None:
    texts = [text_of(COMPLETE), text_of(TRUNCATED)]

    def check(result: ParseResult) -> None:
        assert list(result.tables["summary"].columns) == list(SUMMARY_COLUMNS)
        assert result.complete or result.warnings                # incomplete is never silent

    tried = fuzz_parser(parse_iperf3, mutated(texts), "fuzz.json", check)
    print(f"iperf3 fuzz: {tried} inputs tried")
    assert tried
