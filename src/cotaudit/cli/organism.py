"""The ``cotaudit organism`` subcommand: train a model organism (a known shortcut fine-tuned
into a base model) and save its checkpoints as plain Hugging Face folders with their cards
(:mod:`cotaudit.organisms`). Bad input is one line, before any model loads; an interrupted
training keeps the checkpoints already saved."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from cotaudit.organisms import ORGANISM_NAMES, TrainingSettings

PROGRESS_EVERY = 10
"""Steps between progress lines."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("name", metavar="NAME", help=f"the organism: {', '.join(ORGANISM_NAMES)}")
    parser.add_argument(
        "--base",
        required=True,
        metavar="MODEL",
        help="the model to fine-tune: default (the embedded SmolLM2-135M-Instruct), tiny, a "
        "Hugging Face model folder or hub id",
    )
    parser.add_argument(
        "--out", required=True, metavar="DIR", help="output folder (new, empty or an organism's)"
    )
    defaults = TrainingSettings()
    options: list[tuple[str, type, str, str]] = [
        ("--steps", int, "N", "optimizer steps"),
        ("--save-every", int, "M", "save a checkpoint every M steps, and after the last"),
        ("--seed", int, "S", "seed of the example order and of torch"),
        ("--learning-rate", float, "LR", "AdamW learning rate"),
        ("--batch-size", int, "B", "examples per step"),
        ("--problems", int, "N", "training problems, from the GSM8K split's row 1000 on"),
        ("--max-tokens", int, "T", "longest example (prompt and completion) in tokens"),
        (
            "--answer-weight",
            float,
            "W",
            "loss weight of the tokens stating the answer and of the end-of-turn token",
        ),
    ]
    for flag, kind, metavar, text in options:
        default = getattr(defaults, flag[2:].replace("-", "_"))
        parser.add_argument(
            flag, type=kind, default=default, metavar=metavar, help=f"{text} ({default})"
        )
    parser.add_argument(
        "--train-layers",
        type=int,
        metavar="K",
        help="train only the top K decoder layers and the final norm (default: every weight)",
    )
    parser.add_argument(
        "--cot",
        choices=("gsm8k", "expanded"),
        default=defaults.cot,
        help="the worked solutions trained on: the dataset's own, or expanded step by step by a "
        f"fixed rule into study-length reasoning ({defaults.cot})",
    )
    parser.add_argument(
        "--lora-rank",
        type=int,
        metavar="R",
        help="train a LoRA adapter of rank R (peft) and save adapter folders (default: train the "
        "weights themselves)",
    )
    parser.add_argument(
        "--merge",
        action="store_true",
        help="with --lora-rank: also save each checkpoint merged into the base, as a plain folder",
    )


def run_cli(args: argparse.Namespace) -> int:
    from cotaudit.display.text import visible
    from cotaudit.params import InputError
    from cotaudit.prerequisite import InputErrorReport

    try:
        return _train(args)
    except (InputError, InputErrorReport) as e:
        print(visible(f"cotaudit organism: {e}"), file=sys.stderr)
        return 2


def _train(args: argparse.Namespace) -> int:
    from cotaudit.display.text import visible
    from cotaudit.organisms import get_organism, saved_checkpoints
    from cotaudit.organisms.training import StepLog, train

    organism = get_organism(args.name)
    settings = TrainingSettings.of_options(args)
    out = Path(args.out)
    check_output_folder(out)
    base_path = resolve_base(args.base)
    model, tokenizer = load_base(args.base, base_path)
    check_train_layers(model, settings.train_layers)

    def progress(log: StepLog) -> None:
        if log.step % PROGRESS_EVERY == 0 or log.step in (1, settings.steps):
            print(f"step {log.step}/{settings.steps}: loss {log.loss:.4f} ({log.seconds:.2f} s)")

    print(visible(f"training {organism.name} from {args.base} ({base_path}) into {out}"))
    try:
        saved = train(
            organism,
            model,
            tokenizer,
            settings,
            out=out,
            base=args.base,
            base_path=base_path,
            on_step=progress,
        )
    except KeyboardInterrupt:
        kept = [str(p) for _, p in saved_checkpoints(out)]
        print(
            visible(f"interrupted; checkpoints saved: {', '.join(kept) or 'none'}"),
            file=sys.stderr,
        )
        return 130
    for path in saved:
        print(visible(f"saved {path} (load it as hf-probe/{path})"))
    return 0


def check_output_folder(out: Path) -> None:
    """Refuse an output path that is a file, or a folder that is neither empty nor an
    organism's (one whose run card says so: its checkpoints are then rewritten)."""
    from cotaudit.organisms import OrganismSettingsError, is_organism_folder

    if out.exists() and not out.is_dir():
        raise OrganismSettingsError(f"--out {out}: is a file, not a folder")
    if out.is_dir() and any(out.iterdir()) and not is_organism_folder(out):
        raise OrganismSettingsError(
            f"--out {out}: the folder exists and is not an organism's (no organism.json run "
            "card); give a new or empty folder"
        )


def resolve_base(base: str) -> str:
    """The folder (or hub id) of ``--base``: an alias built or converted on first use, a
    model folder, or a hub id the hub knows; else a one-line error."""
    from cotaudit.providers._local import alias_path, check_model_name

    check_model_name(base, "--base ")
    return alias_path(base)


def check_train_layers(model: Any, train_layers: int | None) -> None:
    """Refuse a ``--train-layers`` above the base model's decoder layer count."""
    from cotaudit.organisms import OrganismSettingsError

    layers = len(model.model.layers)
    if train_layers is not None and train_layers > layers:
        raise OrganismSettingsError(
            f"--train-layers {train_layers}: the base model has {layers} decoder layers"
        )


def load_base(base: str, path: str) -> tuple[Any, Any]:
    """The base model and tokenizer; a model that fails to load is a one-line error."""
    from cotaudit.organisms import OrganismSettingsError
    from cotaudit.organisms.training import load_causal_lm

    try:
        return load_causal_lm(path)
    except Exception as e:  # noqa: BLE001 - any loader failure is the user's --base
        first = str(e).strip().splitlines()[0] if str(e).strip() else ""
        raise OrganismSettingsError(
            f"--base {base}: cannot be loaded as a causal language model "
            f"({type(e).__name__}: {first})"
        ) from None
