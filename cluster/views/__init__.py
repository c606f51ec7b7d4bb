"""Pages: thin shells over selectors and services (one module per page family)."""
from __future__ import annotations

from cluster.views.assets import plotly_js
from cluster.views.events import event_list
from cluster.views.heatmaps import heatmaps
from cluster.views.overview import overview
from cluster.views.partitions import partition_list
from cluster.views.spus import (spg_create_view, spg_delete_view, spg_scale_view, spu_list,
                                spu_register_view, spu_unregister_view)
from cluster.views.topics import (topic_create_view, topic_delete_view, topic_detail,
                                  topic_list, topic_upload_view)

__all__ = ["event_list", "heatmaps", "overview", "partition_list", "plotly_js",
           "spg_create_view", "spg_delete_view", "spg_scale_view", "spu_list",
           "spu_register_view", "spu_unregister_view", "topic_create_view",
           "topic_delete_view", "topic_detail", "topic_list", "topic_upload_view"]
