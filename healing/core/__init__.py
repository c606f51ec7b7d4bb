"""Self-healing's pure core: detection, the anomaly lifecycle and the fixes (no Django)."""
from __future__ import annotations

from typing import TYPE_CHECKING

from cluster.core.lazy import lazy_exports

# Each module loads when one of its names is first used (cluster/core/lazy.py): the
# models need a few enums, not every rule of the core, at every command's start.
if TYPE_CHECKING:
    from healing.core.detect import (InLrs, LrsChange, Tally, detect, in_lrs, in_lrs_changed,
                                     in_lrs_moved, lrs_changed, new_shrinks, shrinks_in_window,
                                     shrinks_of, tally, tally_basis, tally_moved)
    from healing.core.fixes import Fix, plan_fix, target_of
    from healing.core.lifecycle import (advance, due, held, moves_allowed, planned, preempt, resume,
                                        plan_ended)
    from healing.core.model import (OPEN_STATES, SETTING_NAMES, Anomaly, AnomalyState, AnomalyType,
                                    Finding, Mode, PartitionView, SettingError, Settings, Snapshot,
                                    SpuView, check_thresholds, parse_setting, settings_from)


__all__ = [
    "OPEN_STATES", "SETTING_NAMES", "Anomaly", "AnomalyState", "AnomalyType", "Finding", "Fix",
    "InLrs", "LrsChange", "Mode", "PartitionView", "SettingError", "Settings", "Snapshot",
    "SpuView", "Tally", "advance", "check_thresholds", "detect", "due", "held", "in_lrs",
    "in_lrs_changed", "in_lrs_moved", "lrs_changed", "moves_allowed", "new_shrinks",
    "parse_setting", "plan_ended", "plan_fix", "planned", "preempt", "resume", "settings_from",
    "shrinks_in_window", "shrinks_of", "tally", "tally_basis", "tally_moved", "target_of",
]

if not TYPE_CHECKING:
    lazy_exports(__name__, __file__)
