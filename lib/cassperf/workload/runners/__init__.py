"""Stress tools run as subprocesses from a WorkloadSpec, into the same run as everything else:
cassandra-stress (`stress_runner`) and latte (`latte_runner`, with its Rune workload in latte/)."""

from cassperf.workload.runners.latte_runner import latte_commands, locate_latte, run_latte
from cassperf.workload.runners.streaming import ToolNotFoundError
from cassperf.workload.runners.stress_runner import locate_cassandra_stress, run_cassandra_stress, stress_argv

__all__ = ["ToolNotFoundError", "latte_commands", "locate_cassandra_stress", "locate_latte", "run_cassandra_stress",
           "run_latte", "stress_argv"]
