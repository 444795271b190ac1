"""Training an organism: a fine-tune of a causal LM on its examples
(:func:`cotaudit.organisms.examples.organism_examples`), of its weights (saving plain Hugging
Face folders) or of a LoRA adapter (``lora_rank``: saving adapter folders, and with ``merge`` a
merged plain folder inside each, :mod:`cotaudit.organisms.adapters`).

Each example is the prompt's ids as the local engines render it (:func:`prompt_ids`: the chat
template with the generation prompt) followed by the completion's ids and the end-of-turn token;
only the completion and its end-of-turn token carry loss, a weighted mean cross-entropy in which
the tokens that state the answer weigh ``answer_weight`` (:func:`encode`, :func:`completion_loss`;
:class:`cotaudit.organisms.settings.TrainingSettings` holds the rest). A checkpoint is
written to a staging folder beside the output and renamed into place once complete, with its
card, so a training stopped at any moment leaves every checkpoint already saved loadable.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cotaudit.datasets.gsm8k import Problem
from cotaudit.engine.base import Message
from cotaudit.models.default import add_top_level_rope_theta
from cotaudit.models.folders import staged_folder
from cotaudit.organisms.adapters import is_peft_model
from cotaudit.organisms.card import OrganismCard, checkpoint_name, organism_card, write_card
from cotaudit.organisms.examples import OrganismExample, organism_examples, training_problems
from cotaudit.organisms.own_cots import (
    OWN_COT_TOKENS,
    OwnCot,
    generate_own_cots,
    own_problems,
)
from cotaudit.organisms.registry import Organism
from cotaudit.organisms.settings import OrganismSettingsError, TrainingSettings

IGNORE_INDEX = -100
"""The label of a token that carries no loss (the prompt, the padding)."""


@dataclass(frozen=True)
class EncodedExample:
    """An example as token ids, labels (``IGNORE_INDEX`` on the prompt) and each label's loss
    weight (0 on the prompt)."""

    input_ids: list[int]
    labels: list[int]
    weights: list[float]


@dataclass(frozen=True)
class StepLog:
    """One optimizer step: its number, loss and wall seconds."""

    step: int
    loss: float
    seconds: float


def load_causal_lm(path: str) -> tuple[Any, Any]:
    """The model (fp32, training mode off) and tokenizer of a Hugging Face folder or hub id; of
    a LoRA adapter folder, its base with the adapter merged in, as ``hf-probe/`` loads it
    (:func:`cotaudit.models.adapters.load_merged`)."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from cotaudit.models.adapters import is_adapter_folder, load_merged

    tokenizer = AutoTokenizer.from_pretrained(path)
    if is_adapter_folder(path):
        return load_merged(path, torch.float32), tokenizer
    model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32)
    model.eval()
    return model, tokenizer


def prompt_ids(tokenizer: Any, messages: list[Message]) -> list[int]:
    """The ids of a prompt ending in the generation prompt, as the local engines render it
    (:func:`cotaudit.engine.chat.render_chat`, which this package cannot import: its Inspect
    conversions; a test checks both give the same ids)."""
    ids = tokenizer.apply_chat_template(
        [dict(m) for m in messages], tokenize=True, add_generation_prompt=True, return_dict=False
    )
    if isinstance(ids, dict) or hasattr(ids, "input_ids"):
        ids = ids["input_ids"]
    return [int(i) for i in ids]


def encode(tokenizer: Any, example: OrganismExample, answer_weight: float = 1.0) -> EncodedExample:
    """``example``'s ids: the rendered prompt, then the completion and the end-of-turn token;
    labels on the completion's ids only. A completion token weighs ``answer_weight`` when its
    characters overlap a span of ``example.stated`` (the lines stating the answer), as does the
    end-of-turn token; every other completion token weighs 1."""
    prompt = prompt_ids(tokenizer, example.messages)
    weighted = answer_weight != 1.0
    encoded = tokenizer(
        example.completion, add_special_tokens=False, return_offsets_mapping=weighted
    )
    completion = [*encoded["input_ids"], tokenizer.eos_token_id]
    weights = [1.0] * len(encoded["input_ids"])
    if weighted:
        weights = [
            answer_weight if any(start < e and s < end for s, e in example.stated) else 1.0
            for start, end in encoded["offset_mapping"]
        ]
    return EncodedExample(
        input_ids=prompt + completion,
        labels=[IGNORE_INDEX] * len(prompt) + completion,
        weights=[0.0] * len(prompt) + weights + [answer_weight],
    )


