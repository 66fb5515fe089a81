"""JupyterLab as a person uses it. `make lab` (the real target, on a free port of 127.0.0.1,
token auth, LAB_DIR a temporary folder of notebook copies) is opened in headless Chromium
(Debian's package, /usr/bin/chromium, driven by Playwright; no browser is downloaded). In the
file browser the test double-clicks `00-log-explorer.ipynb` (its `logs`: a folder of real
cassandra-stress 5.0 and GC logs copied from tests/fixtures) and then
`04-deployment-comparison.ipynb` with `analyse_only` (runs imported from the same
cassandra-stress logs, labelled deployment and machine, read through its `imported_filter`),
picks Run > Run All Cells, waits for the kernel to go idle, saves with Ctrl+S, and checks that
every plotly chart drew its SVG in an output area and that the saved notebook ran every cell
without an error. A screenshot of each notebook at its first chart is kept in
`reports/test-artifacts/lab/<notebook>.png` (`<notebook>-failed.png`: the page when a step
failed; CASSPERF_REPORTS moves `reports/`).

The copies get their parameters as papermill injects them (a cell tagged `injected-parameters`
after the `parameters` cell); notebooks/ itself is never opened. The kernels Lab starts talk to
it over Unix sockets in its runtime folder (0700), not TCP. Lab (make, jupyter, the kernels) and
the browser are stopped in teardown, also when the test fails. Skips with one line where
chromium is absent (`make browser`)."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
import papermill
import psutil
import pytest

from cassperf import config
from tests.notebooks.reportkit import chromium_or_skip

pytestmark = [pytest.mark.notebook]

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
STRESS_LOGS = {"write": FIXTURES / "cassandra-stress-5.0" / "write.stdout.txt",
               "mixed": FIXTURES / "cassandra-stress-5.0" / "mixed.stdout.txt"}
GC_LOG = FIXTURES / "gc-5.0" / "gc_cassandra5.0.6_jdk17_G1_unified_time-uptime-level-tags_cassperf.log"
LOG_EXPLORER = "00-log-explorer.ipynb"
STUDY = "04-deployment-comparison.ipynb"
IMPORTED_MACHINE = "lab-import"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--no-first-run"]
#: JupyterLab's own setting: do not fetch Jupyter news from the internet (nor ask about it)
NO_NEWS = {"@jupyterlab/apputils-extension/notification.jupyterlab-settings": {"fetchNews": "false"}}


@dataclass(frozen=True)
class Lab:
    url: str = field(repr=False)    # http://127.0.0.1:<port>/lab?token=<token>, as `make lab` printed it
    token: str = field(repr=False)
    runtime: Path       # JUPYTER_RUNTIME_DIR: connection files and the kernels' IPC sockets
    notebooks: Path     # LAB_DIR
    log: Path           # everything `make lab` printed
    chromium: str


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _prepare(notebooks: Path, logs: Path) -> None:
    """Copies of the two notebooks with their parameters injected (papermill, nothing run)."""
    for name, params in ((LOG_EXPLORER, {"logs": str(logs)}),
                         (STUDY, {"analyse_only": True, "imported_filter": f"machine={IMPORTED_MACHINE}"})):
        papermill.execute_notebook(str(config.notebooks_dir() / name), str(notebooks / name), parameters=params,
                                   prepare_only=True, progress_bar=False)


def _import_runs(data: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The cassandra-stress logs as runs of a deployment on another machine (docs/studies/04-deployment-comparison.md)."""
    from cassperf.cli import main

    monkeypatch.setenv("CASSPERF_DATA", str(data))
    for op, log in STRESS_LOGS.items():
        assert main(["import", str(log), "--label", "deployment=Docker", "--label", f"machine={IMPORTED_MACHINE}",
                     "--label", f"op={op}"]) == 0


def _stop(proc: subprocess.Popen) -> list[int]:
    """SIGTERM to make's process group (jupyter shuts its kernels down on it), then SIGKILL to
    whatever of it and its descendants is left; returns the pids that had to be killed."""
    try:
        family = [proc.pid] + [c.pid for c in psutil.Process(proc.pid).children(recursive=True)]
    except psutil.NoSuchProcess:
        family = [proc.pid]
    try:
        os.killpg(proc.pid, signal.SIGTERM)
    except ProcessLookupError:
        pass
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        pass
    alive = []
    for pid in family:
        try:
            p = psutil.Process(pid)
            p.wait(timeout=10)
        except psutil.NoSuchProcess:
            continue
        except psutil.TimeoutExpired:
            alive.append(pid)
            p.kill()
    if proc.poll() is None:
        proc.kill()
        proc.wait()
    return alive


