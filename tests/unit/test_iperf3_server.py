"""The multi-DC baseline's iperf3 server: watched until its test ends, stopped when it hangs after it.

iperf3's server at times hangs after a test whose client got its results (esnet/iperf#1735); in
CI the 16-stream server held a DC location's worker for 60 s and the measured figure was dropped.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import time

import pytest

from cassperf.experiments import network

pytestmark = pytest.mark.skipif(shutil.which("iperf3") is None, reason="iperf3 is not installed (make iperf3)")

# what iperf3 3.12's server printed at the end of a 3-stream test on this machine
SERVER_END = """[ ID] Interval           Transfer     Bitrate
[  5]   0.00-1.00   sec  1.02 GBytes  8.76 Gbits/sec                  receiver
[  8]   0.00-1.00   sec  1.02 GBytes  8.76 Gbits/sec                  receiver
[ 11]   0.00-1.00   sec  1.02 GBytes  8.76 Gbits/sec                  receiver
[SUM]   0.00-1.00   sec  3.06 GBytes  26.3 Gbits/sec                  receiver
"""

HANG_NOTE = "the iperf3 server's test ended but the server did not exit within {} s; stopped (esnet/iperf#1735)"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _server(port: int) -> subprocess.Popen:
    return subprocess.Popen(["iperf3", "-s", "-1", "-p", str(port), "--forceflush"], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT)


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.kill()
    proc.wait()


def test_a_server_whose_16_stream_test_ends_returns_its_exit_code_and_the_client_its_figure() -> None:
    port = _free_port()
    proc = _server(port)
    try:
        deadline = time.monotonic() + 20        # the client retries while the server starts, as the task does
        while True:
            client = subprocess.run(["iperf3", "-c", "127.0.0.1", "-p", str(port), "-P", "16", "-t", "1", "--json"],
                                    capture_output=True, text=True, timeout=30)
            if client.returncode == 0 or time.monotonic() > deadline:
                break
            time.sleep(0.3)
        assert client.returncode == 0, client.stdout[-300:]
        served = network.watch_iperf3_server(proc, timeout_s=10, exit_grace_s=3)
    finally:
        _stop(proc)
    # a clean exit; or the hang after the test this watch is for (esnet/iperf#1735), stopped after
    # the grace (2 of 40 servers here); or, rarely, a server whose output never showed the test
    # though its client got its figure (CI of fff38d9: "saw no test within 30 s"), given up at the
    # timeout. In every case the client's figure stands, with the server's state beside it.
    assert served in ({"returncode": 0}, {"returncode": None, "note": HANG_NOTE.format(3)},
                      {"error": "the iperf3 server saw no test within 10 s"},
                      {"error": "the iperf3 server's test did not end within 10 s"}), served
    noted = {} if served == {"returncode": 0} else {"server": served.get("note") or served["error"]}
    assert network.iperf3_result({"text": client.stdout}, served) == {"text": client.stdout, **noted}
    baseline = {"iperf3": [{"from": "dc1", "to": "dc2", "streams": 16, "address": "127.0.0.1",
                            "text": client.stdout, "server": "the iperf3 server's test ended but the server did "
                                                              "not exit within 3 s; stopped (esnet/iperf#1735)"}]}
    row = network.baseline_table(baseline).iloc[-1]
    assert row["measure"] == "iperf3, 16 streams" and row["value"] > 0
    assert row["how"].startswith("iperf3 -P 16 -t 1") and row["how"].endswith(
        "received at 127.0.0.1 (server: the iperf3 server's test ended but the server did not exit within 3 s; "
        "stopped (esnet/iperf#1735))")


def test_a_server_that_hangs_after_its_receiver_summary_is_given_the_grace_and_then_stopped() -> None:
    script = f"import sys, time; sys.stdout.write({SERVER_END!r}); sys.stdout.flush(); time.sleep(60)"
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        started = time.monotonic()
        got = network.watch_iperf3_server(proc, timeout_s=60, exit_grace_s=1)
        waited = time.monotonic() - started
    finally:
        _stop(proc)
    assert got == {"returncode": None, "note": HANG_NOTE.format(1)}
    assert waited < 10, f"waited {waited:.1f} s for a server whose test had ended"


def test_a_server_that_sees_no_client_says_so_after_its_timeout() -> None:
    proc = _server(_free_port())
    try:
        got = network.watch_iperf3_server(proc, timeout_s=1, exit_grace_s=1)
    finally:
        _stop(proc)
    assert got == {"error": "the iperf3 server saw no test within 1 s"}


def test_the_baseline_row_keeps_a_succeeded_clients_figure_whatever_its_server_did() -> None:
    client, failed = {"text": "{...}"}, {"error": "iperf3 -c 10.43.2.1 -P 16 exited 1: unable to connect"}
    assert network.iperf3_result(client, {"returncode": 0}) == client
    assert network.iperf3_result(client, {"error": "the iperf3 server saw no test within 60 s"}) == {
        "text": "{...}", "server": "the iperf3 server saw no test within 60 s"}
    assert network.iperf3_result(failed, {"error": "the iperf3 server saw no test within 60 s"}) == failed
