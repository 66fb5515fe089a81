"""A remote cluster's nodetool gets the JMX password in a private file, never on its command line
(any local user can read a process's command line)."""

from __future__ import annotations

import os

from cassperf.cluster.remote import RemoteCluster


def test_the_jmx_password_goes_in_a_private_file_not_on_the_command_line(tmp_path, monkeypatch):
    seen = tmp_path / "seen.txt"
    fake = tmp_path / "bin" / "nodetool"
    fake.parent.mkdir()
    # a stand-in nodetool that records its argv and the password file as it finds it
    fake.write_text('#!/bin/sh\necho "$@" > ' + str(seen) + '\nwhile [ "$1" != "-pwf" ]; do shift; done\n'
                    'stat -c "%a" "$2" >> ' + str(seen) + '\ncat "$2" >> ' + str(seen) + '\necho ok\n')
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake.parent}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.delenv("CASSANDRA_HOME", raising=False)
    monkeypatch.setenv("CASSPERF_JMX_USERNAME", "ops")
    monkeypatch.setenv("CASSPERF_JMX_PASSWORD", "hunter2-secret")
    out = RemoteCluster(["10.9.9.9"]).nodetool("10.9.9.9", "status")
    assert out.strip() == "ok"
    argv, mode, content = seen.read_text().splitlines()
    assert "hunter2-secret" not in argv and "-pwf" in argv and "-u ops" in argv
    assert mode == "600" and content == "ops hunter2-secret"
    pwf = argv.split("-pwf ", 1)[1].split()[0]
    assert not os.path.exists(pwf), "the password file is removed after the call"
