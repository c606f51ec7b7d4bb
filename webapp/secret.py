"""SECRET_KEY: from the environment, else generated once into var/."""
from __future__ import annotations

import os
import secrets
from pathlib import Path


def load_or_create_secret(var_dir: Path) -> str:
    if os.environ.get("SECRET_KEY"):
        return os.environ["SECRET_KEY"]
    path = var_dir / "secret_key"
    if path.exists():
        return path.read_text().strip()
    var_dir.mkdir(parents=True, exist_ok=True)
    key = secrets.token_urlsafe(50)
    # Written with O_EXCL so two processes starting together agree on one key.
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return path.read_text().strip()
    with os.fdopen(fd, "w") as handle:
        handle.write(key)
    return key
