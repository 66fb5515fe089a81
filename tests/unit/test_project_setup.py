"""The set-up promises of the README: pins agree between pyproject.toml and environment.yml,
`make` alone lists the targets, .ci/run calls the README's test command."""

from __future__ import annotations

import re
import subprocess
import tomllib

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
    targets = re.findall(r"^([a-zA-Z_-]+):.*## ", (ROOT / "Makefile").read_text(), re.M)
    assert {"report", "test", "test-unit", "setup", "jars"} <= set(targets)
    for target in targets:
        assert f"make {target} " in out


def test_readme_opens_with_the_two_commands_and_ci_runs_the_test_one():
    readme = (ROOT / "README.md").read_text()
    first_block = readme.split("```")[1]
    assert re.findall(r"^make (\w+)", first_block, re.M) == ["report", "test"]
    assert "make test" in (ROOT / ".ci" / "run").read_text()
