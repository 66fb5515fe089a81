"""Where things live. No import-time side effects: every function computes, nothing is created.

Environment overrides:
  CASSPERF_HOME   project root (default: the checkout this package sits in, else the cwd)
  CASSPERF_DATA   runs and local clusters (default: <root>/data)
  CASSPERF_REPORTS  executed notebooks and HTML (default: <root>/reports)
  CASSPERF_CACHE  cache for downloaded jars (default: ~/.cache/cassperf)
  CASSPERF_FIXTURES  real tool output the log explorer reads by default (default: <root>/tests/fixtures/public)
"""

from __future__ import annotations

import os
from pathlib import Path


def project_root() -> Path:
    env = os.environ.get("CASSPERF_HOME")
    if env:
        return Path(env).resolve()
    here = Path(__file__).resolve()
    for parent in here.parents:
        if (parent / "pyproject.toml").exists() and (parent / "lib" / "cassperf").is_dir():
            return parent
    return Path.cwd().resolve()


def data_dir() -> Path:
    env = os.environ.get("CASSPERF_DATA")
    return Path(env).resolve() if env else project_root() / "data"


def runs_dir() -> Path:
    return data_dir() / "runs"


def clusters_dir() -> Path:
    """One working folder per local cluster: conf, data, commitlog, hints, logs (git-ignored)."""
    return data_dir() / "clusters"


def reports_dir() -> Path:
    env = os.environ.get("CASSPERF_REPORTS")
    return Path(env).resolve() if env else project_root() / "reports"


def notebooks_dir() -> Path:
    return project_root() / "notebooks"


def cache_dir() -> Path:
    env = os.environ.get("CASSPERF_CACHE")
    if env:
        return Path(env).resolve()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg) if xdg else Path.home() / ".cache"
    return base / "cassperf"


def fixtures_dir() -> Path:
    """Real tool output from public repositories that the repository carries (tests/fixtures/public,
    each file with its source note), or CASSPERF_FIXTURES."""
    env = os.environ.get("CASSPERF_FIXTURES")
    if env:
        return Path(env)
    return project_root() / "tests" / "fixtures" / "public"


#: set in the environment of every kernel `cassperf report` runs (report.execute): the notebook
#: runs in batch, so progress goes to the report's terminal, not into the published page
BATCH_ENV = "CASSPERF_BATCH"

#: Every environment variable the workbook reads, and what it does (docs/reference/environment.md is
#: generated from this; tests/unit/test_reference_docs.py checks that the code reads no other).
#: ``<N>`` stands for a Java major version (8, 11, 17, 21).
ENVIRONMENT: dict[str, str] = {
    "CASSPERF_HOME": "the project root (default: the checkout the package sits in, else the working folder)",
    "CASSPERF_DATA": "runs and local clusters (default: <root>/data)",
    "CASSPERF_REPORTS": "executed notebooks, HTML reports and the index (default: <root>/reports)",
    "CASSPERF_CACHE": "Cassandra's jars, the Jolokia agent and compiled helpers (default: ~/.cache/cassperf)",
    "CASSPERF_ROOTFS_CACHE": "the container nodes' root filesystem, built once by debootstrap "
                             "(default: <cache>/rootfs)",
    "CASSPERF_DEBIAN_MIRROR": "the Debian mirror debootstrap builds the container root filesystem from",
    "CASSPERF_MAVEN_REPO": "a Maven repository to resolve Cassandra's jars from instead of Maven Central",
    "CASSPERF_MAVEN_LOCAL_REPO": "Maven's local repository (default: ~/.m2/repository of the account)",
    "CASSPERF_MAVEN_JAVA_HOME": "the Java Maven runs on (default: the java on PATH, whose trust store verifies "
                                "the registry)",
    "CASSPERF_JAVA<N>_HOME": "a Java of major N for nodes (a deployment's javaN; else JAVA_HOME, PATH, /usr/lib/jvm)",
    "CASSPERF_USERNAME": "the CQL role for a named cluster (never on a command line)",
    "CASSPERF_PASSWORD": "its password",
    "CASSPERF_JMX_USERNAME": "the JMX user for a named cluster's nodetool and JMX reads",
    "CASSPERF_JMX_PASSWORD": "its password",
    "CASSPERF_SSL_CA": "the CA certificate (PEM) that verifies a named cluster's client TLS",
    "CASSPERF_SSL_CERT": "a client certificate (PEM) for a cluster that asks for one",
    "CASSPERF_SSL_KEY": "its private key (PEM)",
    "CASSPERF_SSL_VERIFY": "0: do not verify the server's certificate (default 1: verify)",
    "CASSPERF_SSH_CONFIG": "an ssh_config file for the client hosts of a multi-DC study",
    "CASSPERF_NODE_JVM_OPTIONS": "JVM options for every embedded node this process starts, after cassperf's and "
                                 "before a cluster's jvm_options (the tests set -XX:TieredStopAtLevel=1 and "
                                 "-Dcassandra.memtable_row_overhead_computation_step=100); a study record says when "
                                 "it is set",
    "CASSPERF_CLASS_ARCHIVE": "where the embedded nodes' class-data archives are kept (default: "
                              "<cache>/class-archives); 0: nodes start without one",
    "CASSPERF_EVENT_LOOP": "the engine workers' event loop: uvloop (default) or asyncio",
    "CASSPERF_FIXTURES": "a folder of real tool output the log explorer imports when given no logs (default: the "
                         "repository's tests/fixtures/public; the tests do not read it)",
    "CASSPERF_FUZZ_EXAMPLES": "examples per fuzz test (tests only; CI draws a fixed set)",
    "CASSPERF_REPORT_PARAMETER_SET": "set by `cassperf report` in each notebook's kernel: the parameter set it "
                                     "runs with",
    "CASSPERF_BATCH": "set by `cassperf report` in each notebook's kernel: a batch run (no progress bars in pages)",
}
