"""ping parser: the statistics ping printed, the replies shown, and what bad input gets.

Expected figures are the ones each fixture's sidecar quotes from ping's own summary lines.
"""

from __future__ import annotations

import math
from functools import partial

import pandas as pd
import pytest
from tests.conftest import public_fixture, public_fixture_files
from tests.fuzzing import fuzz_parser, mutated

from cassperf.errors import ParseError
from cassperf.parsers import read_text
from cassperf.parsers.base import ParseResult
from cassperf.parsers.ping import ERROR_COLUMNS, REPLY_COLUMNS, SUMMARY_COLUMNS, parse_ping, sniff

PKB = "ping_linux_iputils_pkb.out"


network = partial(public_fixture, "network")


def parse_fixture(name: str) -> ParseResult:
    path = network(name)
    return parse_ping(read_text(path), str(path))


NAN = math.nan
# file -> (transmitted, received, duplicates, errors, loss_pct, total_time_ms,
#          rtt min, avg, max, mdev/stddev, spread word, reply lines, duplicate reply lines)
SUMMARIES = {
    "ping_bsd-style_2duplicates_10pct-loss_FRAGMENT_pingparsing.txt":
        (10, 9, 2, 0, 10.0, NAN, 0.613, 0.930, 1.219, NAN, None, 11, 2),
    "ping_linux_iputils_-D_timestamps_FRAGMENT_pingparsing.txt":
        (5, 5, 0, 0, 0.0, 4001.0, 136.537, 139.174, 148.006, 4.425, "mdev", 5, 0),
    "ping_linux_iputils_1688pkts_dup+loss_FRAGMENT_pingparsing.txt":
        (1688, 1553, 1, 0, 7.0, 2987.0, 0.282, 0.642, 11.699, 0.699, "mdev", 0, 0),
    "ping_linux_iputils_62.5pct-loss_FRAGMENT_pingparsing.txt":
        (8, 3, 0, 0, 62.5, 154.0, NAN, NAN, NAN, NAN, None, 3, 0),
    PKB:
        (100, 100, 0, 0, 0.0, 99048.0, 0.280, 0.352, 0.602, 0.056, "mdev", 100, 0),
    "ping_linux_iputils_unreachable_+5errors_FRAGMENT_pingparsing.txt":
        (5, 0, 0, 5, 100.0, 4003.0, NAN, NAN, NAN, NAN, None, 0, 0),
    "ping_macos_bsd_round-trip-stddev_FRAGMENT_pingparsing.txt":
        (5, 5, 0, 0, 0.0, NAN, 20.482, 31.927, 46.093, 8.292, "stddev", 5, 0),
}


def same(a: object, b: object) -> bool:
    if isinstance(b, float) and math.isnan(b):
        return a is None or a is pd.NA or (isinstance(a, float) and math.isnan(a))
    return a == b


@pytest.mark.parametrize("name", sorted(SUMMARIES))
def test_summary_equals_what_ping_printed(name: str) -> None:
    (sent, received, dups, errors, loss, total, rmin, ravg, rmax, rdev, spread, n_replies,
     n_dup_lines) = SUMMARIES[name]
    result = parse_fixture(name)
    assert result.format == "ping"
    assert result.complete is True
    assert result.warnings == []                  # fragments without reply lines are not flagged
    assert result.skipped_lines == 0
    summary = result.tables["summary"]
    assert len(summary) == 1
    row = summary.iloc[0]
    assert (row.transmitted, row.received, row.duplicates, row.errors) == (sent, received, dups, errors)
    for column, expected in (("loss_pct", loss), ("total_time_ms", total), ("rtt_min_ms", rmin),
                             ("rtt_avg_ms", ravg), ("rtt_max_ms", rmax), ("rtt_mdev_ms", rdev)):
        assert same(row[column], expected), (column, row[column], expected)
    assert (row.rtt_spread if row.rtt_spread is not pd.NA else None) == spread
    replies = result.tables["replies"]
    assert len(replies) == n_replies
    assert int(replies["duplicate"].sum()) == n_dup_lines


@pytest.mark.parametrize("name", sorted(SUMMARIES))
def test_frames_have_the_documented_columns_and_types(name: str) -> None:
    result = parse_fixture(name)
    for table, schema in (("replies", REPLY_COLUMNS), ("summary", SUMMARY_COLUMNS), ("errors", ERROR_COLUMNS)):
        frame = result.tables[table]
        assert list(frame.columns) == list(schema)
        assert {c: str(t) for c, t in frame.dtypes.items()} == {c: str(pd.Series([], dtype=t).dtype)
                                                                 for c, t in schema.items()}


