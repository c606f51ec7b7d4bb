"""``kafka-broker-api-versions.sh`` output: the header line of each broker.

A header is Kafka's ``Node.toString()`` then `` -> (``: ``host:port (id: B rack: R) -> (``,
with ``rack: null`` when unset; newer clients add `` isFenced: false`` before the ``)``
(confirmed against Node.java and BrokerApiVersionsCommand). The API lines that follow,
up to a line ``)``, are skipped.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from planner.core.kafka_import.errors import ImportFormatError

_HEADER = re.compile(r"^(?P<host>\S+):(?P<port>\d+) \(id: (?P<id>-?\d+) rack: (?P<rack>.*?)"
                     r"(?: isFenced: (?:true|false))?\) -> \($")


@dataclass(frozen=True)
class Broker:
    id: int
    host: str
    port: int
    rack: str | None
    line: int

    @property
    def endpoint(self) -> str:
        return f"{self.host}:{self.port}"


def parse_brokers(text: str, source: str = "brokers") -> dict[int, Broker]:
    brokers: dict[int, Broker] = {}
    inside = False
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line:
            continue
        if inside:
            inside = line != ")"
            continue
        match = _HEADER.match(line)
        if not match:
            raise ImportFormatError(source, number, "a broker header 'host:port (id: B rack: R)"
                                    " -> ('", raw)
        broker_id = int(match["id"])
        if broker_id < 0:
            raise ImportFormatError(source, number, "a non-negative broker id", raw)
        if broker_id in brokers:
            raise ImportFormatError(source, number, f"broker {broker_id} listed once", raw)
        rack = match["rack"]
        brokers[broker_id] = Broker(broker_id, match["host"], int(match["port"]),
                                    None if rack in ("null", "") else rack, number)
        inside = True
    if inside:
        raise ImportFormatError(source, len(text.splitlines()), "')' closing the last broker")
    if not brokers:
        raise ImportFormatError(source, 1, "at least one broker header 'host:port (id: B "
                                "rack: R) -> ('")
    return brokers
