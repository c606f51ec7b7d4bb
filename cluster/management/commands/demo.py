"""``demo load``: the demo cluster `make run` shows, loaded once per store."""
from __future__ import annotations

from typing import Any

from cluster.management.commands._cli import SubcommandCommand
from cluster.services.demo import demo_load


class Command(SubcommandCommand):
    help = "Load the demo cluster (12 SPUs in rack-a..rack-d, two topics)."

    def add_actions(self, actions: Any) -> None:
        actions.add_parser("load", help="register the demo SPUs and topics, once per store "
                                        "(what an operator removed later stays removed)")

    def handle_load(self, **_: Any) -> None:
        done = demo_load()
        self.stdout.write("demo cluster: " + (", ".join(done) if done else
                                             "already loaded once in this store; "
                                             "nothing changed"))
