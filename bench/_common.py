"""What the benchmark scripts share: their command line, a timed call, a timed selfcommit eval
and the vLLM CPU server a column may start (``scripts/vllm_cpu_server.py``)."""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")

ROOT = Path(__file__).resolve().parents[1]

SELFCOMMIT_RUN = {"problems": 8, "max_cot_tokens": 256, "stride": 30, "k": 5}
"""The selfcommit run the throughput and estimator benchmarks default to: 8 GSM8K problems,
CoTs of at most 256 tokens cut every 30 tokens, 5 forced answers a cut (:func:`add_numbers`
defaults)."""


def bench_parser(doc: str) -> argparse.ArgumentParser:
    """A script's parser: ``doc`` (its docstring) as the description, printed as written."""
    return argparse.ArgumentParser(
        description=doc, formatter_class=argparse.RawDescriptionHelpFormatter
    )


def add_numbers(parser: argparse.ArgumentParser, **defaults: float) -> None:
    """An option per keyword, in the order given: ``--max-cot-tokens`` for ``max_cot_tokens``,
    of its default's type (``int`` or ``float``)."""
    for name, default in defaults.items():
        parser.add_argument("--" + name.replace("_", "-"), type=type(default), default=default)


def add_backends(
    parser: argparse.ArgumentParser, columns: Sequence[str], columns_help: str
) -> None:
    """``--vllm-url`` and ``--vllm-model`` (a running vLLM server instead of starting one) and
    ``--columns`` (which of ``columns`` to run; default all); read with :func:`parse_backends`."""
    parser.add_argument("--vllm-url", help="a running vLLM server's .../v1 URL")
    parser.add_argument("--vllm-model", help="its served model name (with --vllm-url)")
    parser.add_argument("--columns", default=",".join(columns), help=columns_help)


def parse_backends(
    parser: argparse.ArgumentParser, columns: Sequence[str]
) -> tuple[argparse.Namespace, list[str]]:
    """The parsed arguments and the columns chosen (:func:`add_backends`); an unknown column,
    or ``--vllm-url`` without ``--vllm-model``, is a usage error."""
    args = parser.parse_args()
    chosen = args.columns.split(",")
    if unknown := [c for c in chosen if c not in columns]:
        parser.error(f"--columns: unknown {', '.join(unknown)}; known: {', '.join(columns)}")
    if args.vllm_url and not args.vllm_model:
        parser.error("--vllm-url needs --vllm-model")
    return args, chosen


def timed(fn: Callable[..., T], *args: Any) -> tuple[float, T]:
    """(wall seconds ``fn(*args)`` took, its result)."""
    start = time.perf_counter()
    out = fn(*args)
    return time.perf_counter() - start, out


def selfcommit_eval(
    task_args: dict[str, Any],
    max_connections: int,
    read: Callable[[Any], T],
    failure: Callable[[Any], BaseException],
    **target: Any,
) -> tuple[float, T]:
    """One Inspect eval of ``tasks/selfcommit.py`` on ``target`` (``model`` and its other
    ``eval`` arguments) at ``max_connections`` concurrent samples, logged to a temporary
    folder: (wall seconds from ``eval`` start to its return, ``read(log)``, taken while the
    log's samples can still be read from that folder). A run that does not succeed raises
    ``failure(log)``."""
    from inspect_ai import eval as inspect_eval

    with tempfile.TemporaryDirectory() as log_dir:
        wall, [log] = timed(
            lambda: inspect_eval(
                "tasks/selfcommit.py",
                task_args=task_args,
                log_dir=log_dir,
                display="none",
                max_connections=max_connections,
                max_samples=max_connections,
                **target,
            )
        )
        if log.status != "success":
            raise failure(log)
        return wall, read(log)


def start_vllm_server(servers: list[Any]) -> Any | None:
    """A vLLM CPU server on the default model (``scripts/vllm_cpu_server.py``), started and
    added to ``servers`` (the caller stops them); its start-up time is printed, not counted.
    ``None``, the reason on stderr, when vLLM is not installed."""
    sys.path.insert(0, str(ROOT / "scripts"))
    import vllm_cpu_server

    try:
        server = vllm_cpu_server.start()
    except FileNotFoundError as e:
        print(f"vllm: {e}", file=sys.stderr)
        return None
    servers.append(server)
    print(f"vllm: server started in {server.startup_s:.0f} s (not counted)", flush=True)
    return server
