"""Cluster and host metrics sampled beside a workload (see `sampler.ClusterSampler`).

Sources: CQL virtual tables (`virtual_tables`), JMX over HTTP (`jolokia_source`), nodetool as
the fallback (`nodetool_source`), psutil for the host and local node processes (`host`).
Metric names and units: `names`.
"""

from cassperf.sampler.base import NodeRef, Outcome, Reading, Source, cluster_nodes
from cassperf.sampler.host import HostSource
from cassperf.sampler.jolokia_source import JolokiaSource
from cassperf.sampler.names import METRICS, POOL_FIELDS, HOST_METRICS, MetricName, split_metric, table_metric
from cassperf.sampler.nodetool_source import NodetoolSource
from cassperf.sampler.sampler import ClusterSampler
from cassperf.sampler.virtual_tables import VirtualTablesSource

__all__ = ["ClusterSampler", "HostSource", "JolokiaSource", "NodetoolSource", "VirtualTablesSource", "NodeRef",
           "Outcome", "Reading", "Source", "cluster_nodes", "METRICS", "POOL_FIELDS", "HOST_METRICS", "MetricName",
           "split_metric", "table_metric"]