def test_destination_and_pipe_ipg_ewma_of_the_1688_packet_run() -> None:
    row = parse_fixture("ping_linux_iputils_1688pkts_dup+loss_FRAGMENT_pingparsing.txt").tables["summary"].iloc[0]
    assert (row.destination, row.destination_ip) == ("192.168.0.1", "192.168.0.1")
    assert (row["pipe"], row["ipg_ms"], row["ewma_ms"]) == (2, 1.770, 0.782)


def test_dash_d_timestamps_become_utc_times_to_the_microsecond() -> None:
    replies = parse_fixture("ping_linux_iputils_-D_timestamps_FRAGMENT_pingparsing.txt").tables["replies"]
    assert replies["time"].iloc[0] == pd.Timestamp("2018-04-28 15:55:37.003555", tz="UTC")  # 1524930937.003555
    assert replies["time"].iloc[-1] == pd.Timestamp(1524930940788365, unit="us", tz="UTC")
    assert replies["rtt_ms"].tolist() == [148.0, 137.0, 137.0, 136.0, 136.0]
    assert replies["seq"].tolist() == [1, 2, 3, 4, 5]
    assert replies["ttl"].tolist() == [39] * 5


def test_replies_without_dash_d_have_no_time() -> None:
    replies = parse_fixture(PKB).tables["replies"]
    assert replies["time"].isna().all()
    assert replies["seq"].tolist() == list(range(1, 101))
    assert replies["rtt_ms"].iloc[0] == 0.280 and replies["rtt_ms"].iloc[-1] == 0.319


def test_bsd_duplicates_are_flagged_on_the_dup_lines() -> None:
    replies = parse_fixture("ping_bsd-style_2duplicates_10pct-loss_FRAGMENT_pingparsing.txt").tables["replies"]
    dups = replies[replies["duplicate"]]
    assert dups["seq"].tolist() == [0, 9]
    assert dups["rtt_ms"].tolist() == [1.003, 1.219]
    assert sorted(set(replies["seq"])) == [0, 1, 2, 3, 4, 5, 6, 8, 9]      # seq 7 was lost


def test_unanswered_and_unreachable_lines_are_kept_as_errors() -> None:
    errors = parse_fixture("ping_linux_iputils_62.5pct-loss_FRAGMENT_pingparsing.txt").tables["errors"]
    assert errors["kind"].tolist() == ["no_answer"] * 4
    assert errors["seq"].tolist() == [1, 3, 4, 5]
    assert errors["time"].iloc[0] == pd.Timestamp(1596881133081556, unit="us", tz="UTC")
    unreachable = parse_fixture("ping_linux_iputils_unreachable_+5errors_FRAGMENT_pingparsing.txt").tables["errors"]
    assert unreachable["kind"].tolist() == ["icmp_error"] * 5
    assert set(unreachable["message"]) == {"Destination Host Unreachable"}
    assert set(unreachable["from_host"]) == {"192.168.207.128"}


# ---------------------------------------------------------------- cross-checks and bad input

def pkb_text() -> str:
    return read_text(network(PKB))


def test_empty_input_is_a_parse_error() -> None:
    with pytest.raises(ParseError, match="input is empty") as err:
        parse_ping("  \n\n", "empty.txt")
    assert err.value.path == "empty.txt"


def test_binary_input_is_a_parse_error() -> None:
    with pytest.raises(ParseError, match="binary"):
        parse_ping("PING \x00\x01\x02", "bin.out")


def test_another_tools_output_is_a_parse_error_naming_line_one() -> None:
    text = read_text(network("iperf3.9_json_tcp_10s_omit3_gcp-to-ibm_cloudpilot.json"))
    with pytest.raises(ParseError) as err:
        parse_ping(text, "iperf.json")
    assert err.value.line_no == 1
    assert err.value.line == "{"
    assert "PING host" in err.value.expected


def test_output_cut_before_the_statistics_is_partial_and_says_so() -> None:
    lines = pkb_text().splitlines(keepends=True)
    result = parse_ping("".join(lines[:51]), "cut.out")            # header + 50 replies
    assert result.complete is False
    assert len(result.tables["replies"]) == 50
    assert result.tables["summary"].empty
    assert len(result.warnings) == 1
    assert result.warnings[0].line_no == 1
    assert "ping statistics" in result.warnings[0].expected


def test_statistics_header_without_counts_is_partial() -> None:
    text = pkb_text()
    cut = text[:text.index("100 packets transmitted")]
    result = parse_ping(cut, "cut.out")
    assert result.complete is False
    assert "packets transmitted" in result.warnings[0].expected


