"""Model folders written whole: a folder is written under a staging name and renamed into place
only when complete, so a reader never sees a half-written model."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def staged_folder(target: Path, staging: Path) -> Iterator[Path]:
    """Yield ``staging`` (a new, empty folder) to write into; when the block ends without an
    error, ``staging`` replaces ``target`` (an older ``target`` is removed); ``staging`` is
    removed whatever happens."""
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    try:
        yield staging
        if target.exists():
            shutil.rmtree(target)
        staging.rename(target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
