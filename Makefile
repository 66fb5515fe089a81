# cassperf — `make` alone lists the targets.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml | sha1sum | cut -c1-12)
CASSANDRA_VERSION ?= 5.0.6
LATTE_VERSION ?= 0.29.0
UV_VERSION ?= 0.13.9
PYTEST_ARGS ?=
PARAMS ?= local
LAB_PORT ?= 8888
LAB_DIR ?= notebooks

.DEFAULT_GOAL := help

.PHONY: help setup docs jars browser mdadm ping iperf3 sshd container report lab test test-unit latte bench cluster-start cluster-status cluster-stop cluster-destroy clean

help: ## list the targets
	@grep -hE '^[a-zA-Z0-9_-]+:.*## ' $(MAKEFILE_LIST) | awk 'BEGIN {FS = ":.*## "} {printf "  make %-16s %s\n", $$1, $$2}'

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "cassperf needs Python >= 3.11, found " + sys.version.split()[0])'
	$(PYTHON) -m venv $(VENV)
	@echo "installing uv, then with it the pinned dependencies into $(VENV) (about 25 s with an empty uv cache, quiet meanwhile)"
	$(BIN)/pip install -q uv==$(UV_VERSION)
	$(BIN)/uv pip install -q --python $(BIN)/python -e '.[test]'
	@rm -f $(VENV)/.installed-*
	@touch $@

setup: $(STAMP) ## create .venv and install the pinned dependencies
	@echo "cassperf installed in $(VENV)"

docs: setup ## write the generated reference pages (docs/reference) from the code; make test checks they are current
	$(BIN)/cassperf reference

jars: setup ## resolve Cassandra's jars from Maven Central into the cache (reused later; progress on stderr)
	$(BIN)/cassperf cluster fetch --version $(CASSANDRA_VERSION)

# 04's default container deployment needs podman, runc and debootstrap, 02's network baseline iperf3
# and ping: installed as root, as for make test; without root cassperf report says what is missing.
report: jars container iperf3 ping ## main job: the report notebooks on the embedded local cluster -> reports/index.html (PARAMS=local|FILE.yaml; the paper set needs your cluster: cassperf report --params paper -p contact_points ...); as root installs what 02 and 04 use
	$(BIN)/cassperf report --params $(PARAMS)

# Kernels talk to the server over Unix sockets in Jupyter's runtime folder (0700), not TCP.
lab: setup ## JupyterLab on notebooks/ (LAB_DIR), local only (127.0.0.1:LAB_PORT, token auth, IPC kernels): open the URL it prints
	@echo "JupyterLab on http://127.0.0.1:$(LAB_PORT)/lab (local only); the URL with its token follows. Ctrl-C stops it."
	$(BIN)/jupyter lab --notebook-dir=$(LAB_DIR) --ServerApp.ip=127.0.0.1 --ServerApp.port=$(LAB_PORT) --ServerApp.open_browser=False --KernelManager.transport=ipc $$([ "$$(id -u)" = 0 ] && echo --allow-root)

browser: ## headless Chromium (Debian package) for the browser checks of HTML reports
	@command -v chromium >/dev/null || { \
	  if [ "$$(id -u)" != 0 ]; then echo "chromium absent and not root: browser checks will be skipped (sudo apt-get install chromium)"; \
	  else echo "installing chromium (apt-get, about a minute)"; \
	    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; } \
	      || echo "apt-get install chromium failed: browser checks will be skipped"; fi; }

mdadm: ## mdadm (Debian package, no recommends) for the RAID runbook's tests; needs root
	@command -v mdadm >/dev/null || { [ "$$(id -u)" = 0 ] && (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends mdadm >/dev/null) || echo "mdadm absent and not root: the runbook's mdadm tests will be skipped (apt-get install mdadm)"; }
	@command -v mdadm >/dev/null && mdadm --version || true

ping: ## iputils ping (Debian package) for the DC-distance tests' RTT checks and the multi-DC study's network baseline; needs root
	@command -v ping >/dev/null || { [ "$$(id -u)" = 0 ] && (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends iputils-ping >/dev/null) || echo "ping absent and not root: the DC-distance RTT test will fail with that hint (apt-get install iputils-ping)"; }

iperf3: ## iperf3 (Debian package) for the multi-DC study's network baseline; needs root
	@command -v iperf3 >/dev/null || { [ "$$(id -u)" = 0 ] && (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends iperf3 >/dev/null) || echo "iperf3 absent and not root: the multi-DC report's iperf3 rows say 'not measured' (apt-get install iperf3)"; }

