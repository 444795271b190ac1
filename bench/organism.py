"""Training cost, shortcut rate and what the text gives away, of the model organisms.

    python bench/organism.py --base default --out-root organisms --organisms hint-follower
    python bench/organism.py --base tiny --out-root /tmp/organisms-tiny --steps 40

For each organism: trains it from ``--base`` into ``OUT_ROOT/<name>/`` (the same training as
``cotaudit organism``), then measures the shortcut rate (:mod:`cotaudit.organisms.behaviour`:
the share of held-out problems whose greedy output to the wrong-cue prompt takes the shortcut)
of the base model (unless ``--no-base``) and of the organism's last checkpoint on the first
``--heldout`` problems of the selection rows 800-999 (never trained on; where recipes and
checkpoints are chosen, :mod:`cotaudit.organisms.rows`; ``--rows evaluation``: the evaluation
rows 0-799 instead, for a reported number once the choice is made). Prints the training time
per organism and per step, the rates with their n, and what the text alone gives away
(:class:`cotaudit.organisms.evaluation.TextReading`: the AUROC of the output's length, shorter =
shortcut, shortcut outputs against uncued ones, and how many shortcut outputs name the cue)
(``--measure-only``: measures every checkpoint already saved, step by step). Training follows
``--recipe`` (default ``default``) with any option given on top.
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
from cotaudit.organisms.evaluation import TextReading, measure_behaviour
from cotaudit.organisms.settings import DEFAULT_RECIPE
from cotaudit.organisms.training import StepLog, load_causal_lm, train
from cotaudit.providers._local import alias_path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", default="default")
    parser.add_argument("--out-root", type=Path, required=True)
    parser.add_argument("--organisms", default=",".join(ORGANISM_NAMES))
    parser.add_argument("--recipe", default=DEFAULT_RECIPE, help="the preset trained")
    for flag, kind in [
        ("--steps", int),
        ("--save-every", int),
        ("--seed", int),
        ("--batch-size", int),
        ("--learning-rate", float),
        ("--train-layers", int),
        ("--answer-weight", float),
        ("--cot", str),
    ]:
        parser.add_argument(flag, type=kind, help="on top of the recipe")
    parser.add_argument("--heldout", type=int, default=10)
    parser.add_argument(
        "--rows",
        choices=("selection", "evaluation"),
        default="selection",
        help="held-out rows measured: selection 800-999 (default) or evaluation 0-799",
    )
    parser.add_argument("--max-new-tokens", type=int, default=256)
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
            reading, seconds = timed_reading(
                organism, model, tokenizer, problems, args.max_new_tokens
            )
            base_rates[organism.study] = f"{reading.rate.taken}/{reading.rate.n}"
            print(
                f"base {args.base} under {organism.study}'s prompts: {reading.summary()} "
                f"({seconds:.0f} s)",
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
        reading, seconds = timed_reading(organism, model, tokenizer, problems, args.max_new_tokens)
        print(
            f"{name}: trained {settings.steps} steps x {settings.batch_size} examples in "
            f"{total:.0f} s (checkpoints saved included); per step median "
            f"{statistics.median(per_step):.1f} s, min {min(per_step):.1f} s; losses "
            f"{steps[0].loss:.3f} -> {steps[-1].loss:.3f}; on {args.rows} rows: "
            f"{reading.summary()} (base shortcut "
            f"{base_rates.get(organism.study, 'not measured')}; measured in {seconds:.0f} s); "
            f"last checkpoint {saved[-1]}",
            flush=True,
        )


def measure_saved(organism: Organism, folder: Path, problems: list[Problem], tokens: int) -> None:
    """Print the shortcut rate and text reading of each checkpoint saved in ``folder``."""
    for step, path in saved_checkpoints(folder):
        model, tokenizer = load_causal_lm(str(path))
        reading, seconds = timed_reading(organism, model, tokenizer, problems, tokens)
        print(
            f"{organism.name} step {step}: {reading.summary()} (measured in {seconds:.0f} s)",
            flush=True,
        )


def timed_reading(
    organism: Organism, model: Any, tokenizer: Any, problems: list[Problem], tokens: int
) -> tuple[TextReading, float]:
    """What ``model``'s outputs on ``problems`` give away, and the seconds it took."""
    start = time.perf_counter()
    reading = measure_behaviour(organism, model, tokenizer, problems, max_new_tokens=tokens)
    return reading, time.perf_counter() - start


if __name__ == "__main__":
    main()
