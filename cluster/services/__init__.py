"""Use cases: the only code that writes the store. One transaction each."""
from cluster.services.events import log_event
from cluster.services.groups import spg_create, spg_delete, spg_reconcile_invalid, spg_scale
from cluster.services.spus import (spu_connect, spu_register, spu_set_resolution,
                                   spu_unregister, spu_update)
from cluster.services.topics import (TopicOutcome, topic_create, topic_delete,
                                     topics_reconcile_waiting)

__all__ = ["log_event", "spg_create", "spg_delete", "spg_reconcile_invalid", "spg_scale",
           "spu_connect", "spu_register", "spu_set_resolution", "spu_unregister", "spu_update",
           "TopicOutcome", "topic_create", "topic_delete", "topics_reconcile_waiting"]
