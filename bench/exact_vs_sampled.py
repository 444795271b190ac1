"""The exact estimator vs k sampled forced answers, on the same samples, side by side.

    python bench/exact_vs_sampled.py                  # 8 problems, CoT <= 256, stride 30, k 5
    python bench/exact_vs_sampled.py --problems 4 --repeats 1

For each GSM8K problem (honest prompt, greedy CoT of the embedded model, its own final answer
a_final as the reference) and the selfcommit study's cuts (t = stride, 2 stride, ..., T):

- **sampled**: ``continue_prefixes`` with k answers at temperature 0.7 (the study's estimator:
  prompt + CoT's cache, then all P * k rows decode the tag and up to 8 answer tokens);
- **exact**: ``score_answers`` of the integer plan for a_final (prompt + CoT's cache, then one
  forward pass of P rows: tag + answer tree), read at the same temperature;
- **prefill**: the prompt + CoT prefill alone.

Both estimators take prompt + CoT's cache from ``HFEngine.prefix_cache``: the cache the CoT's
own generation left (``DecodedCaches``) when the engine keeps it, else a prefill of their own.
Each is timed both ways:

- **cold**: the kept caches set aside, so the call prefills prompt + CoT itself; its per-prefix
  cost is (cold - prefill) / P;
- **warm**: the generation's cache kept, as in a study run (the CoT is generated, then probed):
  the call prefills nothing, and its per-prefix cost is warm / P.

The ratio printed in bold per prefix is warm sampled / warm exact: what each estimator computes
per cut in a study run. Each time is the minimum of ``--repeats`` interleaved runs. Spread: the
Monte-Carlo standard deviation of each summary of the sampled curve (c(t) = matches / k;
bootstrap over the k answers at every prefix, B resamples), against the exact curve's, which is
computed at every run and must be identical among the cold runs and among the warm ones (zero
variance; cold and warm may differ in the last float bits, printed); the seeded sampled answers
are compared across all runs.
"""

from __future__ import annotations

import statistics

import numpy as np
import torch
from _common import SELFCOMMIT_RUN, add_numbers, bench_parser, timed

from cotaudit.answers import extract_final_answer, extract_forced_answer
from cotaudit.datasets.gsm8k import load_problems
from cotaudit.engine.base import PrefixRequest
from cotaudit.engine.hf_batch import DecodedCaches
from cotaudit.probing.curves import prefix_positions, summarize_probabilities
from cotaudit.probing.exact import integer_plan, token_classes
from cotaudit.providers.hf_probe import _load_engine, resolve_model_path
from cotaudit.studies.selfcommit.prompts import SELFCOMMIT_FORCED_ANSWER_TAG, selfcommit_messages

SUMMARIES = ("tau_0.8", "uncommitted", "range_c", "lowcommit")
TIMES = ("prefill", "sampled_cold", "exact_cold", "sampled_warm", "exact_warm")


def bootstrap_spread(
    matches: list[list[bool]], positions: list[int], length: int, draws: int, seed: int
) -> dict[str, float]:
    """Standard deviation of each summary over ``draws`` resamples of the k answers at every
    prefix (with replacement): the sampled estimator's Monte-Carlo spread."""
    rng = np.random.default_rng(seed)
    hits = np.asarray(matches, dtype=float)  # [P, k]
    p, k = hits.shape
    out: dict[str, list[float]] = {name: [] for name in SUMMARIES}
    for _ in range(draws):
        idx = rng.integers(0, k, size=(p, k))
        c = np.take_along_axis(hits, idx, axis=1).mean(axis=1)
        summary = summarize_probabilities(c, positions, length)
        for name in SUMMARIES:
            out[name].append(summary[name])
    return {name: float(np.std(values)) for name, values in out.items()}


