"""The decode attention kernel (``decode_attention.cpp``), built on first use.

One call per layer appends every CoT row's new key and value to its own cache and computes
each row's attention over exactly its own cached positions (the definition is in the source),
instead of one attention call per job from Python. It is compiled once per machine with
torch's C++ extension builder (ninja and a C++ compiler: ``-O3 -march=native``, OpenMP on
Linux, whose runtime is torch's own) into torch's extension cache
(``$TORCH_EXTENSIONS_DIR``, by default ``~/.cache/torch_extensions``): about 30 s the first time,
said on stderr; later loads take milliseconds. Where it cannot be built (no compiler) or is
turned off (``COTAUDIT_DECODE_KERNEL=0``), the engine computes each job's attention with
torch's SDPA, with a warning saying why; results then differ from the kernel's in the last
float bits, never between a job decoding alone and in a batch.
"""

from __future__ import annotations

import functools
import hashlib
import logging
import os
import platform
import sys
from pathlib import Path
from typing import Any

logger = logging.getLogger(__name__)

SOURCE = Path(__file__).with_name("decode_attention.cpp")
ENV_SWITCH = "COTAUDIT_DECODE_KERNEL"
"""``0`` turns the kernel off (each job's attention through torch's SDPA)."""


def _machine_tag() -> str:
    """A short hash of the source and of this CPU's instruction sets: a build made with
    ``-march=native`` on another machine sharing the cache directory is never loaded here."""
    flags = platform.machine() + platform.processor()
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        lines = cpuinfo.read_text(errors="replace").splitlines()
        flags += next((line for line in lines if line.startswith(("flags", "Features"))), "")
    digest = hashlib.sha256(SOURCE.read_bytes() + flags.encode()).hexdigest()
    return digest[:12]


def _flags() -> list[str]:
    flags = ["-O3", "-march=native"]
    if sys.platform.startswith("linux"):
        flags.append("-fopenmp")  # torch's libgomp.so.1 is the one loaded: one thread pool
    return flags


@functools.cache
def decode_attention() -> Any | None:
    """``torch.ops.cotaudit.decode_attention``, building it the first time; None when it is
    turned off or cannot be built here (the reason is logged once)."""
    if os.environ.get(ENV_SWITCH, "1") == "0":
        logger.warning("cotaudit: decode attention kernel off (%s=0)", ENV_SWITCH)
        return None
    import torch
    from torch.utils import cpp_extension

    name = f"cotaudit_decode_attention_{_machine_tag()}"
    build_dir = Path(cpp_extension._get_build_directory(name, verbose=False))
    if not any(build_dir.glob("*.so")):
        print(
            f"cotaudit: building the decode attention kernel once (about 30 s) in {build_dir}",
            file=sys.stderr,
            flush=True,
        )
    try:
        cpp_extension.load(
            name, [str(SOURCE)], extra_cflags=_flags(), is_python_module=False, verbose=False
        )
    except Exception as e:  # noqa: BLE001 - any build failure: the SDPA path instead
        logger.warning(
            "cotaudit: the decode attention kernel could not be built (%s); each job's "
            "attention goes through torch's SDPA instead",
            str(e).splitlines()[0] if str(e) else type(e).__name__,
        )
        return None
    return torch.ops.cotaudit.decode_attention
