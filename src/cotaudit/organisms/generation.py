"""Greedy generation of a causal LM from prompts given as token ids (:func:`greedy_outputs`),
for the organisms' own working and their behaviour readings."""

from __future__ import annotations

from typing import Any


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