def main() -> None:
    parser = bench_parser(__doc__)
    add_numbers(parser, **SELFCOMMIT_RUN, temperature=0.7, repeats=3, draws=500)
    parser.add_argument("--model", default="default", help="default, tiny, a hub id or folder")
    parser.add_argument("--device", default="cpu", help="cpu, cuda or mps")
    args = parser.parse_args()

    torch.set_num_threads(max(torch.get_num_threads(), 1))
    engine = _load_engine(resolve_model_path(args.model), "float32", args.device)
    classes = token_classes(engine.vocabulary())
    tag = SELFCOMMIT_FORCED_ANSWER_TAG
    rows = []
    for problem in load_problems(limit=args.problems).items:
        messages = selfcommit_messages(problem.question, "honest", problem.answer)
        cot = engine.generate_sync(messages, args.max_cot_tokens, 0.0, 0)[0]
        a_final = extract_final_answer(cot.text, truncated=cot.finish_reason == "max_tokens")
        if a_final is None:
            print(f"problem {problem.index}: no final answer in the CoT, skipped")
            continue
        ids, length = cot.token_ids, len(cot.token_ids)
        positions = prefix_positions(length, args.stride)
        sampled_req = PrefixRequest(
            messages,
            ids,
            positions,
            tag,
            k=args.k,
            max_tokens=8,
            temperature=args.temperature,
            seed=problem.index,
        )
        plan = integer_plan(a_final, engine.tokenize, classes, max_tokens=8)
        exact_req = plan.request(messages, ids, positions, tag, args.temperature)
        sequence = engine.render(messages) + list(ids)
        kept = engine.decoded
        if kept.get(sequence) is None:
            raise SystemExit(f"problem {problem.index}: the CoT's generation left no cache")
        times: dict[str, list[float]] = {name: [] for name in TIMES}
        exact_runs: dict[str, list[list[float]]] = {"cold": [], "warm": []}
        sampled_runs = []
        for _ in range(args.repeats):
            dt, _ = timed(engine.prefill, sequence)
            times["prefill"].append(dt)
            for state in ("cold", "warm"):
                engine.decoded = DecodedCaches() if state == "cold" else kept
                dt, answers = timed(engine._locked, engine.continue_prefixes_sync, sampled_req)
                times[f"sampled_{state}"].append(dt)
                sampled_runs.append(answers)
                dt, scores = timed(engine._locked, engine.score_answers_sync, exact_req)
                times[f"exact_{state}"].append(dt)
                exact_runs[state].append([plan.point(s).p for s in scores])
            engine.decoded = kept
        matches = [[extract_forced_answer(a) == a_final for a in row] for row in answers]
        c_sampled = [sum(m) / args.k for m in matches]
        c_exact = exact_runs["warm"][0]
        c_cold = exact_runs["cold"][0]
        rows.append(
            {
                "problem": problem.index,
                "T": length,
                "P": len(positions),
                **{name: min(values) for name, values in times.items()},
                "identical": all(run == runs[0] for runs in exact_runs.values() for run in runs),
                "cold_warm": max(abs(a - b) for a, b in zip(c_cold, c_exact, strict=True)),
                "sampled_identical": all(run == answers for run in sampled_runs),
                "gap": float(np.mean(np.abs(np.asarray(c_exact) - np.asarray(c_sampled)))),
                "spread": bootstrap_spread(
                    matches, positions, length, args.draws, seed=problem.index
                ),
                "exact_summary": summarize_probabilities(c_exact, positions, length),
            }
        )

    if not rows:
        raise SystemExit(
            "no sample stated a final answer: nothing to compare (raise --max-cot-tokens)"
        )
    print(
        f"\n{len(rows)} samples, stride {args.stride}, k {args.k}, T {args.temperature}, "
        f"min of {args.repeats} interleaved runs, torch threads {torch.get_num_threads()}; "
        "cold: the call prefills prompt + CoT; warm: it reads the CoT generation's cache\n"
    )
    print(
        "| problem | T | P | prefill | sampled cold | exact cold | sampled warm | exact warm "
        "| per prefix ratio, cold | per prefix ratio, warm |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        exact_own = r["exact_cold"] - r["prefill"]
        cold = (
            f"{(r['sampled_cold'] - r['prefill']) / exact_own:.1f}x"
            if exact_own > 0
            else "n/a (prefill timed longer)"
        )
        warm = r["sampled_warm"] / r["exact_warm"]
        print(
            f"| {r['problem']} | {r['T']} | {r['P']} | {r['prefill']:.2f} s | "
            f"{r['sampled_cold']:.2f} s | {r['exact_cold']:.2f} s | {r['sampled_warm']:.2f} s | "
            f"{r['exact_warm']:.2f} s | {cold} | {warm:.1f}x |"
        )
    total = {name: sum(r[name] for r in rows) for name in TIMES}
    prefixes = sum(r["P"] for r in rows)
    per = {
        f"{name}_{state}": (
            total[f"{name}_{state}"] - (total["prefill"] if state == "cold" else 0.0)
        )
        / prefixes
        for name in ("sampled", "exact")
        for state in ("cold", "warm")
    }
    print(
        f"\ntotal: prefill {total['prefill']:.2f} s; cold: sampled {total['sampled_cold']:.2f} s, "
        f"exact {total['exact_cold']:.2f} s ({total['sampled_cold'] / total['exact_cold']:.1f}x "
        f"whole probing); warm: sampled {total['sampled_warm']:.2f} s, exact "
        f"{total['exact_warm']:.2f} s ({total['sampled_warm'] / total['exact_warm']:.1f}x)"
    )
    print(
        f"per prefix ({prefixes} prefixes): cold, prefill taken out: sampled "
        f"{per['sampled_cold'] * 1000:.0f} ms, exact {per['exact_cold'] * 1000:.0f} ms "
        f"({per['sampled_cold'] / per['exact_cold']:.1f}x); warm, nothing prefilled: sampled "
        f"{per['sampled_warm'] * 1000:.0f} ms, exact {per['exact_warm'] * 1000:.0f} ms: "
        f"**{per['sampled_warm'] / per['exact_warm']:.1f}x** (the ratio of a study run)"
    )
    print(
        f"exact curves identical across runs (cold among cold, warm among warm): "
        f"{sum(r['identical'] for r in rows)}/{len(rows)}; largest |c_exact cold - warm| "
        f"{max(r['cold_warm'] for r in rows):.2e} (the generation's cache and a prefill differ "
        f"in the last float bits); sampled answers identical across all runs, cold and warm: "
        f"{sum(r['sampled_identical'] for r in rows)}/{len(rows)}; "
        f"mean |c_exact - c_sampled| per prefix {statistics.mean(r['gap'] for r in rows):.3f}"
    )
    print("\nMonte-Carlo spread (sd over bootstrap of the k answers; exact: 0 by construction)")
    print("| summary | sampled sd (mean over samples) | exact sd |")
    print("|---|---:|---:|")
    for name in SUMMARIES:
        sd = statistics.mean(r["spread"][name] for r in rows)
        print(f"| {name} | {sd:.3f} | 0 |")


if __name__ == "__main__":
    main()
