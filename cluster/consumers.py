"""WebSocket consumer: authenticate at connect, join the page's group, forward."""
from __future__ import annotations

from typing import Any

from channels.generic.websocket import AsyncJsonWebsocketConsumer

from cluster.core.names import name_problem
from cluster.live import CLUSTER_GROUP, topic_group

# Close code for "not logged in": pages stop retrying fast on it.
POLICY_VIOLATION = 4401


class LiveConsumer(AsyncJsonWebsocketConsumer):
    """ws/cluster/ joins ``cluster``; ws/topics/<name>/ joins ``topic-<name>``."""

    group: str | None = None

    async def connect(self) -> None:
        user = self.scope.get("user")
        if user is None or not user.is_authenticated:
            await self.close(code=POLICY_VIOLATION)
            return
        self.group = self._group_for(self.scope["url_route"]["kwargs"].get("name"))
        if self.group is None:
            await self.close()
            return
        await self.channel_layer.group_add(self.group, self.channel_name)
        await self.accept()

    @staticmethod
    def _group_for(topic: str | None) -> str | None:
        if topic is None:
            return CLUSTER_GROUP
        return None if name_problem(topic) else topic_group(topic)

    async def disconnect(self, code: int) -> None:
        if self.group is not None:
            await self.channel_layer.group_discard(self.group, self.channel_name)

    async def receive_json(self, content: Any, **kwargs: Any) -> None:
        """Pages only listen; anything they send is ignored."""

    async def forward(self, event: dict[str, Any]) -> None:
        await self.send_json(event)

    cluster_changed = forward
    partition_changed = forward
    topic_changed = forward
