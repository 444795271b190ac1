"""The same selfcommit run on one vLLM replica and on two behind ``vllm-router``, with and
without the sample routing key, side by side in one run: samples per minute and the replicas'
prefix-cache hit rate.

    python bench/replicas_throughput.py --problems 4             # starts its own replicas
    python bench/replicas_throughput.py --model tiny --cot-temperature 1

Columns (``COLUMNS``), each one Inspect eval of ``problems`` x {honest, hinted} samples at
``--max-connections`` concurrent samples, every replica's prefix cache emptied before it:

- ``1 replica``: Inspect's ``vllm/`` provider straight to replica 1;
- ``1 replica, router``: the same through a router over replica 1 alone (the router's overhead);
- ``2 replicas, key``: a router over both replicas, every request carrying its sample's
  ``X-Session-ID`` (``cotaudit.engine.inspect_prefill.routing_key``): a sample stays on one
  replica;
- ``2 replicas, no key``: the same router with ``COTAUDIT_ROUTING_KEY=off``: vllm-router's
  ``consistent_hash`` then hashes the request itself (all chat requests, which carry no text
  it reads, to one replica; each prefix request by its prompt).

Definitions: ``wall`` = seconds from ``eval`` start to its return (replica and router start-up
excluded); ``samples/min`` = 60 x samples / wall; ``hit rate`` = sum over replicas of
``vllm:prefix_cache_hits_total`` / sum of ``vllm:prefix_cache_queries_total`` during the run
(prompt tokens found in the cache / prompt tokens looked up, counted by each server in
``/metrics``); ``replica share`` = each replica's share of the looked-up tokens.

On two CPU cores two replicas are no faster than one: they share the same two cores, so the
figure shows the router's overhead and the cache locality the routing key keeps, not a
speed-up. On two GPUs (one replica each) the decode capacity doubles.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from _common import ROOT, add_numbers, bench_parser, selfcommit_eval

sys.path.insert(0, str(ROOT / "scripts"))
import vllm_replicas  # noqa: E402 - scripts/

from cotaudit.engine.inspect_prefill import ROUTING_KEY_ENV  # noqa: E402


@dataclass
class Result:
    """One column's run."""

    samples: int
    wall: float
    hit_rate: float
    shares: list[float]

    @property
    def per_minute(self) -> float:
        return 60 * self.samples / self.wall


@dataclass
class Column:
    """A column: its name, the URL to run against (given the replicas) and the routing key
    setting (``sample`` or ``off``)."""

    name: str
    url: Callable[[vllm_replicas.Replicas], str]
    key: str


COLUMNS = [
    Column("1 replica", lambda r: r.servers[0].url, "sample"),
    Column("1 replica, router", lambda r: r.route(r.servers[:1]).url, "sample"),
    Column("2 replicas, key", lambda r: r.route(r.servers).url, "sample"),
    Column("2 replicas, no key", lambda r: r.route(r.servers).url, "off"),
]


def run(replicas: vllm_replicas.Replicas, column: Column, args: argparse.Namespace) -> Result:
    url = column.url(replicas)
    os.environ[ROUTING_KEY_ENV] = column.key
    vllm_replicas.forget_base_url(replicas.model)
    replicas.reset_prefix_caches()
    before = replicas.counts()
    task_args: dict[str, Any] = {
        "problems": args.problems,
        "conditions": "honest,hinted",
        "max_cot_tokens": args.max_cot_tokens,
        "cot_temperature": args.cot_temperature,
        "stride": args.stride,
        "k": args.k,
        "temperature": 0.0,
        "answer_max_tokens": args.answer_max_tokens,
        "final_answer_reading": "last_number",
    }
    wall, samples = selfcommit_eval(
        task_args,
        args.max_connections,
        lambda log: len(log.samples or []),
        lambda log: RuntimeError(f"{column.name}: {log.error}"),
        model=f"vllm/{replicas.model}",
        model_base_url=url,
        model_args={"api_key": "bench"},
    )
    after = replicas.counts()
    queried = [a[0] - b[0] for a, b in zip(after, before, strict=True)]
    total = sum(queried)
    return Result(
        samples,
        wall,
        vllm_replicas.hit_rate(before, after),
        [q / total if total else 0.0 for q in queried],
    )


def main() -> None:
    parser = bench_parser(__doc__)
    add_numbers(parser, problems=4)
    parser.add_argument(
        "--model", default="default", help="default (SmolLM2-135M), tiny, or a model folder"
    )
    add_numbers(parser, max_cot_tokens=256)
    parser.add_argument(
        "--cot-temperature", type=float, default=0.0, help="1 for the tiny random model"
    )
    add_numbers(parser, stride=16, k=1, answer_max_tokens=8, max_connections=16)
    args = parser.parse_args()

    from cotaudit.providers.hf_probe import resolve_model_path

    model = resolve_model_path(args.model)
    start = time.monotonic()
    replicas = vllm_replicas.launch(2, model, max_model_len=2048, kv_cache_gib=2).wait()
    print(
        f"2 replicas of {model} started in {time.monotonic() - start:.0f} s (not counted)",
        flush=True,
    )
    results: dict[str, Result] = {}
    try:
        for column in COLUMNS:
            results[column.name] = run(replicas, column, args)
            print(f"{column.name}: {results[column.name]}", flush=True)
    finally:
        replicas.stop()

    print(
        f"selfcommit on {Path(model).name}, {args.problems} problems x 2 conditions, "
        f"CoT <= {args.max_cot_tokens} tokens at temperature {args.cot_temperature}, stride "
        f"{args.stride}, k {args.k}, answers <= {args.answer_max_tokens} tokens (greedy), "
        f"--max-connections {args.max_connections}"
    )
    print("| column | samples | wall | samples/min | hit rate | replica share |")
    print("|---|---:|---:|---:|---:|---|")
    for name, r in results.items():
        shares = " / ".join(f"{s:.2f}" for s in r.shares)
        print(
            f"| {name} | {r.samples} | {r.wall:.1f} s | {r.per_minute:.1f} | {r.hit_rate:.3f} "
            f"| {shares} |"
        )


if __name__ == "__main__":
    main()
