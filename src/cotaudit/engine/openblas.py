"""Optional OpenBLAS for MLX on Linux CPU.

The ``mlx[cpu]`` wheel bundles a slow reference BLAS. Loading Debian's OpenBLAS
(``libopenblas0-pthread``) before MLX is imported (``LD_PRELOAD=.../libopenblas.so.0``, or
:func:`preload_openblas`, which ``COTAUDIT_MLX_OPENBLAS=1`` or ``-M openblas=true`` turn on)
makes MLX's matrix products resolve to it and speeds prompt processing many times;
:func:`openblas_status` reports what this process has. Never required; irrelevant on Apple
silicon (Metal). Importing this module never imports MLX.

``python -m cotaudit.engine.openblas`` (or ``python -m cotaudit.engine.mlx``) prints the state.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
import os
import sys
from dataclasses import dataclass
from pathlib import Path

logger = logging.getLogger(__name__)

OPENBLAS_ENV = "COTAUDIT_MLX_OPENBLAS"
OPENBLAS_SONAME = "libopenblas.so.0"
_OPENBLAS_DIRS = (
    "/usr/lib/x86_64-linux-gnu",
    "/usr/lib/aarch64-linux-gnu",
    "/usr/lib64",
    "/usr/lib",
    "/usr/local/lib",
)


@dataclass(frozen=True)
class OpenBLASStatus:
    """What this process has for MLX's CPU matrix products."""

    applies: bool
    """True on Linux (the ``mlx[cpu]`` wheel); False on macOS, where MLX uses Metal/Accelerate."""
    loaded: bool
    """An OpenBLAS library is mapped into this process."""
    loaded_path: str | None
    available_path: str | None
    """A ``libopenblas.so.0`` that could be preloaded, or None."""
    mlx_imported: bool
    """MLX is already imported: preloading now is too late (use ``LD_PRELOAD``)."""

    @property
    def hint(self) -> str:
        """One line: what (if anything) to do."""
        if not self.applies:
            return "not applicable on this platform (MLX does not use the bundled BLAS here)"
        if self.loaded:
            return f"OpenBLAS is loaded ({self.loaded_path})"
        if self.available_path is None:
            return (
                "OpenBLAS not found; optional speed-up on Linux CPU: "
                "apt-get install libopenblas0-pthread"
            )
        return (
            f"OpenBLAS is available but not loaded: run with {OPENBLAS_ENV}=1 "
            f"(or LD_PRELOAD={self.available_path}) for much faster MLX prompt processing"
        )


def _mapped_openblas() -> str | None:
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as f:
            for line in f:
                name = line.rsplit(" ", 1)[-1].strip()
                if "libopenblas" in os.path.basename(name):
                    return name
    except OSError:
        return None
    return None


def find_openblas() -> str | None:
    """Path of a system ``libopenblas.so.0`` (Debian: ``libopenblas0-pthread``), or None."""
    for d in _OPENBLAS_DIRS:
        p = Path(d) / OPENBLAS_SONAME
        if p.exists():
            return str(p)
    found = ctypes.util.find_library("openblas")
    return found if found and Path(found).is_absolute() and Path(found).exists() else None


def openblas_status() -> OpenBLASStatus:
    """Detect (never change) whether OpenBLAS is loaded or preloadable in this process."""
    applies = sys.platform.startswith("linux")
    loaded_path = _mapped_openblas() if applies else None
    return OpenBLASStatus(
        applies=applies,
        loaded=loaded_path is not None,
        loaded_path=loaded_path,
        available_path=find_openblas() if applies else None,
        mlx_imported="mlx.core" in sys.modules,
    )


def preload_openblas() -> bool:
    """Load the system OpenBLAS with ``RTLD_GLOBAL`` before MLX is imported, so MLX's BLAS calls
    resolve to it (the in-process equivalent of ``LD_PRELOAD``). Returns True when OpenBLAS is
    in effect; False (with a log line, never an error) when it is absent, not applicable, or MLX
    was imported first."""
    status = openblas_status()
    if not status.applies:
        return False
    if status.loaded:
        return True
    if status.available_path is None:
        logger.warning("cotaudit: %s", status.hint)
        return False
    if status.mlx_imported:
        logger.warning(
            "cotaudit: MLX was imported before OpenBLAS could be preloaded; "
            "use LD_PRELOAD=%s instead",
            status.available_path,
        )
        return False
    ctypes.CDLL(status.available_path, mode=ctypes.RTLD_GLOBAL)
    return True


def openblas_wanted(flag: bool | None = None) -> bool:
    """``flag`` if given, else whether ``COTAUDIT_MLX_OPENBLAS`` is set to 1/true/yes/on."""
    if flag is not None:
        return bool(flag)
    return os.environ.get(OPENBLAS_ENV, "").strip().lower() in ("1", "true", "yes", "on")


def main() -> None:
    """Print the OpenBLAS state of this process (one line: what, if anything, to do)."""
    print(openblas_status().hint)


if __name__ == "__main__":
    main()