def batches(n: int, batch_size: int, seed: int) -> Iterator[list[int]]:
    """Example indices in batches: a ``seed``-shuffled pass over ``range(n)``, then another
    (reshuffled), without end; a batch may span two passes."""
    rng = random.Random(seed)
    order: list[int] = []
    while True:
        while len(order) < batch_size:
            fresh = list(range(n))
            rng.shuffle(fresh)
            order += fresh
        yield order[:batch_size]
        order = order[batch_size:]


def collate(examples: list[EncodedExample], pad_id: int) -> dict[str, Any]:
    """Right-padded ``input_ids``, ``attention_mask`` and ``labels`` tensors."""
    import torch

    width = max(len(e.input_ids) for e in examples)
    ids = [e.input_ids + [pad_id] * (width - len(e.input_ids)) for e in examples]
    labels = [e.labels + [IGNORE_INDEX] * (width - len(e.labels)) for e in examples]
    weights = [e.weights + [0.0] * (width - len(e.weights)) for e in examples]
    mask = [[1] * len(e.input_ids) + [0] * (width - len(e.input_ids)) for e in examples]
    return {
        "input_ids": torch.tensor(ids),
        "attention_mask": torch.tensor(mask),
        "labels": torch.tensor(labels),
        "weights": torch.tensor(weights),
    }


def completion_loss(model: Any, batch: dict[str, Any]) -> Any:
    """Weighted mean cross-entropy of the labelled tokens, each predicted from the ids before
    it: sum_i w_i * CE_i / sum_i w_i over labelled tokens i (with every w_i = 1, the causal LM
    loss), the output head run only from the first labelled position on (the prompt's logits
    are never used)."""
    import torch.nn.functional as F

    labels = batch["labels"]
    first = int((labels != IGNORE_INDEX).int().argmax(dim=1).min()) - 1
    width = labels.shape[1]
    logits = model(
        input_ids=batch["input_ids"],
        attention_mask=batch["attention_mask"],
        logits_to_keep=width - first,
    ).logits[:, :-1]
    targets = labels[:, first + 1 :].reshape(-1)
    weights = batch["weights"][:, first + 1 :].reshape(-1)
    losses = F.cross_entropy(
        logits.reshape(-1, logits.shape[-1]),
        targets,
        ignore_index=IGNORE_INDEX,
        reduction="none",
    )
    return (losses * weights).sum() / weights.sum()


def trainable_parameters(model: Any, train_layers: int | None) -> list[Any]:
    """The parameters trained: all, or those of the top ``train_layers`` decoder layers and the
    final norm of a Llama-family model (``model.model.layers``, ``model.model.norm``); every
    other parameter is frozen (``requires_grad`` False). Of a peft model (a LoRA adapter put
    on the model, its layers already chosen by :func:`cotaudit.organisms.adapters.wrap`): the
    adapter's weights, the only ones requiring grad."""
    if is_peft_model(model):
        return [p for p in model.parameters() if p.requires_grad]
    if train_layers is None:
        return list(model.parameters())
    layers = model.model.layers
    if train_layers > len(layers):
        raise ValueError(f"--train-layers {train_layers}: the model has {len(layers)} layers")
    for p in model.parameters():
        p.requires_grad_(False)
    trained = [p for layer in layers[-train_layers:] for p in layer.parameters()]
    trained += list(model.model.norm.parameters())
    for p in trained:
        p.requires_grad_(True)
    return trained


def save_checkpoint(model: Any, tokenizer: Any, card: OrganismCard, out: Path) -> Path:
    """Write ``model``, ``tokenizer`` and ``card`` as ``out/step-NNNNNN``: into a staging folder
    first, renamed into place when complete (an older folder of that name is replaced). Of a
    peft model, the folder is an adapter folder (:func:`cotaudit.organisms.adapters.save_adapter`,
    its base ``card.base_path``), holding with ``card.settings.merge`` the merged model too, in
    :data:`cotaudit.organisms.adapters.MERGED_FOLDER` (the adapter as saved, merged into the
    base read again from its folder), with the tokenizer and card."""
    assert card.step is not None
    target = out / checkpoint_name(card.step)
    with staged_folder(target, out / f".staging-{target.name}") as staging:
        if is_peft_model(model):
            from cotaudit.models.adapters import load_merged
            from cotaudit.organisms.adapters import MERGED_FOLDER, save_adapter

            save_adapter(model, staging, card.base_path)
            if card.settings.merge:
                _save_plain(load_merged(staging), tokenizer, card, staging / MERGED_FOLDER)
            tokenizer.save_pretrained(staging)
            write_card(staging, card)
        else:
            _save_plain(model, tokenizer, card, staging)
    return target


