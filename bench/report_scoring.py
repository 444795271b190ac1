"""Report scoring: shared transcript cache vs scoring each report from scratch, side by side.

    python bench/report_scoring.py --versions 8

For each fixture version and transcript (hack, clean), the study needs S(honest) and
S(concealing). "scratch" runs one full forward pass over transcript + report for each of the
four scorings; "shared" prefills each transcript once and scores both reports from views of
its cache (``HFEngine.loglikelihood_many`` with its context LRU off); "shared+LRU" also keeps
recent transcripts, so fixture versions that differ only in their reports (richness, register)
reuse one prefill (what the task does). All give the same numbers (max difference printed; the
tests check 1e-4 nats against a direct forward pass).
"""

from __future__ import annotations

import argparse
import time

import torch

from cotaudit.engine.base import Message
from cotaudit.engine.hf import HFEngine
from cotaudit.providers.hf_probe import _load_engine, resolve_model_path
from cotaudit.studies.report_ll.fixtures import DEFAULT_CORPUS, expand, load_fixtures


def scratch(engine: HFEngine, context: list[Message], report: str) -> float:
    """log p(report | context) from one full forward pass over context + report."""
    ctx = engine.render(context)
    cont = engine.tokenize(report)
    logits, _ = engine.forward(torch.tensor([ctx + cont]))
    logp = torch.log_softmax(logits[0].float(), -1)
    return float(sum(logp[len(ctx) - 1 + i, tok] for i, tok in enumerate(cont)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--model", default="default")
    parser.add_argument("--versions", type=int, default=8)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    engine = _load_engine(resolve_model_path(args.model), "float32", "cpu")
    versions = expand(load_fixtures(DEFAULT_CORPUS))[: args.versions]
    jobs = [
        (v.context_messages(t), [v.report("honest"), v.report("concealing")])
        for v in versions
        for t in ("hack", "clean")
    ]
    with torch.inference_mode():
        start = time.perf_counter()
        slow = [scratch(engine, ctx, r) for ctx, reports in jobs for r in reports]
        t_scratch = time.perf_counter() - start
        timings = {}
        for label, lru in (("shared", 0), ("shared+LRU", 8)):
            engine.context_cache_size = lru
            engine._contexts.clear()
            start = time.perf_counter()
            fast = [
                res.sum_logprob
                for ctx, reports in jobs
                for res in engine.loglikelihood_many_sync(ctx, reports)
            ]
            timings[label] = time.perf_counter() - start
    worst = max(abs(a - b) for a, b in zip(slow, fast, strict=True))
    distinct = len({tuple(engine.render(ctx)) for ctx, _ in jobs})
    ctx_tokens = sum(len(engine.render(ctx)) for ctx, _ in jobs) / len(jobs)
    print(
        f"model {args.model}: {len(versions)} fixture versions, {len(slow)} scorings, "
        f"{distinct} distinct transcripts of ~{ctx_tokens:.0f} tokens"
    )
    print(
        f"scratch {t_scratch:.2f} s; "
        + "; ".join(
            f"{label} {t:.2f} s (ratio {t_scratch / t:.2f}x)" for label, t in timings.items()
        )
        + f"; max |difference| {worst:.2e} nats"
    )


if __name__ == "__main__":
    main()
