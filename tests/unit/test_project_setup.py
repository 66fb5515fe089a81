"""The set-up promises of the README: pins agree between pyproject.toml and environment.yml,
`make` alone lists the targets, .ci/run calls the README's test command on an empty jar cache."""

from __future__ import annotations

import os
import re
import subprocess
import tomllib
from pathlib import Path

import yaml

from cassperf import config

ROOT = config.project_root()


def _pyproject_pins() -> dict[str, str]:
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())
    reqs = data["project"]["dependencies"] + data["project"]["optional-dependencies"]["test"]
    pins = {}
    for req in reqs:
        name, _, version = req.partition("==")
        assert version, f"{req} in pyproject.toml is not pinned with =="
        pins[name.strip().lower()] = version.strip()
    return pins


def test_environment_yml_has_the_same_pins_as_pyproject():
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    pip = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))
    conda_pins = {}
    for req in pip:
        if req.startswith("-e"):
            continue
        name, _, version = req.partition("==")
        conda_pins[name.lower()] = version
    assert conda_pins == _pyproject_pins()
    assert "python=3.11" in env["dependencies"] and "openjdk=17" in env["dependencies"]


def test_make_alone_prints_every_target_with_its_comment():
    out = subprocess.run(["make", "-s"], cwd=ROOT, capture_output=True, text=True, timeout=60).stdout
    targets = re.findall(r"^([a-zA-Z0-9_-]+):.*## ", (ROOT / "Makefile").read_text(), re.M)
    assert {"report", "test", "test-unit", "setup", "jars", "iperf3", "container"} <= set(targets)
    for target in targets:
        assert f"make {target} " in out


def _prerequisites(target: str) -> set[str]:
    line = re.search(rf"^{target}:([^#\n]*)##", (ROOT / "Makefile").read_text(), re.M)
    assert line, f"no documented target {target} in the Makefile"
    return set(line.group(1).split())


def test_make_report_installs_what_the_default_studies_use_as_make_test_does():
    # 04's container deployment (podman, runc, debootstrap), 02's network baseline (iperf3, ping)
    report = _prerequisites("report")
    assert {"jars", "container", "iperf3", "ping"} <= report
    assert report - {"jars"} <= _prerequisites("test")
    # make test resolves the jars itself, beside its quick tests, and waits for them before any node starts
    recipe = re.search(r"^test:.*\n((?:\t.*\n)+)", (ROOT / "Makefile").read_text(), re.M).group(1).splitlines()
    fetch = next(i for i, line in enumerate(recipe) if "cassperf cluster fetch --version $(CASSANDRA_VERSION)" in line)
    waited = next(i for i, line in enumerate(recipe) if "wait $$fetch" in line)
    nodes = next(i for i, line in enumerate(recipe) if '-m "(cluster or notebook)' in line)
    assert fetch < waited < nodes, recipe


def test_readme_opens_with_the_two_commands_and_ci_runs_the_test_one():
    readme = (ROOT / "README.md").read_text()
    first_block = readme.split("```")[1]
    assert re.findall(r"^make (\w+)", first_block, re.M) == ["report", "test"]
    assert "make test" in (ROOT / ".ci" / "run").read_text()


def test_ci_runs_make_test_with_an_empty_jar_cache_and_maven_repository_removed_at_exit(tmp_path):
    """.ci/run's own work, seen by the `make` it calls: a stand-in records what it was given."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    seen = tmp_path / "seen"
    (bin_dir / "make").write_text(
        "#!/bin/sh\n"
        f'{{ echo "args=$*"; echo "cwd=$(pwd)"; echo "cache=$CASSPERF_CACHE"; echo "m2=$CASSPERF_MAVEN_LOCAL_REPO"; echo "rootfs=$CASSPERF_ROOTFS_CACHE"; '
        f'echo "parent_entries=$(ls -A "$(dirname "$CASSPERF_CACHE")" | wc -l)"; }} > {seen}\n')
    (bin_dir / "make").chmod(0o755)
    env = {k: v for k, v in os.environ.items() if not k.startswith("CASSPERF_")}
    env["PATH"] = f"{bin_dir}:{env['PATH']}"
    proc = subprocess.run([str(ROOT / ".ci" / "run")], env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    got = dict(line.split("=", 1) for line in seen.read_text().splitlines())
    assert got["args"] == "test"
    assert got["cwd"] == str(ROOT)
    cache, m2 = Path(got["cache"]), Path(got["m2"])
    assert cache.parent == m2.parent and cache.name == "cache" and m2.name == "m2"
    assert got["parent_entries"] == "0", "the cache and the Maven repository start empty (not even created)"
    assert not cache.parent.exists(), ".ci/run removes its temporary folder at exit"
    assert got["rootfs"] == f"{env['HOME']}/.cache/cassperf/rootfs", "the container root filesystem is built once per machine"
