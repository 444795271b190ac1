"""The same selfcommit run on each backend, side by side in one run: samples per minute and the
wall time split into CoT generation and probing.

    python bench/study_throughput.py --problems 8          # starts its own vLLM CPU server
    python bench/study_throughput.py --vllm-url http://127.0.0.1:8000/v1 --vllm-model <name>

Columns (``COLUMNS``; a column whose backend is not available prints ``n/a``):

- ``unbatched``: ``hf-probe/default`` in process (transformers, fp32) with ``-M
  max_batch_rows=1 -M pad_rows=false``: samples run concurrently but each decode job runs
  alone, as before cross-sample batching (a lone CoT decodes at 1 row);
- ``batched``: ``hf-probe/default`` with its default ``max_batch_rows`` (64; or
  ``--max-batch-rows``): concurrent samples' CoTs and prefix sweeps decode in one batch (rows
  padded where the step's products need it, see :mod:`cotaudit.engine.hf_batch`);
- ``vllm``: Inspect's ``vllm/`` provider against a real vLLM server (the CPU build, started here
  with ``scripts/vllm_cpu_server.py`` unless ``--vllm-url`` names a running one) serving the
  same model folder.

Every column runs at ``--max-connections`` (16) concurrent samples; in-process engines are
loaded before the clock starts.

Definitions, per column (one Inspect eval of ``problems`` x {honest, hinted} samples):

- ``wall``: seconds from ``eval`` start to its return (the vLLM server's start-up excluded);
- ``samples/min`` = 60 * samples / wall;
- ``CoT`` and ``probe``: ``wall`` split in the proportion sum_s t_cot(s) : sum_s t_probe(s),
  where t_cot(s) is the duration of sample s's CoT call (its first model event, from the log)
  and t_probe(s) = (sample s's total time) - t_cot(s). Samples run concurrently, so per-sample
  times add up to more than ``wall``; the proportion is what the split keeps.

The last line reads ``samples/min: unbatched U, batched B, vllm V``.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from _common import (
    SELFCOMMIT_RUN,
    add_backends,
    add_numbers,
    bench_parser,
    parse_backends,
    selfcommit_eval,
    start_vllm_server,
)
from inspect_ai.event import ModelEvent


@dataclass
class Column:
    """One backend's run: how to reach the model (``None``: not available here)."""

    name: str
    model: Callable[[argparse.Namespace], dict[str, Any] | None]


@dataclass
class Result:
    samples: int
    wall: float
    cot: float
    probe: float

    @property
    def per_minute(self) -> float:
        return 60 * self.samples / self.wall


_server: list[Any] = []


def _unbatched(args: argparse.Namespace) -> dict[str, Any]:
    return {"model": "hf-probe/default", "model_args": {"max_batch_rows": 1, "pad_rows": False}}


def _batched(args: argparse.Namespace) -> dict[str, Any]:
    rows = {} if args.max_batch_rows is None else {"max_batch_rows": args.max_batch_rows}
    return {"model": "hf-probe/default", "model_args": rows}


def _vllm(args: argparse.Namespace) -> dict[str, Any] | None:
    if args.vllm_url:
        return {
            "model": f"vllm/{args.vllm_model}",
            "model_base_url": args.vllm_url,
            "model_args": {"api_key": "bench"},
        }
    server = start_vllm_server(_server)
    if server is None:
        return None
    return {
        "model": f"vllm/{server.model}",
        "model_base_url": server.url,
        "model_args": {"api_key": "bench"},
    }


COLUMNS = [Column("unbatched", _unbatched), Column("batched", _batched), Column("vllm", _vllm)]


def split(log: Any) -> tuple[float, float]:
    """(sum of t_cot, sum of t_probe) over the log's samples, in seconds."""
    cot = probe = 0.0
    for sample in log.samples:
        first = next(e for e in sample.events if isinstance(e, ModelEvent))
        assert first.completed is not None  # a finished sample's model call completed
        t_cot = (first.completed - first.timestamp).total_seconds()
        cot += t_cot
        probe += max(float(sample.total_time or 0.0) - t_cot, 0.0)
    return cot, probe


def run(target: dict[str, Any], args: argparse.Namespace) -> Result:
    from inspect_ai.model import get_model

    if target["model"].startswith("hf-probe/"):
        # the weights load on the engine's first use: load them before the clock starts
        engine = get_model(target["model"], **target["model_args"]).api.probe_engine
        print(f"{target['model']}: loaded, {engine.context_length} tokens of context")
    task_args = {
        "problems": args.problems,
        "conditions": "honest,hinted",
        "max_cot_tokens": args.max_cot_tokens,
        "stride": args.stride,
        "k": args.k,
        "answer_max_tokens": args.answer_max_tokens,
    }
    wall, (samples, (cot, probe)) = selfcommit_eval(
        task_args,
        args.max_connections,
        lambda log: (len(log.samples or []), split(log)),
        lambda log: RuntimeError(f"{target['model']}: {log.error}"),
        **target,
    )
    share = cot / (cot + probe) if cot + probe else 0.0
    return Result(samples, wall, wall * share, wall * (1 - share))


def main() -> None:
    parser = bench_parser(__doc__)
    add_numbers(parser, **SELFCOMMIT_RUN, answer_max_tokens=8, max_connections=16)
    parser.add_argument(
        "--max-batch-rows", type=int, help="the batched column's max_batch_rows (default: 64)"
    )
    names = [c.name for c in COLUMNS]
    add_backends(parser, names, "comma-separated columns to run, in this order (default: all)")
    args, chosen = parse_backends(parser, names)

    results: dict[str, Result | None] = {name: None for name in names}
    try:
        for column in (c for c in COLUMNS if c.name in chosen):
            target = column.model(args)
            results[column.name] = run(target, args) if target is not None else None
            print(f"{column.name}: {results[column.name]}", flush=True)
    finally:
        while _server:
            _server.pop().stop()

    print(
        f"selfcommit, {args.problems} problems x 2 conditions, CoT <= {args.max_cot_tokens} "
        f"tokens, stride {args.stride}, k {args.k}, answers <= {args.answer_max_tokens} tokens, "
        f"--max-connections {args.max_connections}"
    )
    print("| column | samples | wall | CoT | probe | samples/min |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, r in results.items():
        if name not in chosen:
            continue
        if r is None:
            print(f"| {name} | n/a | | | | n/a |")
        else:
            print(
                f"| {name} | {r.samples} | {r.wall:.1f} s | {r.cot:.1f} s | {r.probe:.1f} s "
                f"| {r.per_minute:.1f} |"
            )
    base, batched = results["unbatched"], results["batched"]
    if base and batched:
        print(f"batched / unbatched: {batched.per_minute / base.per_minute:.2f}x")
    if batched and results["vllm"]:
        print(f"batched / vllm: {batched.per_minute / results['vllm'].per_minute:.2f}x")
    rates = {n: (f"{r.per_minute:.2f}" if r else "n/a") for n, r in results.items()}
    print(
        f"samples/min: unbatched {rates['unbatched']}, batched {rates['batched']}, "
        f"vllm {rates['vllm']}"
    )


if __name__ == "__main__":
    main()
