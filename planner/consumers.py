"""WebSocket consumer of a plan's or grid's page: progress of its computation, and of a plan's
execution once applied (planner/live.py)."""
from __future__ import annotations

from typing import Any

from channels.generic.websocket import AsyncJsonWebsocketConsumer

from cluster.consumers import refused_reader
from planner.live import job_group


class JobConsumer(AsyncJsonWebsocketConsumer):
    """ws/plans/<id>/ joins ``plan-<id>``; ws/grids/<id>/ joins ``grid-<id>``."""

    group: str | None = None

    async def connect(self) -> None:
        if await refused_reader(self):
            return
        kwargs = self.scope["url_route"]["kwargs"]
        self.group = job_group(kwargs["kind"], kwargs["pk"])
        await self.channel_layer.group_add(self.group, self.channel_name)
        await self.accept()

    async def disconnect(self, code: int) -> None:
        if self.group is not None:
            await self.channel_layer.group_discard(self.group, self.channel_name)

    async def receive_json(self, content: Any, **kwargs: Any) -> None:
        """Pages only listen."""

    async def forward(self, event: dict[str, Any]) -> None:
        await self.send_json(event)

    job_progress = forward
    plan_progress = forward