@pytest.fixture
def lab(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Lab]:
    chromium = chromium_or_skip()
    notebooks, logs, settings = (tmp_path / d for d in ("notebooks", "logs", "settings"))
    for folder in (notebooks, logs, settings):
        folder.mkdir()
    # a socket path has at most 107 bytes: pytest's tmp_path is too long for <runtime>/kernel-<uuid>-ipc-<n>
    runtime = Path(tempfile.mkdtemp(prefix="cassperf-lab-", dir="/tmp"))  # 0700
    for log in (*STRESS_LOGS.values(), GC_LOG):
        shutil.copy(log, logs / log.name)
    _prepare(notebooks, logs)
    _import_runs(tmp_path / "data", monkeypatch)
    for rel, value in NO_NEWS.items():
        (settings / rel).parent.mkdir(parents=True, exist_ok=True)
        (settings / rel).write_text(json.dumps(value))
    env = {k: v for k, v in os.environ.items() if k != "JUPYTER_TOKEN"}  # let Lab make its token and print it
    env.update(CASSPERF_DATA=str(tmp_path / "data"), JUPYTER_RUNTIME_DIR=str(runtime),
               JUPYTERLAB_SETTINGS_DIR=str(settings), JUPYTERLAB_WORKSPACES_DIR=str(tmp_path / "workspaces"))
    port = _free_port()
    log_path = tmp_path / "make-lab.log"
    with log_path.open("wb") as out:
        proc = subprocess.Popen(["make", "--no-print-directory", "-C", str(config.project_root()), "lab",
                                 f"LAB_PORT={port}", f"LAB_DIR={notebooks}"],
                                stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, env=env,
                                start_new_session=True)
    try:
        pattern = re.compile(rf"http://127\.0\.0\.1:{port}/lab\?token=([0-9a-f]+)")
        deadline = time.monotonic() + 120
        while not (found := pattern.search(log_path.read_text(errors="replace"))):
            assert proc.poll() is None, f"make lab exited {proc.returncode}:\n{log_path.read_text()[-3000:]}"
            assert time.monotonic() < deadline, f"make lab printed no URL in 120 s:\n{log_path.read_text()[-3000:]}"
            time.sleep(0.2)
        yield Lab(found.group(0), found.group(1), runtime, notebooks, log_path, chromium)
    finally:
        killed = _stop(proc)
        shutil.rmtree(runtime, ignore_errors=True)
    assert not killed, f"processes of make lab still running 40 s after SIGTERM (killed): {killed}"


@pytest.fixture
def artifacts() -> Path:
    folder = config.reports_dir() / "test-artifacts" / "lab"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _kernel_state(lab: Lab, name: str) -> str | None:
    """The execution state of the kernel of `name`'s session, from Lab's REST API."""
    request = urllib.request.Request(lab.url.split("/lab?")[0] + "/api/sessions",
                                     headers={"Authorization": f"token {lab.token}"})
    with urllib.request.urlopen(request, timeout=10) as response:
        sessions = json.load(response)
    states = [s["kernel"]["execution_state"] for s in sessions if s["path"] == name and s.get("kernel")]
    return states[0] if states else None


def _wait(what: str, check, timeout_s: float):  # noqa: ANN001, ANN201 - a callable returning truthy; its value
    """Call `check` every 0.25 s until it returns something truthy, and return that."""
    deadline = time.monotonic() + timeout_s
    while not (value := check()):
        assert time.monotonic() < deadline, f"{what}: not within {timeout_s:.0f} s"
        time.sleep(0.25)
    return value


#: true once Run All has finished in the notebook panel with this id: no cell waits ("[*]:")
#: and at least one ran ("[n]:")
_RUN_FINISHED = """id => {
  const prompts = [...document.getElementById(id).querySelectorAll('.jp-CodeCell .jp-InputPrompt')]
    .map(e => e.textContent.trim());
  return !prompts.includes('[*]:') && prompts.some(t => /^\\[\\d+\\]:$/.test(t));
}"""

#: per plotly output of the panel (jupyterlab-plotly's renderer of application/vnd.plotly.v1+json):
#: [svg.main-svg layers drawn, traces drawn, width in px]
_CHARTS = """id => [...document.getElementById(id)
    .querySelectorAll('.jp-OutputArea-output .jp-RenderedPlotly, .jp-OutputArea-output.jp-RenderedPlotly')]
  .map(o => [o.querySelectorAll('svg.main-svg').length, o.querySelectorAll('svg.main-svg .trace').length,
             Math.round(o.getBoundingClientRect().width)])"""


def _open_and_run_all(page, lab: Lab, name: str,  # noqa: ANN001 - Page
                      screenshot: Path) -> tuple[list[list[int]], list[str]]:
    """Double-click `name` in the file browser, wait for its kernel, Run > Run All Cells, wait
    for the kernel to go idle, save (Ctrl+S), screenshot the first chart; returns _CHARTS and the
    errors in the saved notebook."""
    page.locator(".jp-DirListing-item", has_text=name).dblclick()
    tab = page.locator(".lm-DockPanel-tabBar .lm-TabBar-tab", has_text=name)
    tab.wait_for()
    panel = tab.get_attribute("data-id")
    _kernel_started(page, lab, name)
    page.locator(f"#{panel} .jp-Notebook-ExecutionIndicator[data-status='idle']").wait_for()
    page.locator(".lm-MenuBar-item", has_text=re.compile(r"^Run$")).click()
    page.locator(".lm-Menu-item", has_text=re.compile(r"^Run All Cells")).click()
    page.wait_for_function(_RUN_FINISHED, arg=panel, timeout=300_000)
    _wait(f"{name}: kernel idle after Run All", lambda: _kernel_state(lab, name) == "idle", 60)
    page.keyboard.press("Control+s")
    saved = lab.notebooks / name
    nb = _wait(f"{name}: saved with every cell run", lambda: _saved_after_run(saved), 60)
    charts = page.evaluate(_CHARTS, panel)
    if charts:
        page.locator(f"#{panel} .jp-OutputArea-output svg.main-svg").first.scroll_into_view_if_needed()
    page.screenshot(path=str(screenshot))
    return charts, _errors(nb)


