"""Rollouts per minute: continuations of CoTs from their own cuts (resampling), side by side in
one run on each backend.

    python bench/resample_throughput.py                    # starts its own vLLM CPU server
    python bench/resample_throughput.py --problems 4 --cuts 4 --n 4 --max-tokens 96
    python bench/resample_throughput.py --vllm-url http://127.0.0.1:8000/v1 --vllm-model <name>

The work: ``--problems`` GSM8K questions (the selfcommit prompt, honest condition); each gets
its greedy CoT from ``hf-probe/default`` (<= ``--cot-tokens``, generated before any clock
starts, the same token ids for every column), cut at ``--cuts`` evenly spaced positions; from
each cut, ``--n`` continuations of at most ``--max-tokens`` tokens at ``--temperature``
(:class:`cotaudit.engine.base.PrefixRequest` with an empty tag: the requests a resampling
probe sends). Rollouts = problems x cuts x n.

Columns (a column whose backend is not available prints ``n/a``):

- ``one at a time``: ``hf-probe/default``, each rollout its own request (one cut, n = 1),
  decoded alone, one after another: a rollout per call, as a script calling a model
  per continuation does;
- ``batched``: ``hf-probe/default``, every problem's request at once: the cuts' rollouts of a
  problem share its cached prompt + CoT (one copy), and all problems decode together in the
  running batch (:mod:`cotaudit.engine.batcher`);
- ``vllm``: the same requests at once to a real vLLM server (CPU build, started here with
  ``scripts/vllm_cpu_server.py`` unless ``--vllm-url``; prefix caching on): per cut, one
  completions request of prompt + cot[:t] as token ids with ``n`` choices.

``wall`` is seconds from the first request to the last answer; rollouts/min = 60 x rollouts /
wall; ``tokens`` counts the continuations' tokens (the tokenizer's count of each text).
"""

from __future__ import annotations

import argparse
import asyncio
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from _common import (
    add_backends,
    add_numbers,
    bench_parser,
    parse_backends,
    start_vllm_server,
    timed,
)


@dataclass
class Result:
    rollouts: int
    tokens: int
    wall: float

    @property
    def per_minute(self) -> float:
        return 60 * self.rollouts / self.wall


def _questions(n: int) -> list[str]:
    from cotaudit.datasets.gsm8k import load_problems

    return [problem.question for problem in load_problems(limit=n).items]


def _requests(engine: Any, args: argparse.Namespace) -> list[Any]:
    from cotaudit.engine.base import PrefixRequest
    from cotaudit.studies.selfcommit.prompts import selfcommit_messages

    requests = []
    for i, question in enumerate(_questions(args.problems)):
        messages = selfcommit_messages(question, "honest", 0)
        cot = engine.generate_sync(messages, args.cot_tokens, 0.0, 0)[0].token_ids
        cuts = sorted({len(cot) * (j + 1) // (args.cuts + 1) for j in range(args.cuts)})
        requests.append(
            PrefixRequest(
                messages,
                cot,
                cuts,
                "",
                k=args.n,
                max_tokens=args.max_tokens,
                temperature=args.temperature,
                seed=i,
            )
        )
    return requests


def _count(engine: Any, answers: Sequence[Sequence[Sequence[str]]]) -> tuple[int, int]:
    texts = [text for request in answers for cut in request for text in cut]
    return len(texts), sum(len(engine.tokenize(text)) for text in texts)


def _timed(engine: Any, run: Callable[[], Any]) -> Result:
    """``run``'s wall time and the rollouts and tokens of its answers (counted by ``engine``'s
    tokenizer)."""
    wall, answers = timed(run)
    rollouts, tokens = _count(engine, answers)
    return Result(rollouts, tokens, wall)


def one_at_a_time(engine: Any, requests: list[Any]) -> Result:
    from dataclasses import replace

    def run() -> list[list[list[str]]]:
        out = []
        for request in requests:
            cuts = []
            for t in request.positions:
                texts = []
                for j in range(request.k):
                    single = replace(request, positions=[t], k=1, seed=request.seed * 1000 + j)
                    texts += engine._locked(engine.continue_prefixes_sync, single)[0]
                cuts.append(texts)
            out.append(cuts)
        return out

    return _timed(engine, run)


def concurrent(engine: Any, requests: list[Any], counter: Any) -> Result:
    async def all_at_once() -> list[list[list[str]]]:
        return list(await asyncio.gather(*(engine.continue_prefixes(r) for r in requests)))

    return _timed(counter, lambda: asyncio.run(all_at_once()))


def _vllm_engine(args: argparse.Namespace) -> Any | None:
    from inspect_ai.model import get_model

    from cotaudit.engine.inspect_prefill import InspectPrefillEngine

    if args.vllm_url:
        url, name = args.vllm_url, args.vllm_model
    else:
        server = start_vllm_server(_servers)
        if server is None:
            return None
        url, name = server.url, server.model
    model = get_model(f"vllm/{name}", base_url=url, api_key="bench", memoize=False)
    return InspectPrefillEngine.for_model(model)


_servers: list[Any] = []
COLUMNS = ("one at a time", "batched", "vllm")


def main() -> None:
    parser = bench_parser(__doc__)
    add_numbers(parser, problems=4, cot_tokens=128, cuts=4)
    parser.add_argument("--n", type=int, default=4, help="continuations per cut")
    add_numbers(parser, max_tokens=96, temperature=0.7)
    add_backends(parser, COLUMNS, "comma-separated columns to run")
    args, chosen = parse_backends(parser, COLUMNS)

    from cotaudit.providers.hf_probe import _load_engine, resolve_model_path

    engine = _load_engine(resolve_model_path("default"), "float32", "cpu")
    requests = _requests(engine, args)
    results: dict[str, Result | None] = dict.fromkeys(COLUMNS)
    try:
        for name in (c for c in COLUMNS if c in chosen):
            if name == "one at a time":
                results[name] = one_at_a_time(engine, requests)
            elif name == "batched":
                results[name] = concurrent(engine, requests, engine)
            else:
                vllm = _vllm_engine(args)
                results[name] = None if vllm is None else concurrent(vllm, requests, engine)
            print(f"{name}: {results[name]}", flush=True)
    finally:
        while _servers:
            _servers.pop().stop()

    lengths = [len(r.cot_token_ids) for r in requests]
    print(
        f"resampling, {args.problems} problems (CoTs of {json.dumps(lengths)} tokens), "
        f"{args.cuts} cuts, n {args.n}, continuations <= {args.max_tokens} tokens, "
        f"temperature {args.temperature}"
    )
    print("| column | rollouts | tokens | wall | rollouts/min |")
    print("|---|---:|---:|---:|---:|")
    for name in (c for c in COLUMNS if c in chosen):
        r = results[name]
        if r is None:
            print(f"| {name} | n/a | | | n/a |")
        else:
            print(f"| {name} | {r.rollouts} | {r.tokens} | {r.wall:.1f} s | {r.per_minute:.1f} |")
    alone, batched, vllm = (results[c] for c in COLUMNS)
    if alone and batched:
        print(f"batched / one at a time: {batched.per_minute / alone.per_minute:.2f}x")
    if batched and vllm:
        print(f"batched / vllm: {batched.per_minute / vllm.per_minute:.2f}x")


if __name__ == "__main__":
    main()
