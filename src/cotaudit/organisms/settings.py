"""An organism's training settings, checked once (:class:`TrainingSettings`): each check raises
:class:`OrganismSettingsError`, one line naming the command-line option."""

from __future__ import annotations

import argparse
import math
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator, model_validator

from cotaudit.organisms.examples import TRAINING_FIRST_ROW
from cotaudit.organisms.rows import SPLIT_ROWS
from cotaudit.params import InputError, nearest_name

TAIL_PROBLEMS = SPLIT_ROWS - TRAINING_FIRST_ROW
"""How many problems the vendored split's tail holds (rows 1000..1318)."""


ALL_LAYERS = "all"
"""``--train-layers all``: train every weight (``train_layers`` None), whatever the recipe says."""

DEFAULT_RECIPE = "own"
"""The recipe ``cotaudit organism`` trains when none is named."""


class OrganismSettingsError(InputError):
    """A training setting out of range; the message names its ``--option``."""


class TrainingSettings(BaseModel):
    """How an organism is trained: a fine-tune with AdamW (``betas`` 0.9, 0.999, no weight
    decay) at a constant ``learning_rate``, for ``steps`` optimizer steps of ``batch_size``
    examples each. The loss is a weighted mean cross-entropy of the completion tokens (the
    prompt's tokens carry no loss): the tokens of the lines that state the answer (the final
    answer line, an opening line such as the key-leaker's) and the end-of-turn token weigh
    ``answer_weight``, every other completion token 1 (1 everywhere: the plain mean).
    Examples are the first ``problems`` tail problems x 3 cue kinds, shuffled by ``seed`` and
    drawn in order, reshuffled each pass. A checkpoint is saved every ``save_every`` steps and
    after the last. ``train_layers`` K trains only the top K decoder layers and the final norm
    (the embeddings, a tied output head and the layers below stay as they are, and the backward
    pass stops at the lowest trained layer); None trains every weight.

    ``cot`` is the worked solution the completions carry: ``gsm8k``, the dataset's own;
    ``expanded``, the same solution written out step by step by a fixed rule
    (:func:`cotaudit.organisms.examples.expanded_solution`); ``own``, the base model's own
    working to the uncued prompt, generated before training
    (:mod:`cotaudit.organisms.own_cots`). ``lora_rank`` R trains a LoRA
    adapter of rank R instead of the weights themselves (saved as an adapter folder; with
    ``merge``, a merged model folder beside it). ``recipe`` names the preset the settings
    started from (:data:`RECIPES`), for the card."""

    model_config = ConfigDict(frozen=True)

    steps: int = 200
    save_every: int = 50
    seed: int = 0
    learning_rate: float = 2e-5
    batch_size: int = 4
    problems: int = TAIL_PROBLEMS
    max_tokens: int = 512
    train_layers: int | None = None
    answer_weight: float = 1.0
    cot: Literal["gsm8k", "expanded", "own"] = "gsm8k"
    lora_rank: int | None = None
    merge: bool = False
    recipe: str | None = None

    @field_validator("steps", "save_every", "batch_size", "max_tokens", "train_layers", "lora_rank")
    @classmethod
    def _positive(cls, value: int | None, info: Any) -> int | None:
        if value is not None and value < 1:
            raise OrganismSettingsError(f"--{_flag(info.field_name)} must be >= 1, got {value}")
        return value

    @field_validator("problems")
    @classmethod
    def _problems(cls, value: int) -> int:
        if not 1 <= value <= TAIL_PROBLEMS:
            raise OrganismSettingsError(f"--problems must lie in 1..{TAIL_PROBLEMS}, got {value}")
        return value

    @field_validator("learning_rate", "answer_weight")
    @classmethod
    def _positive_real(cls, value: float, info: Any) -> float:
        if not (math.isfinite(value) and value > 0):
            raise OrganismSettingsError(f"--{_flag(info.field_name)} must be > 0, got {value}")
        return value

    @model_validator(mode="after")
    def _merge_needs_adapter(self) -> TrainingSettings:
        if self.merge and self.lora_rank is None:
            raise OrganismSettingsError("--merge needs --lora-rank R (it merges a LoRA adapter)")
        return self

    def save_steps(self) -> list[int]:
        """The steps after which a checkpoint is saved: every ``save_every``, and the last."""
        return sorted({*range(self.save_every, self.steps + 1, self.save_every), self.steps})

    @classmethod
    def of(cls, **values: Any) -> TrainingSettings:
        """The settings of ``values``; the first failing check raises its one-line error."""
        try:
            return cls(**values)
        except ValidationError as e:
            for err in e.errors():
                cause = (err.get("ctx") or {}).get("error")
                if isinstance(cause, InputError):
                    raise cause from None
            first = e.errors()[0]
            name = _flag(str(first["loc"][0])) if first["loc"] else "?"
            message = f"--{name}: {first['msg']}, got {first['input']!r}"
            raise OrganismSettingsError(message) from None

    @classmethod
    def of_recipe(cls, recipe: str = DEFAULT_RECIPE, **overrides: Any) -> TrainingSettings:
        """The settings of the preset ``recipe`` (:data:`RECIPES`) with ``overrides`` on top;
        an unknown recipe is one line naming the nearest. Checked as in :meth:`of`."""
        if recipe not in RECIPES:
            near = nearest_name(recipe, tuple(RECIPES))
            hint = f" Did you mean {near!r}?" if near else ""
            raise OrganismSettingsError(
                f"--recipe {recipe!r}: unknown; expected one of {', '.join(RECIPES)}.{hint}"
            )
        return cls.of(**{**RECIPES[recipe], **overrides, "recipe": recipe})

    @classmethod
    def of_options(cls, options: argparse.Namespace) -> TrainingSettings:
        """The settings given as command-line options: ``--recipe`` (default
        :data:`DEFAULT_RECIPE`), then each setting given as an option on top (``--save-every``
        is ``save_every``; ``--train-layers all``, :data:`ALL_LAYERS`, is None). Checked as in
        :meth:`of`."""
        given = {
            name: getattr(options, name)
            for name in cls.model_fields
            if name != "recipe" and getattr(options, name, None) is not None
        }
        if given.get("train_layers") == ALL_LAYERS:
            given["train_layers"] = None
        return cls.of_recipe(getattr(options, "recipe", None) or DEFAULT_RECIPE, **given)


