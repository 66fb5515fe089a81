"""Storage layout for the storage study: block-device facts and the guarded mdadm RAID 0 runbook."""

from cassperf.storage.raid_runbook import (Command, RunbookRefused, RunbookResult, StepRecord, format_plan,
                                           plan_raid0, run_runbook)

__all__ = ["Command", "RunbookRefused", "RunbookResult", "StepRecord", "format_plan", "plan_raid0", "run_runbook"]
