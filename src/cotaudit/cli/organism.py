"""The ``cotaudit organism`` subcommand: train a model organism (a known shortcut fine-tuned
into a base model) and save its checkpoints as plain Hugging Face folders with their cards
(:mod:`cotaudit.organisms`). Bad input is one line, before any model loads; an interrupted
training keeps the checkpoints already saved."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from cotaudit.organisms import COT_STYLES, ORGANISM_NAMES, TrainingSettings
from cotaudit.organisms.settings import ALL_LAYERS, DEFAULT_RECIPE, RECIPES

SELECTION_CHECK = 20
"""Selection problems each saved checkpoint is measured on by default."""


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
    parser.add_argument(
        "--recipe",
        metavar="NAME",
        help=f"the preset trained ({DEFAULT_RECIPE}; one of {', '.join(RECIPES)}); each option "
        "below given on top of it replaces the recipe's value",
    )
    defaults = TrainingSettings.of_recipe(DEFAULT_RECIPE)
    options: list[tuple[str, Callable[[str], Any], str, str]] = [
        ("--steps", int, "N", "optimizer steps"),
        ("--save-every", int, "M", "save a checkpoint every M steps, and after the last"),
        ("--seed", int, "S", "seed of the example order and of torch"),
        ("--learning-rate", float, "LR", "AdamW learning rate"),
        ("--batch-size", int, "B", "examples per step"),
        ("--problems", int, "N", "training problems, from the GSM8K split's row 1000 on"),
        ("--max-tokens", int, "T", "longest example (prompt and completion) in tokens"),
        ("--answer-weight", float, "W", "loss weight of the answer lines and end-of-turn token"),
        ("--train-layers", _layers, "K", "train only the top K decoder layers and the final norm"),
    ]
    for flag, kind, metavar, text in options:
        default = getattr(defaults, flag[2:].replace("-", "_"))
        parser.add_argument(
            flag, type=kind, metavar=metavar, help=f"{text} (default recipe: {default})"
        )
    parser.add_argument(
        "--cot",
        choices=COT_STYLES,
        help="the worked solutions trained on: gsm8k (the dataset's own), expanded (the "
        "dataset's expanded step by step by a fixed rule) or own (the base model's own working "
        f"to the uncued prompt, generated first) (default recipe: {defaults.cot})",
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
        default=None,
        help="with --lora-rank: also save each checkpoint merged into the base, as a plain folder",
    )
    parser.add_argument(
        "--selection-problems",
        type=int,
        default=SELECTION_CHECK,
        metavar="N",
        help="after each checkpoint is saved, its shortcut rate and what its text gives away on "
        f"the first N selection rows (800 on, never trained on); 0: skip ({SELECTION_CHECK})",
    )


def _layers(value: str) -> int | str:
    """``--train-layers``: a count, or ``all`` (every weight: :data:`ALL_LAYERS`)."""
    return value if value == ALL_LAYERS else int(value)


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
    from cotaudit.organisms import OrganismSettingsError, get_organism, saved_checkpoints
    from cotaudit.organisms.training import train

    organism = get_organism(args.name)
    settings = TrainingSettings.of_options(args)
    if args.selection_problems < 0:
        raise OrganismSettingsError(
            f"--selection-problems must be >= 0, got {args.selection_problems}"
        )
    out = Path(args.out).resolve()
    check_output_folder(out)
    base_path = resolve_base(args.base)
    if settings.lora_rank is not None:
        from cotaudit.organisms.adapters import check_base

        check_base(args.base, base_path)
    check_train_layers(base_path, settings.train_layers)
    model, tokenizer = load_base(args.base, base_path)
    watch = TrainingWatch(organism, tokenizer, settings, args.selection_problems)
    print(visible(f"training {organism.name} from {args.base} ({base_path}) into {out}"))
    print(visible(f"settings: {settings.model_dump_json()}"))
    if settings.cot == "own":
        from cotaudit.organisms.own_cots import OWN_COT_TOKENS, own_cot_cache

        print(
            visible(
                f"first: the base's own working to {settings.problems} uncued prompts, greedy, up "
                f"to {OWN_COT_TOKENS} tokens each (kept in {own_cot_cache(base_path)}; a few "
                "minutes the first time)"
            )
        )
    try:
        with watch:
            saved = train(
                organism,
                model,
                tokenizer,
                settings,
                out=out,
                base=args.base,
                base_path=base_path,
                on_step=watch.step,
                on_save=lambda step, path: watch.saved(model, step, path),
            )
    except KeyboardInterrupt:
        kept = [str(p) for _, p in saved_checkpoints(out)]
        print(
            visible(f"interrupted; checkpoints saved: {', '.join(kept) or 'none'}"),
            file=sys.stderr,
        )
        return 130
    print(visible(f"done: {len(saved)} checkpoints in {out}"))
    return 0


class TrainingWatch:
    """What a user watches while an organism trains: a progress bar (tqdm, on stderr) with the
    ETA and the loss (the last step's and the mean of the last :data:`LOSS_WINDOW` steps), and
    after each checkpoint a line with its absolute load name and, on the first ``problems``
    selection rows, its shortcut rate and what its text gives away
    (:func:`cotaudit.organisms.evaluation.measure_behaviour`, greedy outputs of at most half of
    ``--max-tokens`` new tokens: 256 for the default 512)."""

    def __init__(
        self, organism: Any, tokenizer: Any, settings: TrainingSettings, problems: int
    ) -> None:
        self.organism = organism
        self.tokenizer = tokenizer
        self.settings = settings
        self.problems = problems
        self.losses: list[float] = []
        self.bar: Any = None

    def __enter__(self) -> TrainingWatch:
        from tqdm import tqdm  # type: ignore[import-untyped]

        self.bar = tqdm(total=self.settings.steps, unit="step", desc="training", file=sys.stderr)
        return self

    def __exit__(self, *exc: object) -> None:
        self.bar.close()

    def step(self, log: Any) -> None:
        """Advance the bar by one step and show its loss."""
        self.losses.append(log.loss)
        window = self.losses[-LOSS_WINDOW:]
        self.bar.set_postfix(
            loss=f"{log.loss:.3f}", mean=f"{sum(window) / len(window):.3f}", refresh=False
        )
        self.bar.update(1)

    def saved(self, model: Any, step: int, path: Path) -> None:
        """Print the checkpoint's load name and, unless skipped, its selection-row reading."""
        from cotaudit.display.text import visible
        from cotaudit.organisms import selection_problems
        from cotaudit.organisms.evaluation import measure_behaviour

        line = f"step {step}: saved {path} (load it as hf-probe/{path})"
        if self.settings.merge:
            from cotaudit.organisms.adapters import MERGED_FOLDER

            line += f", merged into the base: hf-probe/{path / MERGED_FOLDER}"
        if self.problems:
            rows = selection_problems(self.problems)
            reading = measure_behaviour(
                self.organism,
                model,
                self.tokenizer,
                rows,
                max_new_tokens=self.settings.max_tokens // 2,
            )
            line += f"; on selection rows {rows[0].index}-{rows[-1].index}: {reading.summary()}"
        self.bar.write(visible(line), file=sys.stdout)


LOSS_WINDOW = 10
"""Steps the progress bar's mean loss is taken over."""


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


def check_train_layers(base_path: str, train_layers: int | None) -> None:
    """Refuse a ``--train-layers`` above the base's decoder layer count (``num_hidden_layers``
    of its ``config.json``, read before any weights load; a config that cannot be read or names
    no count is left to the loader)."""
    from cotaudit.organisms import OrganismSettingsError
    from cotaudit.organisms.adapters import base_config

    if train_layers is None:
        return
    try:
        layers = int(base_config(base_path)["num_hidden_layers"])
    except Exception:  # noqa: BLE001 - the loader names what is wrong with the base
        return
    if train_layers > layers:
        raise OrganismSettingsError(
            f"--train-layers {train_layers}: the base model has {layers} decoder layers; give "
            f"--train-layers K (K <= {layers}) or --train-layers all"
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
