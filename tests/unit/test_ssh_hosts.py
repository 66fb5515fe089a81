"""The SSH side of client hosts without hosts: options, the role's handling, the Dask TLS paths."""

from __future__ import annotations

import os
import pickle
from pathlib import Path

import pytest

from cassperf.errors import ConfigError
from cassperf.experiments import ssh_hosts
from cassperf.experiments.ssh_hosts import Role


def test_connect_options_read_the_config_file_cassperf_ssh_config_names(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    config = tmp_path / "ssh_config"
    config.write_text("Host *\n  User root\n")
    monkeypatch.setenv("CASSPERF_SSH_CONFIG", str(config))
    assert ssh_hosts.connect_options({"port": 2222}) == {"connect_timeout": 20, "config": [str(config)], "port": 2222}
    monkeypatch.delenv("CASSPERF_SSH_CONFIG")
    assert ssh_hosts.connect_options() == {"connect_timeout": 20}


def test_a_missing_config_file_and_accepting_any_host_key_are_refused(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CASSPERF_SSH_CONFIG", str(tmp_path / "nope"))
    with pytest.raises(ConfigError) as err:
        ssh_hosts.connect_options()
    assert str(err.value) == (f"CASSPERF_SSH_CONFIG={tmp_path / 'nope'}: no such file; expected an OpenSSH client "
                              f"config (Host, HostName, User, IdentityFile, UserKnownHostsFile), or unset it for "
                              f"~/.ssh/config")
    monkeypatch.delenv("CASSPERF_SSH_CONFIG")
    with pytest.raises(ConfigError) as err:
        ssh_hosts.connect_options({"known_hosts": None})
    assert str(err.value) == ("ssh connect_options known_hosts=None would accept any host key; give the client hosts' "
                              "keys in a known_hosts file (UserKnownHostsFile)")


def test_the_role_hides_its_password_in_repr_and_survives_pickling() -> None:
    role = Role("cassperf_x", "s3cret-pw")
    assert repr(role) == "Role(user='cassperf_x')" and "s3cret-pw" not in str(role)
    assert pickle.loads(pickle.dumps(role)) == role


def test_role_environment_sets_the_role_for_the_block_and_puts_back_what_was_there(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CASSPERF_USERNAME", "before")
    monkeypatch.delenv("CASSPERF_PASSWORD", raising=False)
    with ssh_hosts.role_environment(Role("u", "p")):
        assert (os.environ["CASSPERF_USERNAME"], os.environ["CASSPERF_PASSWORD"]) == ("u", "p")
    assert os.environ["CASSPERF_USERNAME"] == "before" and "CASSPERF_PASSWORD" not in os.environ
    with ssh_hosts.role_environment(None):
        assert os.environ["CASSPERF_USERNAME"] == "before"


def test_the_remote_dask_configuration_holds_paths_only() -> None:
    conf = ssh_hosts.tls_config(Path("/t/ca.pem"), Path("/t/cert.pem"), Path("/t/key.pem"))
    assert conf == {"distributed.comm.require-encryption": True, "distributed.comm.tls.ca-file": "/t/ca.pem",
                    "distributed.comm.tls.scheduler.cert": "/t/cert.pem", "distributed.comm.tls.scheduler.key": "/t/key.pem",
                    "distributed.comm.tls.worker.cert": "/t/cert.pem", "distributed.comm.tls.worker.key": "/t/key.pem",
                    "distributed.comm.tls.client.cert": "/t/cert.pem", "distributed.comm.tls.client.key": "/t/key.pem"}