def _kernel_started(page, lab: Lab, name: str) -> None:  # noqa: ANN001 - Page
    """Wait until the kernel Lab starts for `name` is idle. Lab asks "Select Kernel" when it
    opened the notebook before it knew the kernelspecs: accept what it proposes (the notebook's
    own kernel, Python 3), as a person would."""
    dialog = page.locator(".jp-Dialog", has_text="Select Kernel")

    def idle() -> bool:
        if dialog.is_visible():
            dialog.locator(".jp-mod-accept").click()
        return _kernel_state(lab, name) == "idle"

    _wait(f"{name}: kernel started and idle", idle, 120)


def _saved_after_run(path: Path) -> nbformat.NotebookNode | None:
    """The notebook on disk once every code cell in it has run or one shows an error, else None.
    Jupyter Server saves in place (its atomic_writing keeps a backup copy, then rewrites the file),
    so a read during a save can find it empty or cut short: that is "not saved yet", not a failure."""
    try:
        nb = nbformat.read(path, as_version=4)
    except (nbformat.reader.NotJSONError, json.JSONDecodeError):
        return None
    done = all(c.get("execution_count") for c in nb.cells if c.cell_type == "code") or _errors(nb)
    return nb if done else None


def _errors(nb: nbformat.NotebookNode) -> list[str]:
    return [f"{o.get('ename')}: {o.get('evalue')}" for c in nb.cells for o in c.get("outputs", [])
            if o.get("output_type") == "error"]


def _lab_kernels(lab: Lab) -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted(lab.runtime.glob("kernel-*.json"))]


def _kernel_processes(lab: Lab) -> list[psutil.Process]:
    """The kernels of this Lab: processes started with a connection file in its runtime folder."""
    found = []
    for proc in psutil.process_iter(["cmdline"]):
        if any(arg.startswith(f"{lab.runtime}/kernel-") for arg in proc.info["cmdline"] or []):
            found.append(proc)
    return found


def test_lab_runs_the_log_explorer_and_a_study_and_draws_their_charts_in_chromium(lab, artifacts):
    from playwright.sync_api import sync_playwright

    originals = {n: (config.notebooks_dir() / n).read_bytes() for n in (LOG_EXPLORER, STUDY)}
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=lab.chromium, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.goto(lab.url)
            charts = {}
            for name in (LOG_EXPLORER, STUDY):
                shot, failed = (artifacts / f"{Path(name).stem}{end}.png" for end in ("", "-failed"))
                shot.unlink(missing_ok=True)
                failed.unlink(missing_ok=True)
                try:
                    charts[name], errors = _open_and_run_all(page, lab, name, shot)
                except Exception:
                    page.screenshot(path=str(failed))
                    raise
                assert not errors, errors
                assert charts[name], f"{name}: no plotly output in the page"
                for layers, traces, width in charts[name]:
                    assert layers >= 1 and traces >= 1 and width > 300, (name, charts[name])
                assert shot.stat().st_size > 10_000, shot
            # Lab's kernels, both still running: IPC sockets in the 0700 runtime folder, no TCP channel
            kernels = _lab_kernels(lab)
            assert len(kernels) == 2 and {k["transport"] for k in kernels} == {"ipc"}
            assert lab.runtime.stat().st_mode & 0o777 == 0o700
            for k in kernels:
                assert Path(k["ip"]).parent == lab.runtime
                assert all(Path(f"{k['ip']}-{k[p]}").is_socket()
                           for p in ("shell_port", "iopub_port", "stdin_port", "control_port", "hb_port"))
            # each kernel listens on one TCP port only: ipykernel's IOPub pipe (cassperf.report.kernel)
            listening = [[c.laddr.ip for c in proc.net_connections("inet") if c.status == psutil.CONN_LISTEN]
                         for proc in _kernel_processes(lab)]
            assert listening == [["127.0.0.1"], ["127.0.0.1"]], listening
        finally:
            browser.close()
    assert "without encryption" not in lab.log.read_text()
    assert {n: (config.notebooks_dir() / n).read_bytes() for n in originals} == originals
    print(f"screenshots: {artifacts}/{{{','.join(Path(n).stem for n in charts)}}}.png; charts {charts}")
