"""The work a vLLM server does per probe: requests, prompt tokens it computed against the
minimum, its prefix-cache hit rate, and wall time, side by side on the same cuts.

    python bench/vllm_work.py --url http://127.0.0.1:8000/v1      # a running server
    python bench/vllm_work.py                                     # starts a CPU server
    python bench/vllm_work.py --replicas 2      # starts 2 CPU replicas behind vllm-router
    python bench/vllm_work.py --url <router>/v1 --metrics <replica root> <replica root>

For each GSM8K problem (honest selfcommit prompt, the served model's greedy CoT of at most
``--max-cot-tokens``, its own final answer as the reference; cuts every ``--stride`` tokens),
one after the other on the same server:

- **sampled**: ``continue_prefixes``, k = 5 answers of <= 8 tokens at temperature 0.7 (one
  prompt a cut, carrying n = k);
- **exact**: ``score_answers`` of the integer plan at 0.7 (depth by depth, see
  ``cotaudit.engine.inspect_prefill``);
- **resampling**: ``continue_prefixes`` with no tag, ``--continuations`` continuations of <=
  ``--continuation-tokens`` tokens from each cut at 0.7;
- **report scoring**: report_ll's four scorings of the first ``--versions`` fixture versions,
  sent as the solver sends them (``score_reports``: per transcript the first report, then the
  other; on ``/inference/v1/generate`` the prefix cache serves the transcript, see
  ``cotaudit.engine.inspect_prefill``).

Definitions, per probe: ``calls`` = HTTP requests sent (completions, generate, or chat for a
scoring the generate endpoint did not take), ``seqs`` = sequences
the server scheduled (``vllm:request_success_total``; a prompt with n = k is k of them);
``computed`` = prompt tokens the server computed, ``vllm:prompt_tokens_total`` -
``vllm:prompt_tokens_cached_total`` from its ``/metrics``; ``minimum`` = per cut the partial
cache block at the cut plus the tag, ((prompt + t) mod B) + tag, B the server's block size
(``vllm:cache_config_info``), per scoring the report's tokens; ``hit rate`` =
``vllm:prefix_cache_hits`` / ``vllm:prefix_cache_queries`` (requests that skip the cache are
not queried). With replicas the counters are summed over the replicas' ``/metrics`` (the
router has none of vLLM's) and every request carries its sample's routing key (a problem, or a
fixture version, is one key). Ratios: computed / minimum, and each probe's computed tokens over
sampled's.
Times are wall-clock on whatever machine runs it: on a shared CPU they are noise; the counts
do not depend on the hardware.
"""

from __future__ import annotations

import argparse
import asyncio
import contextvars
import hashlib
import re
import sys
import time
from collections.abc import Coroutine
from dataclasses import dataclass
from typing import Any

import httpx
from _common import ROOT, add_numbers, bench_parser

sys.path.insert(0, str(ROOT / "scripts"))

from cotaudit.answers import extract_final_answer  # noqa: E402
from cotaudit.datasets.gsm8k import load_problems  # noqa: E402
from cotaudit.engine import inspect_prefill  # noqa: E402
from cotaudit.engine.base import PrefixRequest  # noqa: E402
from cotaudit.engine.inspect_prefill import InspectPrefillEngine  # noqa: E402
from cotaudit.probing.curves import prefix_positions  # noqa: E402
from cotaudit.probing.exact import integer_plan, token_classes  # noqa: E402
from cotaudit.solvers.report_ll import score_reports  # noqa: E402
from cotaudit.studies.report_ll.fixtures import DEFAULT_CORPUS, expand, load_fixtures  # noqa: E402
from cotaudit.studies.selfcommit.prompts import (  # noqa: E402
    SELFCOMMIT_FORCED_ANSWER_TAG,
    selfcommit_messages,
)

COUNTERS = (
    "vllm:prompt_tokens_total",
    "vllm:prompt_tokens_cached_total",
    "vllm:prefix_cache_queries_total",
    "vllm:prefix_cache_hits_total",
    "vllm:request_success_total",
)


