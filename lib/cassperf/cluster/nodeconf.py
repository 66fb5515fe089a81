"""Render one local node's configuration: cassandra.yaml, logback.xml,
cassandra-rackdc.properties, and the JVM command line.

Only the keys that must differ from Cassandra's defaults are written (see
../shared/CASSANDRA_LOCAL.md); user overrides are merged on top as a dict.
"""

from __future__ import annotations

import os
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from cassperf.cluster.access import ClusterAccess
from cassperf.cluster.topology import NodeSpec
from cassperf.errors import ConfigError

# From conf/jvm17-server.options (Cassandra 5.0): JPMS exports/opens the server needs.
SERVER_JPMS = [
    "-Djdk.attach.allowAttachSelf=true",
    "--add-exports", "java.base/jdk.internal.misc=ALL-UNNAMED",
    "--add-exports", "java.management.rmi/com.sun.jmx.remote.internal.rmi=ALL-UNNAMED",
    "--add-exports", "java.rmi/sun.rmi.registry=ALL-UNNAMED",
    "--add-exports", "java.rmi/sun.rmi.server=ALL-UNNAMED",
    "--add-exports", "java.sql/java.sql=ALL-UNNAMED",
    "--add-exports", "java.base/java.lang.ref=ALL-UNNAMED",
    "--add-exports", "jdk.unsupported/sun.misc=ALL-UNNAMED",
    "--add-exports", "jdk.compiler/com.sun.tools.javac.file=ALL-UNNAMED",
    "--add-exports", "jdk.attach/sun.tools.attach=ALL-UNNAMED",
    "--add-opens", "java.base/java.lang.module=ALL-UNNAMED",
    "--add-opens", "java.base/jdk.internal.loader=ALL-UNNAMED",
    "--add-opens", "java.base/jdk.internal.ref=ALL-UNNAMED",
    "--add-opens", "java.base/jdk.internal.reflect=ALL-UNNAMED",
    "--add-opens", "java.base/jdk.internal.math=ALL-UNNAMED",
    "--add-opens", "java.base/jdk.internal.module=ALL-UNNAMED",
    "--add-opens", "java.base/jdk.internal.util.jar=ALL-UNNAMED",
    "--add-opens", "jdk.management/com.sun.management.internal=ALL-UNNAMED",
    "--add-opens", "java.base/sun.nio.ch=ALL-UNNAMED",
    "--add-opens", "java.base/java.io=ALL-UNNAMED",
    "--add-opens", "java.base/java.lang.reflect=ALL-UNNAMED",
    "--add-opens", "jdk.compiler/com.sun.tools.javac=ALL-UNNAMED",
    "--add-opens", "java.base/java.lang=ALL-UNNAMED",
    "--add-opens", "java.base/java.util=ALL-UNNAMED",
]

# From conf/jvm17-clients.options: without these NodeTool fails with
# "IllegalAccessException ... DirectBuffer.cleaner".
CLIENT_JPMS = [
    "-Djdk.attach.allowAttachSelf=true",
    "--add-exports", "java.base/jdk.internal.misc=ALL-UNNAMED",
    "--add-exports", "java.base/jdk.internal.ref=ALL-UNNAMED",
    "--add-exports", "java.base/sun.nio.ch=ALL-UNNAMED",
    "--add-exports", "java.management.rmi/com.sun.jmx.remote.internal.rmi=ALL-UNNAMED",
    "--add-exports", "java.rmi/sun.rmi.registry=ALL-UNNAMED",
    "--add-exports", "java.rmi/sun.rmi.server=ALL-UNNAMED",
    "--add-exports", "java.sql/java.sql=ALL-UNNAMED",
    "--add-exports", "jdk.unsupported/sun.misc=ALL-UNNAMED",
    "--add-opens", "java.base/java.lang.module=ALL-UNNAMED",
    "--add-opens", "java.base/jdk.internal.loader=ALL-UNNAMED",
    "--add-opens", "java.base/jdk.internal.ref=ALL-UNNAMED",
    "--add-opens", "java.base/jdk.internal.reflect=ALL-UNNAMED",
    "--add-opens", "java.base/jdk.internal.math=ALL-UNNAMED",
    "--add-opens", "java.base/jdk.internal.module=ALL-UNNAMED",
    "--add-opens", "java.base/jdk.internal.util.jar=ALL-UNNAMED",
    "--add-opens", "jdk.management/com.sun.management.internal=ALL-UNNAMED",
    "--add-opens", "java.base/sun.nio.ch=ALL-UNNAMED",
    "--add-opens", "java.base/java.io=ALL-UNNAMED",
    "--add-opens", "java.base/java.util.concurrent=ALL-UNNAMED",
    "--add-opens", "java.base/java.util=ALL-UNNAMED",
    "--add-opens", "java.base/java.util.concurrent.atomic=ALL-UNNAMED",
    "--add-opens", "java.base/java.lang=ALL-UNNAMED",
    "--add-opens", "java.base/java.math=ALL-UNNAMED",
    "--add-opens", "java.base/java.lang.reflect=ALL-UNNAMED",
    "--add-opens", "java.base/java.net=ALL-UNNAMED",
]

