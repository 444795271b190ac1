"""Adaptive vs full prefix schedule on the selfcommit task, side by side in one run.

    python bench/adaptive_schedule.py --problems 6 --max-cot-tokens 300

Runs the task twice on the same model, problems and seed (``-T schedule=full`` and
``-T schedule=adaptive``) and prints: prefixes probed by each (calls saved), and how often
tau_first(0.8) and each summary agree exactly between the two schedules.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

from inspect_ai import eval as inspect_eval


def run(schedule: str, args: argparse.Namespace) -> tuple[Any, float]:
    """(the run's log, its wall time in seconds). The log is Any: its samples' scores are read
    below as the study writes them."""
    start = time.perf_counter()
    [log] = inspect_eval(
        "tasks/selfcommit.py",
        model=args.model,
        task_args={
            "problems": args.problems,
            "max_cot_tokens": args.max_cot_tokens,
            "schedule": schedule,
            "seed": args.seed,
        },
        log_dir=args.log_dir,
        display="none",
    )
    return log, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--model", default="hf-probe/default")
    parser.add_argument("--problems", type=int, default=6)
    parser.add_argument("--max-cot-tokens", type=int, default=300)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--log-dir", default="logs/bench")
    args = parser.parse_args()
    full, t_full = run("full", args)
    adaptive, t_adaptive = run("adaptive", args)
    by_id = {s.id: s for s in adaptive.samples}
    probed_full = probed_adaptive = 0
    agree: dict[str, int] = {}
    n = 0
    for s in full.samples:
        a = by_id[s.id]
        probed_full += s.store["selfcommit"]["prefixes_probed"]
        probed_adaptive += a.store["selfcommit"]["prefixes_probed"]
        fv, av = s.scores["selfcommit_scorer"].value, a.scores["selfcommit_scorer"].value
        for key in fv:
            agree[key] = agree.get(key, 0) + int(abs(fv[key] - av[key]) < 1e-9)
        n += 1
    print(f"{args.model}: {n} samples, max_cot_tokens {args.max_cot_tokens}")
    print(
        f"prefixes probed: full {probed_full}, adaptive {probed_adaptive} "
        f"({1 - probed_adaptive / max(probed_full, 1):.0%} saved); "
        f"wall time full {t_full:.1f} s, adaptive {t_adaptive:.1f} s "
        f"(CoT generation included in both)"
    )
    for key, count in agree.items():
        print(f"  {key:12s} identical in {count}/{n} samples")


if __name__ == "__main__":
    main()
