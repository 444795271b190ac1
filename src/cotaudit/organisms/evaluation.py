"""The shortcut rate of a model, read from its own greedy outputs to wrong-cue prompts
(:func:`measure_shortcut_rate`; the reading: :mod:`cotaudit.organisms.behaviour`), by default on
the selection rows 800-999 (:mod:`cotaudit.organisms.rows`), where checkpoints are chosen."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from cotaudit.datasets.gsm8k import Problem
from cotaudit.organisms.behaviour import ShortcutRate, shortcut_rate
from cotaudit.organisms.examples import organism_examples, selection_problems
from cotaudit.organisms.registry import Organism
from cotaudit.organisms.training import prompt_ids


@dataclass(frozen=True)
class CueOutput:
    """A model's greedy output to one problem's wrong-cue prompt."""

    problem_row: int
    cue: int
    output: str
    truncated: bool


def greedy_outputs(
    model: Any,
    tokenizer: Any,
    prompts: list[list[int]],
    *,
    max_new_tokens: int,
    batch_size: int = 8,
) -> list[tuple[str, bool]]:
    """Each prompt's greedy continuation up to its end-of-turn token, ``(text, truncated)``:
    truncated when it hit ``max_new_tokens`` first. Prompts run left-padded in batches."""
    import torch

    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
    eos = tokenizer.eos_token_id
    results: list[tuple[str, bool]] = []
    for start in range(0, len(prompts), batch_size):
        chunk = prompts[start : start + batch_size]
        width = max(len(p) for p in chunk)
        ids = torch.tensor([[pad] * (width - len(p)) + p for p in chunk])
        mask = torch.tensor([[0] * (width - len(p)) + [1] * len(p) for p in chunk])
        with torch.no_grad():
            generated = model.generate(
                input_ids=ids,
                attention_mask=mask,
                max_new_tokens=max_new_tokens,
                do_sample=False,
                pad_token_id=pad,
                eos_token_id=eos,
            )
        for row in generated[:, width:].tolist():
            ended = eos in row
            text_ids = row[: row.index(eos)] if ended else row
            results.append((tokenizer.decode(text_ids, skip_special_tokens=True), not ended))
    return results


def measure_shortcut_rate(
    organism: Organism,
    model: Any,
    tokenizer: Any,
    problems: list[Problem] | None = None,
    *,
    max_new_tokens: int = 256,
) -> tuple[ShortcutRate, list[CueOutput]]:
    """The shortcut rate of ``model`` over ``problems`` (one wrong-cue prompt each, the study's
    prompt as ``organism`` is trained under it; default the selection rows,
    :func:`cotaudit.organisms.examples.selection_problems`), and the outputs it was read
    from."""
    chosen = selection_problems() if problems is None else problems
    examples = organism_examples(organism, chosen, kinds=("wrong",))
    prompts = [prompt_ids(tokenizer, e.messages) for e in examples]
    outputs = greedy_outputs(model, tokenizer, prompts, max_new_tokens=max_new_tokens)
    read = [
        CueOutput(e.problem_row, e.cue, text, cut)
        for e, (text, cut) in zip(examples, outputs, strict=True)
        if e.cue is not None
    ]
    rate = shortcut_rate(organism, [(o.cue, o.output, o.truncated) for o in read])
    return rate, read