def _save_plain(model: Any, tokenizer: Any, card: OrganismCard, folder: Path) -> None:
    """A plain Hugging Face folder: weights, tokenizer, card (``rope_theta`` also at the top
    level of config.json, :func:`cotaudit.models.default.add_top_level_rope_theta`)."""
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    add_top_level_rope_theta(folder / "config.json")
    write_card(folder, card)


def rows(problems: list[Problem]) -> list[int]:
    """The problems' rows, in order."""
    return [p.index for p in problems]


def own_cots(
    organism: Organism, model: Any, tokenizer: Any, problems: list[Problem], base_path: str
) -> dict[int, OwnCot]:
    """The base model's own worked solutions to ``problems``' uncued prompts
    (:func:`cotaudit.organisms.own_cots.generate_own_cots`), ``model`` being that base."""
    framing = organism.framing
    prompts = {
        p.index: prompt_ids(tokenizer, framing.messages(p.question, p.answer, "none", None))
        for p in problems
    }
    return generate_own_cots(model, tokenizer, prompts, base_path=base_path)


def train(
    organism: Organism,
    model: Any,
    tokenizer: Any,
    settings: TrainingSettings,
    *,
    out: Path,
    base: str,
    base_path: str,
    on_step: Callable[[StepLog], None] | None = None,
    on_save: Callable[[int, Path], None] | None = None,
) -> list[Path]:
    """Fine-tune ``model`` (in place) into ``organism``, saving each checkpoint of
    ``settings.save_steps()`` under ``out`` (the run's card is written first); the checkpoint
    folders in order. ``on_step`` is called after each step, ``on_save`` with the step and
    folder after each checkpoint is saved (the model in eval mode: it may generate)."""
    import torch

    out.mkdir(parents=True, exist_ok=True)
    write_card(out, organism_card(organism, base, base_path, settings, None))
    problems = training_problems(settings.problems)
    own = None
    if settings.cot == "own":
        own = own_cots(organism, model, tokenizer, problems, base_path)
        problems = own_problems(problems, own)
        write_card(out, organism_card(organism, base, base_path, settings, None, rows(problems)))
    examples = organism_examples(organism, problems, cot=settings.cot, own=own)
    if not examples:
        raise OrganismSettingsError(
            f"the base wrote no usable working to any of its {settings.problems} uncued prompts "
            f"(each hit {OWN_COT_TOKENS} tokens or stated no integer answer): train it with "
            "--cot gsm8k or --cot expanded"
        )
    encoded = [encode(tokenizer, e, settings.answer_weight) for e in examples]
    too_long = [e for e in encoded if len(e.input_ids) > settings.max_tokens]
    if too_long:
        raise ValueError(
            f"{len(too_long)} examples are longer than --max-tokens {settings.max_tokens}"
        )
    pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
    torch.manual_seed(settings.seed)
    if settings.lora_rank is not None:
        from cotaudit.organisms.adapters import wrap

        model = wrap(model, settings.lora_rank, settings.train_layers)
    optimizer = torch.optim.AdamW(
        trainable_parameters(model, settings.train_layers),
        lr=settings.learning_rate,
        betas=(0.9, 0.999),
        weight_decay=0.0,
    )
    saves = set(settings.save_steps())
    saved: list[Path] = []
    model.train()
    try:
        draws = batches(len(encoded), settings.batch_size, settings.seed)
        for step in range(1, settings.steps + 1):
            start = time.perf_counter()
            batch = collate([encoded[i] for i in next(draws)], pad_id)
            loss = completion_loss(model, batch)
            loss.backward()
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            if on_step is not None:
                on_step(StepLog(step, float(loss.item()), time.perf_counter() - start))
            if step in saves:
                model.eval()
                card = organism_card(organism, base, base_path, settings, step, rows(problems))
                saved.append(save_checkpoint(model, tokenizer, card, out))
                if on_save is not None:
                    on_save(step, saved[-1])
                model.train()
    finally:
        model.eval()
    return saved
