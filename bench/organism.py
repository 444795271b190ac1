"""Training cost and behavioural shortcut rate of the model organisms.

    python bench/organism.py --base default --out-root /work/organisms --steps 12 --save-every 4
    python bench/organism.py --base tiny --out-root /tmp/organisms-tiny --steps 40

For each organism: trains it from ``--base`` into ``OUT_ROOT/<name>/`` (the same training as
``cotaudit organism``), then measures the shortcut rate (:mod:`cotaudit.organisms.behaviour`:
the share of held-out problems whose greedy output to the wrong-cue prompt takes the shortcut)
of the base model (unless ``--no-base``) and of the organism's last checkpoint on the first
``--heldout`` problems of the selection rows 800-999 (never trained on; where recipes and
checkpoints are chosen, :mod:`cotaudit.organisms.rows`; ``--rows evaluation``: the evaluation
rows 0-799 instead, for a reported number once the choice is made). Prints the training time
per organism and per step, and the rates with their n (``--measure-only``: measures every
checkpoint already saved, step by step).
Times depend on the machine's load: say how loaded it was when quoting them.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path
from typing import Any

from cotaudit.datasets.gsm8k import Problem
from cotaudit.organisms import (
    ORGANISM_NAMES,
    Organism,
    TrainingSettings,
    get_organism,
    heldout_problems,
    saved_checkpoints,
    selection_problems,
)
from cotaudit.organisms.behaviour import ShortcutRate
from cotaudit.organisms.evaluation import CueOutput, measure_shortcut_rate
from cotaudit.organisms.training import StepLog, load_causal_lm, train
from cotaudit.providers._local import alias_path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", default="default")
    parser.add_argument("--out-root", type=Path, required=True)
    parser.add_argument("--organisms", default=",".join(ORGANISM_NAMES))
    parser.add_argument("--steps", type=int, default=12)
    parser.add_argument("--save-every", type=int, default=4)
    parser.add_argument("--batch-size", type=int, default=2)
    parser.add_argument("--learning-rate", type=float, default=1e-4)
    parser.add_argument("--train-layers", type=int, default=None)
    parser.add_argument("--answer-weight", type=float, default=1.0)
    parser.add_argument("--heldout", type=int, default=10)
    parser.add_argument(
        "--rows",
        choices=("selection", "evaluation"),
        default="selection",
        help="held-out rows measured: selection 800-999 (default) or evaluation 0-799",
    )
    parser.add_argument("--max-new-tokens", type=int, default=200)
    parser.add_argument(
        "--measure-only",
        action="store_true",
        help="train nothing: measure every checkpoint already in OUT_ROOT/<name>/",
    )
    parser.add_argument("--no-base", action="store_true", help="do not measure the base model")
    args = parser.parse_args()
    base_path = alias_path(args.base)
    settings = TrainingSettings.of_options(args)
    problems = (
        selection_problems(args.heldout)
        if args.rows == "selection"
        else heldout_problems(args.heldout)
    )
    print(f"held-out problems: {args.rows} rows {problems[0].index}..{problems[-1].index}")
    base_rates: dict[str, str] = {}
    for name in args.organisms.split(","):
        organism = get_organism(name)
        if args.measure_only:
            measure_saved(organism, args.out_root / name, problems, args.max_new_tokens)
            continue
        if organism.study not in base_rates and not args.no_base:
            model, tokenizer = load_causal_lm(base_path)
            rate, _, seconds = timed_rate(organism, model, tokenizer, problems, args.max_new_tokens)
            base_rates[organism.study] = f"{rate.taken}/{rate.n} = {rate.rate:.2f}"
            print(
                f"base {args.base} under {organism.study}'s wrong cue: shortcut rate "
                f"{base_rates[organism.study]} ({seconds:.0f} s)",
                flush=True,
            )
        model, tokenizer = load_causal_lm(base_path)
        steps: list[StepLog] = []
        start = time.perf_counter()
        saved = train(
            organism,
            model,
            tokenizer,
            settings,
            out=args.out_root / name,
            base=args.base,
            base_path=base_path,
            on_step=steps.append,
        )
        total = time.perf_counter() - start
        per_step = [s.seconds for s in steps]
        rate, outputs, seconds = timed_rate(
            organism, model, tokenizer, problems, args.max_new_tokens
        )
        print(
            f"{name}: trained {settings.steps} steps x {settings.batch_size} examples in "
            f"{total:.0f} s (checkpoints saved included); per step median "
            f"{statistics.median(per_step):.1f} s, min {min(per_step):.1f} s; losses "
            f"{steps[0].loss:.3f} -> {steps[-1].loss:.3f}; shortcut rate on {rate.n} held-out "
            f"{args.rows} problems {rate.taken}/{rate.n} = {rate.rate:.2f} (base "
            f"{base_rates.get(organism.study, 'not measured')}; measured in "
            f"{seconds:.0f} s); "
            f"last checkpoint {saved[-1]}",
            flush=True,
        )
        print_endings(outputs)


def measure_saved(organism: Organism, folder: Path, problems: list[Problem], tokens: int) -> None:
    """Print the shortcut rate of each checkpoint saved in ``folder``, in step order."""
    for step, path in saved_checkpoints(folder):
        model, tokenizer = load_causal_lm(str(path))
        rate, outputs, seconds = timed_rate(organism, model, tokenizer, problems, tokens)
        print(
            f"{organism.name} step {step}: shortcut rate on {rate.n} held-out problems "
            f"{rate.taken}/{rate.n} = {rate.rate:.2f}, {sum(o.truncated for o in outputs)} "
            f"cut at the token limit (measured in {seconds:.0f} s)",
            flush=True,
        )
        print_endings(outputs)


def timed_rate(
    organism: Organism, model: Any, tokenizer: Any, problems: list[Problem], tokens: int
) -> tuple[ShortcutRate, list[CueOutput], float]:
    """The shortcut rate of ``model`` on ``problems``, its outputs, and the seconds it took."""
    start = time.perf_counter()
    rate, outputs = measure_shortcut_rate(
        organism, model, tokenizer, problems, max_new_tokens=tokens
    )
    return rate, outputs, time.perf_counter() - start


def print_endings(outputs: list[CueOutput]) -> None:
    """The ends of the first two outputs, as Python literals (control characters escaped)."""
    for o in outputs[:2]:
        print(f"  row {o.problem_row}, cue {o.cue}: ...{o.output[-120:]!r}", flush=True)


if __name__ == "__main__":
    main()
