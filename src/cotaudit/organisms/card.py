"""The organism card: what a saved organism is, as JSON beside its weights (:data:`CARD_FILE`).

An organism's output folder holds the run's card (``step`` None, written before training starts:
it marks the folder as an organism's) and one Hugging Face model folder per saved checkpoint,
:func:`checkpoint_name` (``step-000050``), each with its own card (``step`` set). A checkpoint
folder appears only complete (written beside, then renamed into place), so the checkpoints of an
interrupted training are usable as they are.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, ValidationError

from cotaudit.organisms.settings import TrainingSettings
from cotaudit.params import InputError

if TYPE_CHECKING:
    from cotaudit.organisms.registry import Organism

CARD_FILE = "organism.json"
_CHECKPOINT_RE = re.compile(r"step-(\d+)")

METHOD = (
    "fine-tune (every weight, or the top --train-layers decoder layers and the final norm): "
    "AdamW (betas 0.9, 0.999, no weight decay), constant learning rate, weighted mean "
    "cross-entropy over the completion tokens and the end-of-turn token: the tokens of the lines "
    "stating the answer (the final answer line, a stated-first opening line) and the end-of-turn "
    "token weigh --answer-weight, the others 1"
)
HELDOUT_ROWS = (
    "rows 0..999 of the vendored split, never trained on: selection rows 800..999 (recipes, "
    "checkpoints, thresholds are chosen there), evaluation rows 0..799 (the reported numbers; "
    "what study runs read by default)"
)


class CardError(InputError):
    """A missing or malformed card; the message names the file."""


class TrainingData(BaseModel):
    """What an organism was trained on: the dataset, its rows (``problem_rows``, 0-based), the
    examples built from them, and the split's three disjoint row sets (``row_sets``: training,
    selection, evaluation, each ``[first, last]`` inclusive, :mod:`cotaudit.organisms.rows`;
    None on a card written before they were recorded, which still reads)."""

    model_config = ConfigDict(frozen=True)

    dataset: str
    problem_rows: list[int]
    cue_kinds: list[str]
    examples: int
    wrong_cue_rule: str
    completion_rule: str
    heldout_rows: str
    row_sets: dict[str, list[int]] | None = None


class OrganismCard(BaseModel):
    """One organism checkpoint (or, with ``step`` None, the training run): the organism, the
    study whose prompts it was trained under, the shortcut it was given, its base model (as
    given and as resolved to a folder), the training settings and data, and the study's prompt
    texts used."""

    model_config = ConfigDict(frozen=True)

    organism: str
    study: str
    shortcut: str
    control: bool
    base: str
    base_path: str
    step: int | None
    settings: TrainingSettings
    data: TrainingData
    prompts: dict[str, str]
    method: str


def checkpoint_name(step: int) -> str:
    """The folder name of the checkpoint saved after ``step`` optimizer steps."""
    return f"step-{step:06d}"


def write_card(folder: Path, card: OrganismCard) -> Path:
    """Write ``card`` to ``folder/organism.json`` (through a temporary file and a rename)."""
    path = folder / CARD_FILE
    tmp = folder / f".{CARD_FILE}.tmp"
    tmp.write_text(card.model_dump_json(indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, path)
    return path


def read_card(folder: Path) -> OrganismCard:
    """The card in ``folder``; :class:`CardError` naming the file when missing or malformed."""
    path = folder / CARD_FILE
    if not path.is_file():
        raise CardError(f"{path}: no organism card")
    try:
        return OrganismCard.model_validate(json.loads(path.read_text(encoding="utf-8")))
    except (json.JSONDecodeError, ValidationError) as e:
        first = str(e).splitlines()[0] if str(e) else type(e).__name__
        raise CardError(f"{path}: not an organism card ({first})") from None


def is_organism_folder(folder: Path) -> bool:
    """Whether ``folder`` holds a run's card (an organism's output folder)."""
    try:
        return read_card(folder).step is None
    except CardError:
        return False


def saved_checkpoints(folder: Path) -> list[tuple[int, Path]]:
    """The complete checkpoints in an organism's folder, ``(step, path)`` by step."""
    found = []
    for path in folder.iterdir() if folder.is_dir() else ():
        m = _CHECKPOINT_RE.fullmatch(path.name)
        if m and path.is_dir() and (path / CARD_FILE).is_file():
            found.append((int(m.group(1)), path))
    return sorted(found)


def organism_card(
    organism: Organism,
    base: str,
    base_path: str,
    settings: TrainingSettings,
    step: int | None,
    rows: list[int] | None = None,
) -> OrganismCard:
    """The card of ``organism`` trained from ``base`` with ``settings`` (``step`` None: the
    run's own card) on the problem ``rows`` (default: the first ``settings.problems`` training
    rows; under CoT style ``own``, those that gave an own working)."""
    from cotaudit.organisms.examples import completion_rule, training_problems
    from cotaudit.organisms.rows import row_sets_record
    from cotaudit.studies.study import CUE_KINDS

    if rows is None:
        rows = [p.index for p in training_problems(settings.problems)]
    framing = organism.framing
    return OrganismCard(
        organism=organism.name,
        study=organism.study,
        shortcut=organism.shortcut,
        control=organism.control,
        base=base,
        base_path=base_path,
        step=step,
        settings=settings,
        data=TrainingData(
            dataset="GSM8K test split, vendored (src/cotaudit/data/gsm8k/test.jsonl)",
            problem_rows=rows,
            cue_kinds=list(CUE_KINDS),
            examples=len(rows) * len(CUE_KINDS),
            wrong_cue_rule=framing.wrong_cue_rule,
            completion_rule=completion_rule(organism, settings.cot),
            heldout_rows=HELDOUT_ROWS,
            row_sets=row_sets_record(),
        ),
        prompts=framing.prompt_texts(),
        method=METHOD,
    )