def test_a_garbage_line_in_the_middle_is_skipped_and_counted_and_changes_nothing() -> None:
    lines = pkb_text().splitlines(keepends=True)
    lines.insert(40, "garbage: the cat walked over the keyboard\n")
    result = parse_ping("".join(lines), "garbage.out")
    assert result.skipped_lines == 1
    assert result.warnings == []
    assert len(result.tables["replies"]) == 100
    assert result.tables["summary"].iloc[0].rtt_avg_ms == 0.352


def test_a_reply_replaced_by_garbage_is_a_warning_about_the_counts() -> None:
    lines = pkb_text().splitlines(keepends=True)
    assert "icmp_seq=50 " in lines[50]
    lines[50] = "64 bytes from 10.0.0.3: icmp_seq=5#&!\n"
    result = parse_ping("".join(lines), "garbled.out")
    assert result.skipped_lines == 1
    assert len(result.warnings) == 1
    assert "100 replies as the statistics say" in result.warnings[0].expected
    assert "shows 99" in result.warnings[0].expected
    assert result.warnings[0].line_no == 103                    # the '--- ping statistics ---' line


def test_printed_rtt_that_disagrees_with_the_replies_is_a_warning() -> None:
    text = pkb_text().replace("= 0.280/0.352/0.602/0.056 ms", "= 0.180/0.352/0.602/0.056 ms")
    result = parse_ping(text, "edited.out")
    assert [w.expected.split(" ms")[0] for w in result.warnings] == ["rtt min 0.18"]
    assert result.tables["summary"].iloc[0].rtt_min_ms == 0.180     # the printed figure is kept, flagged


def test_truncated_integer_rtts_of_old_iputils_are_within_tolerance() -> None:
    # 136.537 ms prints as "time=136 ms" in iputils s20121221: not a disagreement
    result = parse_fixture("ping_linux_iputils_-D_timestamps_FRAGMENT_pingparsing.txt")
    assert result.warnings == []


def test_loss_percentage_that_contradicts_the_counts_is_a_warning() -> None:
    text = pkb_text().replace("0% packet loss", "5% packet loss")
    result = parse_ping(text, "edited.out")
    assert len(result.warnings) == 1
    assert "packet loss near 0.000%" in result.warnings[0].expected


def test_two_pings_in_one_file_are_two_runs() -> None:
    bsd = read_text(network("ping_macos_bsd_round-trip-stddev_FRAGMENT_pingparsing.txt"))
    result = parse_ping(pkb_text() + "\n" + bsd, "two.out")
    summary = result.tables["summary"]
    assert summary["run"].tolist() == [0, 1]
    assert summary["destination"].tolist() == ["10.0.0.3", "google.com"]
    assert result.tables["replies"].groupby("run").size().tolist() == [100, 5]
    assert result.warnings == []


def test_numbers_beyond_int64_are_skipped_or_flagged_never_wrapped() -> None:
    big = "9" * 23
    result = parse_ping(f"PING a (10.0.0.1) 56(84) bytes of data.\n64 bytes from a: icmp_seq={big} ttl=1 time=1 ms\n"
                        f"--- a ping statistics ---\n{big} packets transmitted, 1 received, 0% packet loss\n",
                        "big.out")
    assert result.skipped_lines == 1                          # the reply line does not match
    assert result.complete is False                           # no readable transmitted count
    assert any(f"not '{big} packets transmitted'" in w.expected for w in result.warnings)
    assert result.tables["summary"].empty


def test_an_overlong_ttl_is_not_cut_to_a_plausible_number() -> None:
    result = parse_ping("PING a (10.0.0.1) 56(84) bytes of data.\n"
                        "64 bytes from a: icmp_seq=1 ttl=12345678901 time=1 ms\n", "ttl.out")
    assert result.tables["replies"].empty                      # not ttl=123456789
    assert result.skipped_lines == 1
    assert result.complete is False                            # header only: cut before any statistics


# ---------------------------------------------------------------- detection

def test_sniff_claims_every_ping_fixture_and_nothing_else() -> None:
    for path in public_fixture_files():
        head = read_text(path)[:65536]
        assert sniff(head) == path.name.startswith("ping_"), path


# ---------------------------------------------------------------- fuzz



def test_fuzz_mutated_fixtures_give_a_result_or_a_parse_error() -> None:
    texts = [read_text(network(name)) for name in sorted(SUMMARIES)]

    def check(result: ParseResult) -> None:
        assert list(result.tables["summary"].columns) == list(SUMMARY_COLUMNS)

    tried = fuzz_parser(parse_ping, mutated(texts), "fuzz.out", check)
    print(f"ping fuzz: {tried} inputs tried")
    assert tried
