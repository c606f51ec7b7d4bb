"""The pages' network matrix (cluster/core/replication/netview.py) follows the units of
work that move it: cuts, sessions or a rehearsal's counts. One of the engine's
projections (composition/bootstrap.py)."""
from __future__ import annotations

from typing import Any

from cluster.adapters.hot_state import HotState
from cluster.adapters.live_batches import publish_network
from cluster.core.replication import netview
from cluster.projections.committed import Committed
from cluster.projections.live import cluster_load


class NetworkView:
    def begin(self, hot: HotState) -> Any:
        return netview.mark(hot.state)

    def committed(self, hot: HotState, mark: Any, record: Committed) -> None:
        # A shard unit saves no meta: what it changed of the links is not the cluster's.
        if record.meta_saved and netview.mark(hot.state) != mark:
            publish_network(netview.view(hot.state, record.at), cluster_load)
