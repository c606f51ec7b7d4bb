"""Naming rules shared by topics and SPU groups (Fluvio's, DNS-label like)."""
from __future__ import annotations

import re

MAX_NAME_LENGTH = 63
# Checked with fullmatch: under .match, "$" also matches before a trailing newline.
NAME_PATTERN = r"^[a-z0-9]([a-z0-9-]*[a-z0-9])?$"
_NAME = re.compile(NAME_PATTERN)


def name_problem(name: str, kind: str = "topic") -> str | None:
    """Why ``name`` is not a valid object name, or None when it is."""
    if not name:
        return f"{kind} name is required"
    if len(name) > MAX_NAME_LENGTH:
        return f"{kind} name is {len(name)} characters; at most {MAX_NAME_LENGTH} allowed"
    if not _NAME.fullmatch(name):
        return (f"{kind} name {name!r} may contain only lowercase letters, digits "
                f"and '-', and must start and end with a letter or digit")
    return None
