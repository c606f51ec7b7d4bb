"""Set up Django on a throwaway SQLite database for a benchmark script."""
from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def setup_throwaway_django() -> Path:
    sys.path.insert(0, str(ROOT))
    workdir = Path(tempfile.mkdtemp(prefix="bench-"))
    os.environ.setdefault("DATABASE_URL", f"sqlite:///{workdir / 'bench.sqlite3'}")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "webapp.settings")
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)
    return workdir