# From conf/jvm17-server.options and jvm-server.options: G1 and general settings.
SERVER_GC = [
    "-XX:+UseG1GC", "-XX:+ParallelRefProcEnabled", "-XX:MaxTenuringThreshold=1",
    "-XX:G1HeapRegionSize=16m", "-XX:G1RSetUpdatingPauseTimePercent=5", "-XX:MaxGCPauseMillis=300",
    "-XX:InitiatingHeapOccupancyPercent=70",
    "-Xss256k", "-XX:+UseTLAB", "-XX:+ResizeTLAB", "-XX:+PerfDisableSharedMem",
    "-XX:+HeapDumpOnOutOfMemoryError", "-XX:StringTableSize=1000003",
    "-Djava.net.preferIPv4Stack=true",
    "-Dio.netty.tryReflectionSetAccessible=true",
    "-Dio.netty.allocator.useCacheForAllThreads=true", "-Dio.netty.allocator.maxOrder=11",
]

#: Fresh-cluster boot: skip the 30 s ring-delay wait (36-39 s -> about 7 s per node).
FAST_BOOT = ["-Dcassandra.ring_delay_ms=1000", "-Dcassandra.skip_wait_for_gossip_to_settle=0"]

_LOGBACK = """<configuration scan="false">
  <appender name="SYSTEMLOG" class="ch.qos.logback.core.rolling.RollingFileAppender">
    <file>{logdir}/system.log</file>
    <rollingPolicy class="ch.qos.logback.core.rolling.SizeAndTimeBasedRollingPolicy">
      <fileNamePattern>{logdir}/system.log.%d{{yyyy-MM-dd}}.%i.zip</fileNamePattern>
      <maxFileSize>50MB</maxFileSize><maxHistory>7</maxHistory><totalSizeCap>1GB</totalSizeCap>
    </rollingPolicy>
    <encoder><pattern>%-5level [%thread] %date{{ISO8601}} %F:%L - %msg%n</pattern></encoder>
  </appender>
  <root level="INFO"><appender-ref ref="SYSTEMLOG" /></root>
  <logger name="org.apache.cassandra" level="INFO"/>
</configuration>
"""

_LOGBACK_TOOLS = """<configuration scan="false">
  <appender name="STDERR" class="ch.qos.logback.core.ConsoleAppender">
    <target>System.err</target>
    <encoder><pattern>%-5level %date{ISO8601} %msg%n</pattern></encoder>
  </appender>
  <root level="WARN"><appender-ref ref="STDERR" /></root>
</configuration>
"""


@dataclass(frozen=True)
class NodePorts:
    native: int = 9042
    storage: int = 7000
    jmx: int = 7199
    jolokia: int = 8778


@dataclass
class NodeLayout:
    """Folders of one node under the cluster's working folder."""

    root: Path

    @property
    def conf(self) -> Path: return self.root / "conf"
    @property
    def data(self) -> Path: return self.root / "data"
    @property
    def commitlog(self) -> Path: return self.root / "commitlog"
    @property
    def hints(self) -> Path: return self.root / "hints"
    @property
    def saved_caches(self) -> Path: return self.root / "saved_caches"
    @property
    def logs(self) -> Path: return self.root / "logs"
    @property
    def pid_file(self) -> Path: return self.root / "cassandra.pid"
    @property
    def system_log(self) -> Path: return self.logs / "system.log"
    @property
    def gc_log(self) -> Path: return self.logs / "gc.log"
    @property
    def stdout_log(self) -> Path: return self.logs / "stdout.log"

    def make(self) -> None:
        for d in (self.conf, self.data, self.commitlog, self.hints, self.saved_caches, self.logs):
            d.mkdir(parents=True, exist_ok=True)


