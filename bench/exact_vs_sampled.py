"""The exact estimator vs k sampled forced answers, on the same samples, side by side.

    python bench/exact_vs_sampled.py                  # 8 problems, CoT <= 256, stride 30, k 5
    python bench/exact_vs_sampled.py --problems 4 --repeats 1

For each GSM8K problem (honest prompt, greedy CoT of the embedded model, its own final answer
a_final as the reference) and the selfcommit study's cuts (t = stride, 2 stride, ..., T):

- **sampled**: ``continue_prefixes`` with k answers at temperature 0.7 (the study's estimator:
  one prefill of prompt + CoT, then all P * k rows decode the tag and up to 8 answer tokens);
- **exact**: ``score_answers`` of the integer plan for a_final (one prefill, then one forward
  pass of P rows: tag + answer tree), read at the same temperature;
- **prefill**: the prompt + CoT prefill alone, which both include, so the per-prefix cost of
  each is (time - prefill) / P.

Each is timed ``--repeats`` times, interleaved; the minimum counts. Spread: the Monte-Carlo
standard deviation of each summary of the sampled curve (c(t) = matches / k; bootstrap over the
k answers at every prefix, B resamples), against the exact curve's, which is computed twice and
must be identical (zero variance).
"""

from __future__ import annotations

import statistics

import numpy as np
import torch
from _common import SELFCOMMIT_RUN, add_numbers, bench_parser, timed

from cotaudit.answers import extract_final_answer, extract_forced_answer
from cotaudit.datasets.gsm8k import load_problems
from cotaudit.engine.base import PrefixRequest
from cotaudit.probing.curves import prefix_positions, summarize_probabilities
from cotaudit.probing.exact import integer_plan, token_classes
from cotaudit.providers.hf_probe import _load_engine, resolve_model_path
from cotaudit.studies.selfcommit.prompts import SELFCOMMIT_FORCED_ANSWER_TAG, selfcommit_messages

SUMMARIES = ("tau_0.8", "uncommitted", "range_c", "lowcommit")


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
        prompt_ids = engine.render(messages)
        times: dict[str, list[float]] = {"prefill": [], "sampled": [], "exact": []}
        exact_runs, answers = [], []
        for _ in range(args.repeats):
            dt, _ = timed(engine.prefill, prompt_ids + list(ids))
            times["prefill"].append(dt)
            dt, answers = timed(engine._locked, engine.continue_prefixes_sync, sampled_req)
            times["sampled"].append(dt)
            dt, scores = timed(engine._locked, engine.score_answers_sync, exact_req)
            times["exact"].append(dt)
            exact_runs.append([plan.point(s).p for s in scores])
        matches = [[extract_forced_answer(a) == a_final for a in row] for row in answers]
        c_sampled = [sum(m) / args.k for m in matches]
        c_exact = exact_runs[0]
        rows.append(
            {
                "problem": problem.index,
                "T": length,
                "P": len(positions),
                **{name: min(values) for name, values in times.items()},
                "identical": all(run == c_exact for run in exact_runs),
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
        f"min of {args.repeats} interleaved runs, torch threads {torch.get_num_threads()}\n"
    )
    print("| problem | T | P | prefill | sampled | exact | sampled/exact | per prefix ratio |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        per = (r["sampled"] - r["prefill"]) / max(r["exact"] - r["prefill"], 1e-9)
        print(
            f"| {r['problem']} | {r['T']} | {r['P']} | {r['prefill']:.2f} s | "
            f"{r['sampled']:.2f} s | {r['exact']:.2f} s | {r['sampled'] / r['exact']:.1f}x | "
            f"{per:.1f}x |"
        )
    total = {name: sum(r[name] for r in rows) for name in ("prefill", "sampled", "exact")}
    prefixes = sum(r["P"] for r in rows)
    per_sampled = (total["sampled"] - total["prefill"]) / prefixes
    per_exact = (total["exact"] - total["prefill"]) / prefixes
    print(
        f"\ntotal: prefill {total['prefill']:.2f} s, sampled {total['sampled']:.2f} s, exact "
        f"{total['exact']:.2f} s: **{total['sampled'] / total['exact']:.1f}x** whole probing; "
        f"per prefix (prefill taken out, {prefixes} prefixes) sampled {per_sampled * 1000:.0f} ms"
        f", exact {per_exact * 1000:.0f} ms: **{per_sampled / per_exact:.1f}x**"
    )
    print(
        f"exact curves identical across runs: {sum(r['identical'] for r in rows)}/{len(rows)}; "
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
