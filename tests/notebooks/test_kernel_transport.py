"""A report's kernel talks to papermill over Unix sockets in a private folder, not over TCP:
a probe notebook run by the report pipeline reads its own connection info and listening
sockets, and ipykernel's "running over TCP without encryption" warning is not in the output.
No cluster."""

from __future__ import annotations

import json
import os
from pathlib import Path

import nbformat
import pytest

from cassperf.workbook.preflight import run_reports
from tests.notebooks.reportkit import write_notebook

pytestmark = [pytest.mark.notebook]

PROBE = ['''import json, sys
from pathlib import Path

import psutil
from ipykernel.connect import get_connection_info

info = get_connection_info(unpack=True)
folder = Path(info["ip"]).parent
tcp = sorted(c.laddr for c in psutil.Process().net_connections("inet") if c.status == psutil.CONN_LISTEN)
print(json.dumps({"transport": info["transport"], "ip": info["ip"],
                  "ports": [info[k] for k in ("shell_port", "iopub_port", "stdin_port", "control_port", "hb_port")],
                  "folder_mode": oct(folder.stat().st_mode & 0o777), "folder_uid": folder.stat().st_uid,
                  "sockets": sorted(p.name for p in folder.iterdir() if p.is_socket()),
                  "tcp_listening": [list(a) for a in tcp],
                  "iopub_pipe_port": sys.stdout.pub_thread._pipe_port}))''']


def test_report_kernel_runs_over_ipc_in_a_private_folder_without_the_tcp_warning(tmp_path, monkeypatch, capfd):
    monkeypatch.setenv("CASSPERF_DATA", str(tmp_path / "data"))
    write_notebook(tmp_path / "nbs", "01-probe.ipynb", 'show_code: bool = False  # keep the code', PROBE)
    log: list[str] = []
    results = run_reports(None, "local", reports_dir=tmp_path / "reports", notebooks_dir=tmp_path / "nbs",
                          log=log.append)
    assert [r.ok for r in results] == [True], [r.error for r in results]
    nb = nbformat.read(tmp_path / "reports" / "executed" / "01-probe.ipynb", as_version=4)
    seen = json.loads("".join(o.get("text", "") for o in nb.cells[2].outputs))
    folder = Path(seen["ip"]).parent
    assert seen["transport"] == "ipc"
    assert folder.name.startswith("cassperf-kernel-") and Path(seen["ip"]).name == "kernel"
    assert (seen["folder_mode"], seen["folder_uid"]) == ("0o700", os.getuid())
    assert seen["sockets"] == [f"kernel-{p}" for p in sorted(seen["ports"])] == [f"kernel-{i}" for i in range(1, 6)]
    # the only TCP port the kernel listens on is ipykernel's receive-only IOPub pipe for forked children
    assert seen["tcp_listening"] == [["127.0.0.1", seen["iopub_pipe_port"]]]
    assert not folder.exists(), "the socket folder is removed after the notebook ran"
    out, err = capfd.readouterr()
    assert "without encryption" not in out + err
    assert "01-probe.ipynb: running" in "\n".join(log)