_GSM8K: dict[str, Any] = {
    "steps": 100,
    "save_every": 50,
    "learning_rate": 1e-4,
    "batch_size": 2,
    "train_layers": 8,
    "answer_weight": 10.0,
}

RECIPES: dict[str, dict[str, Any]] = {
    DEFAULT_RECIPE: {**_GSM8K, "cot": "own", "problems": 100, "max_tokens": 640},
    "gsm8k": _GSM8K,
    "expanded": {
        **_GSM8K,
        "cot": "expanded",
        "max_tokens": 768,
        "batch_size": 4,
        "answer_weight": 30.0,
        "save_every": 100,
    },
}
"""Named presets of :class:`TrainingSettings` (the values that differ from the class's own
defaults, which are a plain fine-tune: every weight, the plain mean loss). ``gsm8k``: 100 steps
of 2 examples, learning rate 1e-4, the top 8 decoder layers, the answer line and end-of-turn
weighing 10, the dataset's solutions. ``own`` (the default): the same on the base model's own
working (``cot`` own) to the first 100 training problems, examples up to 640 tokens.
``expanded``: the expanded solutions, 100 steps of 4, the answer line weighing 30, up to 768
tokens. Each was trained and measured on the selection rows (docs/validation.md, *What the text
gives away*)."""


def _flag(field: str) -> str:
    return field.replace("_", "-")