def counters(roots: list[str]) -> dict[str, float]:
    """The servers' counters (:data:`COUNTERS`), each summed over its label sets and over the
    servers ``roots``."""
    out = dict.fromkeys(COUNTERS, 0.0)
    for root in roots:
        text = httpx.get(f"{root}/metrics", timeout=30).text
        for name in COUNTERS:
            pattern = rf"^{re.escape(name)}(?:\{{[^}}]*\}})? ([0-9.eE+-]+)$"
            out[name] += sum(float(v) for v in re.findall(pattern, text, re.M))
    return out


def block_size(root: str) -> int:
    """The server's KV cache block size, from ``vllm:cache_config_info``."""
    text = httpx.get(f"{root}/metrics", timeout=30).text
    match = re.search(r'vllm:cache_config_info\{[^}]*block_size="(\d+)"', text)
    if match is None:
        raise RuntimeError(f"{root}/metrics states no block_size")
    return int(match.group(1))


@dataclass
class Work:
    """One probe's totals over the run."""

    units: int = 0
    calls: int = 0
    seqs: float = 0.0
    computed: float = 0.0
    minimum: float = 0.0
    queries: float = 0.0
    hits: float = 0.0
    wall: float = 0.0

    def add(self, before: dict[str, float], after: dict[str, float]) -> None:
        d = {k: after[k] - before[k] for k in COUNTERS}
        self.seqs += d["vllm:request_success_total"]
        self.computed += d["vllm:prompt_tokens_total"] - d["vllm:prompt_tokens_cached_total"]
        self.queries += d["vllm:prefix_cache_queries_total"]
        self.hits += d["vllm:prefix_cache_hits_total"]


def in_sample(key: str, job: Coroutine[Any, Any, Any]) -> Coroutine[Any, Any, Any]:
    """``job`` with every request carrying ``key`` as its routing key, as the requests of one
    Inspect sample carry theirs (``cotaudit.engine.inspect_prefill.routing_key``, which reads
    the active sample: replaced here, there being no Inspect sample)."""

    async def run() -> Any:
        token = ROUTING.set(hashlib.sha256(key.encode()).hexdigest()[:32])
        try:
            return await job
        finally:
            ROUTING.reset(token)

    return run()


ROUTING: contextvars.ContextVar[str | None] = contextvars.ContextVar("routing", default=None)
inspect_prefill.routing_key = ROUTING.get


def measure(
    roots: list[str],
    work: Work,
    engine: InspectPrefillEngine,
    job: Coroutine[Any, Any, Any],
    key: str,
) -> Any:
    """Run ``job`` (as sample ``key``) and add what the servers ``roots`` did for it to
    ``work``."""
    calls, scorings = engine.requests.calls, engine.requests.scorings
    before = counters(roots)
    start = time.perf_counter()
    out = asyncio.run(in_sample(key, job))
    work.wall += time.perf_counter() - start
    work.add(before, counters(roots))
    work.calls += engine.requests.calls - calls
    if isinstance(out, list) and out and hasattr(out[0], "n_tokens"):  # scorings
        work.calls += len(out) - (engine.requests.scorings - scorings)  # chat requests
    return out


def main() -> None:
    parser = bench_parser(__doc__)
    parser.add_argument("--url", help="a running server's .../v1 (default: start a CPU one)")
    parser.add_argument("--model", help="served model name (default: the server's only one)")
    add_numbers(
        parser,
        problems=2,
        max_cot_tokens=128,
        stride=32,
        continuations=4,
        continuation_tokens=32,
        versions=2,
    )
    parser.add_argument(
        "--replicas", type=int, default=0, help="start this many CPU replicas behind vllm-router"
    )
    parser.add_argument(
        "--metrics", nargs="+", help="the servers' roots whose /metrics to sum (default: --url's)"
    )
    args = parser.parse_args()

    import vllm_cpu_server
    import vllm_replicas
    from inspect_ai.model import get_model

    if args.replicas:
        model = str(vllm_cpu_server.default_model())
        replicas = vllm_replicas.launch(args.replicas, model, kv_cache_gib=2).wait()
        try:
            router = replicas.route(replicas.servers)
            roots = [s.root for s in replicas.servers]
            run(router.url, replicas.model, roots, args, get_model)
        finally:
            replicas.stop()
        return
    server = vllm_cpu_server.attach(args.url) if args.url else vllm_cpu_server.start()
    try:
        run(server.url, args.model or server.model, args.metrics or [server.root], args, get_model)
    finally:
        server.stop()