def deep_merge(base: dict[str, Any], overrides: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in overrides.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = deep_merge(out[key], value)
        else:
            out[key] = value
    return out


def cassandra_yaml(cluster_name: str, node: NodeSpec, seeds: list[str], layout: NodeLayout, ports: NodePorts,
                   overrides: dict[str, Any] | None = None, auto_bootstrap: bool = False,
                   security: dict[str, Any] | None = None) -> dict[str, Any]:
    """The node's cassandra.yaml: cassperf's keys, then `security` (authentication, encryption:
    cluster.role_manager, cluster.tls), then the user's `overrides` on top."""
    conf: dict[str, Any] = {
        "cluster_name": cluster_name,
        "num_tokens": 16,
        "allocate_tokens_for_local_replication_factor": 3,
        "partitioner": "org.apache.cassandra.dht.Murmur3Partitioner",
        "data_file_directories": [str(layout.data)],
        "commitlog_directory": str(layout.commitlog),
        "saved_caches_directory": str(layout.saved_caches),
        "hints_directory": str(layout.hints),
        "commitlog_sync": "periodic",
        "commitlog_sync_period": "10000ms",
        "seed_provider": [{"class_name": "org.apache.cassandra.locator.SimpleSeedProvider",
                           "parameters": [{"seeds": ",".join(f"{s}:{ports.storage}" for s in seeds)}]}],
        "listen_address": node.address,
        "rpc_address": node.address,
        "storage_port": ports.storage,
        "native_transport_port": ports.native,
        "start_native_transport": True,
        "endpoint_snitch": "GossipingPropertyFileSnitch",
        "auto_bootstrap": auto_bootstrap,
    }
    return deep_merge(deep_merge(conf, security or {}), overrides or {})


@dataclass
class JvmSettings:
    heap_mb: int = 1024
    extra: list[str] = field(default_factory=list)      # the user's jvm_options, last on the line
    fast_boot: bool = True
    cluster: list[str] = field(default_factory=list)    # cassperf's per-cluster options (role manager), before extra
    classpath: list[Path] = field(default_factory=list)  # folders before the jars (the role manager's classes)


def jolokia_agent_option(jolokia: Path, access: ClusterAccess, node: NodeSpec, ports: NodePorts) -> str:
    """`-javaagent:` for Jolokia: user, password and policy come from the cluster's properties
    file (`config=`), so no password is on the command line; host and port are the node's."""
    props = access.jolokia_properties
    if "," in str(props):
        raise ConfigError(f"the cluster folder {access.folder.parent} has a ',' in its path, which the Jolokia "
                          "agent's option list cannot carry; choose a cluster root without ','")
    return f"-javaagent:{jolokia}=config={props},port={ports.jolokia},host={node.address},discoveryEnabled=false"


def jmx_auth_options(access: ClusterAccess) -> list[str]:
    """Cassandra's JMX server asks for a user and password (the cluster's jmxremote.password,
    mode 0600: the JDK refuses a password file others can read) and grants what
    jmxremote.access says (readonly / readwrite)."""
    # the export: Cassandra builds the JDK's file-based JMX authenticator, which lives in a package
    # java.management does not export (without it the node dies at start: IllegalAccessException)
    return ["--add-exports", "java.management/com.sun.jmx.remote.security=ALL-UNNAMED",
            "-Dcom.sun.management.jmxremote.authenticate=true",
            f"-Dcom.sun.management.jmxremote.password.file={access.jmx_password_file}",
            f"-Dcom.sun.management.jmxremote.access.file={access.jmx_access_file}"]


#: Not Cassandra's: the JIT compiles hot code after a tenth of HotSpot's usual invocation counts,
#: so that its work lands in the warm-up rather than in the measured runs. An embedded cluster
#: shares few cores with the client, and there the C2 compiler threads of 3 nodes took most of a
#: core well into the first measured block, which made block 1's runs a fraction of later blocks';
#: with it a study's runs stay near their arm's mean and the A/A MDE shrinks several times
#: (docs/measurements.md).
#: The code the JIT ends with is C2's either way; only when it compiles moves. A user's own
#: jvm_options come later on the line and win (-XX:CompileThresholdScaling=1.0 undoes it).
EMBEDDED_JIT = ["-XX:CompileThresholdScaling=0.1"]

#: JVM options from the environment for every embedded node this process starts: after cassperf's
#: own, before a cluster's jvm_options (which win). make test sets -XX:TieredStopAtLevel=1 (the
#: tests' short-lived nodes spent much of the two cores on C2 compilations no test measures); a
#: study's record says when it is set.
ENV_JVM_OPTIONS = "CASSPERF_NODE_JVM_OPTIONS"


def env_jvm_options() -> list[str]:
    """The options CASSPERF_NODE_JVM_OPTIONS names, split as a shell would ([] when unset)."""
    try:
        return shlex.split(os.environ.get(ENV_JVM_OPTIONS, ""))
    except ValueError as exc:
        raise ConfigError(f"{ENV_JVM_OPTIONS}={os.environ[ENV_JVM_OPTIONS]!r}: {exc}; quote as a shell would, "
                          f"e.g. {ENV_JVM_OPTIONS}='-XX:TieredStopAtLevel=1 -Dname=\"a b\"'") from None


def env_jvm_note(recorded: list[str] | None = None) -> str | None:
    """The study record's line when the nodes ran with CASSPERF_NODE_JVM_OPTIONS, else None:
    `recorded` as a started cluster's cluster.json holds them, else (a cluster the study starts)
    as set now."""
    found = env_jvm_options() if recorded is None else recorded
    if not found:
        return None
    return f"the embedded nodes ran with {ENV_JVM_OPTIONS}={' '.join(found)} from the environment"


def server_command(java: Path, jars_classpath: str, jamm: Path, jolokia: Path | None, node: NodeSpec,
                   layout: NodeLayout, ports: NodePorts, jvm: JvmSettings, access: ClusterAccess) -> list[str]:
    """The java command line of one node. The jars lead the classpath, as the class-data archive
    they were dumped with requires (cassperf.cluster.class_archive); then the conf dir, from which
    the snitch loads cassandra-rackdc.properties (no jar has one). Both management ports (Jolokia,
    JMX) require the cluster's credentials (`access`)."""
    cmd = [str(java), "-ea", f"-javaagent:{jamm}"]
    if jolokia is not None:
        cmd.append(jolokia_agent_option(jolokia, access, node, ports))
    cmd += [f"-Xms{jvm.heap_mb}m", f"-Xmx{jvm.heap_mb}m"]
    cmd += SERVER_GC + EMBEDDED_JIT + env_jvm_options() + SERVER_JPMS
    cmd += [f"-Xlog:gc*,safepoint:file={layout.gc_log}:time,uptime,level,tags:filecount=10,filesize=20m"]
    cmd += [
        f"-Dcassandra.jmx.local.port={ports.jmx}",
        *jmx_auth_options(access),
        f"-Dcassandra.config=file://{layout.conf / 'cassandra.yaml'}",
        f"-Dlogback.configurationFile=file://{layout.conf / 'logback.xml'}",
        f"-Dcassandra.logdir={layout.logs}",
        f"-Dcassandra.storagedir={layout.root}",
        "-Dcassandra-foreground=yes",
        f"-Dcassperf.node={layout.root}",   # marks the process as ours (checked before any signal)
    ]
    if jvm.fast_boot:
        cmd += FAST_BOOT
    cmd += list(jvm.cluster) + list(jvm.extra)
    classpath = ":".join([jars_classpath, str(layout.conf), *(str(p) for p in jvm.classpath)])
    cmd += ["-cp", classpath, "org.apache.cassandra.service.CassandraDaemon"]
    return cmd


def write_node_conf(layout: NodeLayout, yaml_conf: dict[str, Any], node: NodeSpec) -> None:
    layout.make()
    (layout.conf / "cassandra.yaml").write_text(yaml.safe_dump(yaml_conf, sort_keys=False))
    (layout.conf / "logback.xml").write_text(_LOGBACK.format(logdir=layout.logs))
    (layout.conf / "logback-tools.xml").write_text(_LOGBACK_TOOLS)
    (layout.conf / "cassandra-rackdc.properties").write_text(f"dc={node.dc}\nrack={node.rack}\n")
