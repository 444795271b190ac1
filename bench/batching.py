"""Whole-study throughput of the in-process engines, unbatched vs batched across samples.

    python bench/batching.py                       # hf-probe/default
    python bench/batching.py --model mlx/default   # the MLX engine (Linux CPU here)

The same selfcommit run (``--problems`` GSM8K problems x honest, hinted; max_cot_tokens 300,
k 5, stride 30 by default) three times in one process, side by side, all at
``--max-connections`` (16):

- ``unbatched``: ``-M max_batch_rows=1`` (one decode job at a time: samples run concurrently
  but each decodes alone) with unpadded rows (``-M pad_rows=false`` on hf-probe), i.e. the
  computation before batching (a lone CoT decodes at 1 row);
- ``unbatched-padded``: the same with decode steps padded to a multiple of 4 rows, the
  reference the batched run must equal bit for bit (``cotaudit.engine.hf_batch``; skipped for
  ``mlx/``, which does not pad);
- ``batched``: the default ``max_batch_rows`` (concurrent samples' CoTs and prefix sweeps
  decode in one batch).

Engines are loaded before the clock starts. Prints each run's samples/minute, whether batched
produced the same study as each unbatched run (every CoT token for token, every forced answer),
and a last line ``samples/min: unbatched U, batched B`` for scripts.
"""

from __future__ import annotations

import argparse
from typing import Any

from _common import add_numbers, bench_parser, selfcommit_eval
from inspect_ai.model import get_model


def study(log: Any) -> dict[Any, Any]:
    """Per sample (id, epoch): the CoT text and the forced answers at every prefix."""
    return {
        (s.id, s.epoch): (s.output.completion, s.store.get("selfcommit", {}).get("answers"))
        for s in log.samples
    }


def run(
    model: str, model_args: dict[str, Any], args: argparse.Namespace
) -> tuple[float, dict[str, Any]]:
    get_model(model, **model_args)  # load the engine before the clock starts
    task_args = {
        "problems": args.problems,
        "max_cot_tokens": args.max_cot_tokens,
        "k": args.k,
        "stride": args.stride,
    }
    elapsed, (samples, runs) = selfcommit_eval(
        task_args,
        args.max_connections,
        lambda log: (len(log.samples or []), study(log)),
        lambda log: SystemExit(f"{model} {model_args}: eval {log.status}: {log.error}"),
        model=model,
        model_args=model_args,
    )
    return 60 * samples / elapsed, runs


def main() -> None:
    parser = bench_parser(__doc__)
    parser.add_argument("--model", default="hf-probe/default")
    add_numbers(parser, problems=4, max_cot_tokens=300, k=5, stride=30, max_connections=16)
    parser.add_argument(
        "--max-batch-rows",
        type=int,
        default=None,
        help="batched run's row cap (default: the engine's)",
    )
    args = parser.parse_args()
    batched_args = {} if args.max_batch_rows is None else {"max_batch_rows": args.max_batch_rows}
    hf = args.model.startswith("hf-probe/")
    runs = [("unbatched", {"max_batch_rows": 1} | ({"pad_rows": False} if hf else {}))]
    if hf:
        runs.append(("unbatched-padded", {"max_batch_rows": 1}))
    runs.append(("batched", batched_args))
    rates, studies = {}, {}
    for name, model_args in runs:
        rates[name], studies[name] = run(args.model, model_args, args)
        print(
            f"{args.model} {name} ({model_args or 'default rows'}): {len(studies[name])} "
            f"samples, {rates[name]:.2f} samples/min",
            flush=True,
        )
    for name in rates:
        if name != "batched":
            same = studies[name] == studies["batched"]
            print(
                f"batched/{name}: {rates['batched'] / rates[name]:.2f}x; same CoTs and forced "
                f"answers: {'yes' if same else 'NO'}"
            )
    print(f"samples/min: unbatched {rates['unbatched']:.2f}, batched {rates['batched']:.2f}")


if __name__ == "__main__":
    main()