def run(url: str, name: str, roots: list[str], args: argparse.Namespace, get_model: Any) -> None:
    """The table for the server (or router) at ``url`` serving ``name``, counted over the
    servers ``roots``."""
    model = get_model(f"vllm/{name}", base_url=url, api_key="bench", memoize=False)
    engine = InspectPrefillEngine.for_model(model)
    block = block_size(roots[0])
    tag = SELFCOMMIT_FORCED_ANSWER_TAG
    tag_len = len(engine.tokenize(tag))
    probes = {name: Work() for name in ("sampled", "exact", "resampling", "report scoring")}
    classes = token_classes(engine.vocabulary())
    for problem in load_problems(limit=args.problems).items:
        key = f"problem-{problem.index}"
        messages = selfcommit_messages(problem.question, "honest", problem.answer)
        cot = asyncio.run(in_sample(key, engine.generate(messages, max_tokens=args.max_cot_tokens)))
        answer = extract_final_answer(cot.text, truncated=True)
        positions = prefix_positions(len(cot.token_ids), args.stride)
        prompt_len = len(engine._render(messages))
        floor = sum((prompt_len + t) % block + tag_len for t in positions)
        sampled = PrefixRequest(messages, cot.token_ids, positions, tag, k=5, temperature=0.7)
        resample = PrefixRequest(
            messages,
            cot.token_ids,
            [t for t in positions if t > 0],
            "",
            k=args.continuations,
            max_tokens=args.continuation_tokens,
            temperature=0.7,
        )
        plan = integer_plan(answer, engine.tokenize, classes, 8)
        exact = plan.request(messages, cot.token_ids, positions, tag, 0.7)
        for probe, job, units, minimum in (
            ("sampled", engine.continue_prefixes(sampled), len(positions), floor),
            ("exact", engine.score_answers(exact), len(positions), floor),
            (
                "resampling",
                engine.continue_prefixes(resample),
                len(resample.positions),
                sum((prompt_len + t) % block for t in resample.positions),
            ),
        ):
            measure(roots, probes[probe], engine, job, key)
            probes[probe].units += units
            probes[probe].minimum += minimum
    for version in expand(load_fixtures(DEFAULT_CORPUS))[: args.versions]:
        reports = [version.report("honest"), version.report("concealing")]
        for transcript in ("hack", "clean"):
            context = version.context_messages(transcript)
            scoring = score_reports(engine, context, reports)
            results = measure(roots, probes["report scoring"], engine, scoring, version.id)
            probes["report scoring"].units += len(results)
            probes["report scoring"].minimum += sum(r.n_tokens for r in results)

    print(
        f"{name} at {url} ({len(roots)} server(s) counted): {args.problems} problems, "
        f"CoT <= {args.max_cot_tokens}, stride {args.stride}, {args.versions} report_ll "
        f"versions; cache block {block} tokens; scorings sent again without the cache: "
        f"{engine.requests.scoring_refills}"
    )
    print(
        "| probe | units | calls / unit | seqs / unit | computed / unit | minimum / unit | "
        "computed / minimum | computed vs sampled | hit rate | wall / unit |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    base = probes["sampled"].computed / max(probes["sampled"].units, 1)
    for probe, w in probes.items():
        u = max(w.units, 1)
        rate = w.hits / w.queries if w.queries else float("nan")
        print(
            f"| {probe} | {w.units} | {w.calls / u:.2f} | {w.seqs / u:.2f} | "
            f"{w.computed / u:.1f} | {w.minimum / u:.1f} | {w.computed / max(w.minimum, 1):.2f}x "
            f"| {w.computed / u / base:.2f}x | {rate:.3f} | {w.wall / u:.2f} s |"
        )


if __name__ == "__main__":
    main()