sshd: ## openssh-server (Debian package, no recommends) for the SSH client-host tests (a real sshd per host namespace); needs root
	@command -v /usr/sbin/sshd >/dev/null || { [ "$$(id -u)" = 0 ] && (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=600 --no-install-recommends openssh-server >/dev/null) || echo "openssh-server absent and not root: the SSH client-host tests skip (apt-get install openssh-server)"; }

container: ## podman, runc and debootstrap (Debian packages) for container nodes (deployment `VERSION:javaN:container`); needs root
	@{ command -v podman && command -v runc && command -v debootstrap; } >/dev/null || { [ "$$(id -u)" = 0 ] && (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=600 --no-install-recommends podman runc debootstrap >/dev/null) || echo "podman, runc or debootstrap absent and not root: the container-node tests skip and container deployments are not made (apt-get install podman runc debootstrap)"; }
	@podman --version 2>/dev/null || true

# Three phases, each on its own pytest: the quick tests two files at a time; the node and kernel
# tests two files at a time (a run's load lasts its seconds whoever shares the cores); then the
# `alone` ones one at a time (timing, latency and page-cache assertions a neighbour would move).
# The quick phase hands files out in tests/conftest.py's order, those marked `long` first
# (--no-loadscope-reorder; xdist's own order is most tests first). The node phase keeps xdist's
# order: with the study notebooks first they ran side by side and slowed each other to about
# twice their time alone (CI of 63c8e85: that phase took 1,814 s against 1,344 s).
# Cassandra's jars resolve (Maven, mostly waiting on the registry: 13 s for 5.0.6 and 8 s for Jolokia
# into CI's empty Maven repository at 957bc8f) beside the quick tests, which start no node.
test: setup browser mdadm ping iperf3 sshd container ## all tests, real Cassandra nodes included: quick ones and node ones two files at a time, then the `alone` ones one at a time
	$(BIN)/cassperf cluster fetch --version $(CASSANDRA_VERSION) > $(VENV)/jars.log 2>&1 & fetch=$$!; \
	  $(BIN)/pytest -m "not cluster and not notebook" -n 2 --dist loadfile --no-loadscope-reorder $(PYTEST_ARGS); rc=$$?; \
	  wait $$fetch || { cat $(VENV)/jars.log; echo "make test: Cassandra's jars did not resolve (above)"; exit 1; }; \
	  [ $$rc = 0 ] || [ $$rc = 5 ]
	$(BIN)/pytest -m "(cluster or notebook) and not alone" -n 2 --dist loadfile $(PYTEST_ARGS) || [ $$? = 5 ]
	$(BIN)/pytest -m "(cluster or notebook) and alone" $(PYTEST_ARGS) || [ $$? = 5 ]

test-unit: setup ## quick tests only (no Cassandra nodes)
	$(BIN)/pytest -m "not cluster and not notebook" $(PYTEST_ARGS)

latte: ## optional: build the latte stress tool (crates.io latte-cli, ~10 min; needs cargo, pkg-config, libssl-dev)
	@command -v cargo >/dev/null || { echo "make latte needs Rust's cargo (https://rustup.rs)"; exit 1; }
	cargo install latte-cli --version $(LATTE_VERSION) --locked
	@$${CARGO_HOME:-$$HOME/.cargo}/bin/latte --version

bench: jars ## benchmarks under bench/ (print their figures; about 55 minutes)
	$(BIN)/python bench/wakeup_cost.py
	$(BIN)/python bench/cluster_start.py
	$(BIN)/python bench/parse.py
	$(BIN)/python bench/engine.py
	$(BIN)/python bench/delay_router.py
	$(BIN)/python bench/analysis.py
	$(BIN)/python bench/calibration.py
	$(BIN)/python bench/tls.py
	$(BIN)/python bench/profile_overhead.py

cluster-start: jars ## start (or reuse) the embedded cluster (TOPOLOGY=dc1:1)
	$(BIN)/cassperf cluster start --topology $${TOPOLOGY:-dc1:1}

cluster-status: setup ## which nodes of the embedded cluster are up
	$(BIN)/cassperf cluster status --topology $${TOPOLOGY:-dc1:1}

cluster-stop: setup ## stop the embedded cluster
	$(BIN)/cassperf cluster stop --topology $${TOPOLOGY:-dc1:1}

cluster-destroy: setup ## stop the embedded cluster and remove its data
	$(BIN)/cassperf cluster destroy --topology $${TOPOLOGY:-dc1:1}

clean: ## remove generated reports (runs and clusters under data/ are kept)
	rm -rf reports/*.html reports/executed
