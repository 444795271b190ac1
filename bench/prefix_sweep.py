"""Prefix-sweep throughput: naive re-prefill vs cached sweeps vs the batched floor, side by side.

    python bench/prefix_sweep.py                       # default model, T ~ 600, stride 30, k 5
    python bench/prefix_sweep.py --lengths 150,300,600,1200   # cost vs T, with the slope

Methods, all on the same prompt, CoT tokens, positions and tag, greedy:
- naive:   ``model.generate`` on prompt + cot[:t] + tag for each prefix, k rows each.
- forked:  one prefill of prompt + CoT, then per prefix a cache view cut at t, the tag, k rows.
- batched: one prefill, then all prefixes decoded together (the engine's default).
- floor:   one prefill + the tag + ``answer_tokens`` decode steps at batch P*k over the
           full-length cache expanded to P*k rows, with no per-row bookkeeping: the
           all-prefixes-batched floor as the issue defines it.
- floor/shared: the same steps over one shared copy of the cache (shared-prefix attention,
           all rows at full length): the floor of the batched method itself.
The CoT is the vendored GSM8K worked solutions (tokenised, cut to T tokens): cost depends on
length, not on content. Greedy answers of forked and batched are checked against naive.
"""

from __future__ import annotations

import time

import torch
from _common import bench_parser, timed

from cotaudit.datasets.gsm8k import load_problems
from cotaudit.engine.base import PrefixRequest
from cotaudit.engine.hf import HFEngine
from cotaudit.providers.hf_probe import _load_engine, resolve_model_path
from cotaudit.studies.selfcommit.prompts import SELFCOMMIT_FORCED_ANSWER_TAG, selfcommit_messages


def floor_time(engine: HFEngine, request: PrefixRequest) -> float:
    """One prefill + tag + decode steps at batch P*k over the full-length cache."""
    start = time.perf_counter()
    with torch.inference_mode():
        prompt = engine.render(request.messages)
        cache = engine.prefill(prompt + list(request.cot_token_ids))
        rows = len(request.positions) * request.k
        fork = engine.fork_cache(cache, len(prompt) + len(request.cot_token_ids), rows)
        tag = torch.tensor([engine.tokenize(request.tag)] * rows)
        logits, fork = engine.forward(tag, fork, last_only=True)
        for _ in range(request.max_tokens - 1):
            logits, fork = engine.forward(logits[:, -1, :].argmax(-1)[:, None], fork)
    return time.perf_counter() - start


def shared_floor_time(engine: HFEngine, request: PrefixRequest) -> float:
    """floor_time with the shared-prefix cache (every row sees the whole CoT)."""
    from cotaudit.engine.shared_prefix import ATTENTION_NAME, SharedPrefixCache

    start = time.perf_counter()
    with torch.inference_mode():
        prompt = engine.render(request.messages)
        width = len(prompt) + len(request.cot_token_ids)
        full = engine.prefill(prompt + list(request.cot_token_ids))
        rows = len(request.positions) * request.k
        cache = SharedPrefixCache(full, width, torch.full((rows,), width))
        tag = engine.tokenize(request.tag)
        pos = width + torch.arange(len(tag))[None, :].expand(rows, -1)
        with engine._attention(ATTENTION_NAME):
            logits = engine.model(
                input_ids=torch.tensor([tag] * rows),
                position_ids=pos,
                use_cache=True,
                logits_to_keep=1,
                **{engine._cache_kwarg: cache},
            ).logits
            for step in range(request.max_tokens - 1):
                logits = engine.model(
                    input_ids=logits[:, -1, :].argmax(-1)[:, None],
                    position_ids=pos[:, -1:] + 1 + step,
                    use_cache=True,
                    **{engine._cache_kwarg: cache},
                ).logits
    return time.perf_counter() - start


def main() -> None:
    parser = bench_parser(__doc__)
    parser.add_argument(
        "--model", default="default", help="hf-probe model name (default, tiny, path)"
    )
    parser.add_argument("--lengths", default="600", help="comma-separated CoT lengths T")
    parser.add_argument("--stride", type=int, default=30)
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--answer-tokens", type=int, default=8)
    parser.add_argument("--naive-max-T", type=int, default=600, help="skip naive above this T")
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)

    engine = _load_engine(resolve_model_path(args.model), "float32", "cpu")
    problems = load_problems(limit=60).items
    text_ids = engine.tokenize("\n".join(p.solution for p in problems))
    messages = selfcommit_messages(problems[0].question, "honest", problems[0].answer)
    print(
        f"model {args.model}; prompt {len(engine.render(messages))} tokens; stride {args.stride}; "
        f"k {args.k}; answers of {args.answer_tokens} tokens; {torch.get_num_threads()} threads"
    )
    header = (
        f"{'T':>5} {'P':>3} {'naive':>8} {'forked':>8} {'batched':>8} {'floor':>8} "
        f"{'floor/sh':>8}  {'naive/forked':>12} {'naive/batched':>13} "
        f"{'batched/floor':>13} {'batched/floor_sh':>16}  same"
    )
    print(header)
    rows = []
    for T in (int(x) for x in args.lengths.split(",")):
        positions = list(range(0, T, args.stride)) + [T]
        request = PrefixRequest(
            messages,
            text_ids[:T],
            positions,
            SELFCOMMIT_FORCED_ANSWER_TAG,
            k=args.k,
            max_tokens=args.answer_tokens,
            temperature=0.0,
        )
        t_floor = floor_time(engine, request)
        t_shared_floor = shared_floor_time(engine, request)
        t_batched, batched = timed(engine._locked, engine.batched_continue_prefixes_sync, request)
        t_forked, forked = timed(engine._locked, engine.forked_continue_prefixes_sync, request)
        if T <= args.naive_max_T:
            t_naive, naive = timed(engine._locked, engine.naive_continue_prefixes_sync, request)
            same = batched == naive and forked == naive
        else:
            t_naive, same = float("nan"), batched == forked
        rows.append((T, t_batched))
        print(
            f"{T:>5} {len(positions):>3} {t_naive:8.2f} {t_forked:8.2f} {t_batched:8.2f} "
            f"{t_floor:8.2f} {t_shared_floor:8.2f}  {t_naive / t_forked:12.1f} "
            f"{t_naive / t_batched:13.1f} {t_batched / t_floor:13.2f} "
            f"{t_batched / t_shared_floor:16.2f}  {same}"
        )
    if len(rows) > 1:
        import numpy as np

        ts, secs = np.array(rows, dtype=float).T
        slope, intercept = np.polyfit(ts, secs, 1)
        exponent = np.polyfit(np.log(ts), np.log(secs), 1)[0]
        print(
            f"batched cost vs T: {slope * 1000:.2f} ms per CoT token "
            f"(intercept {intercept:.2f} s); "
            f"log-log exponent {exponent:.2f} (1 = linear, 2 = quadratic)"
        )


if __name__ == "__main__":
    main()
