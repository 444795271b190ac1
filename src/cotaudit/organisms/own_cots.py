"""The base model's own worked solutions: the completions of CoT style ``own``.

Before training, the base model answers each training problem's *uncued* study prompt (the
organism's framing, cue kind none) greedily, once, up to :data:`OWN_COT_TOKENS` new tokens
(:func:`generate_own_cots`). Each output that ended on its own is split by :func:`own_cot` into

- its *working*: the output's paragraphs (split at blank lines) before its conclusion, the
  conclusion being the first paragraph that states an answer (its stated reading,
  :func:`cotaudit.answers.extract_final_answer`, is a number) or, when none does, the last
  paragraph;
- its *own answer*: the whole output's final answer, read as stated with the last standing-alone
  number as the fallback (``reading="last_number"``).

An output cut at the token limit, with no working or with no integer answer gives no example.
Every completion of the problem then carries that working, whatever the cue, followed by the
study's answer line: so a cued completion is as long as, and written like, what the base model
writes with no cue, and the cue shows only in the value the answer line states
(:func:`cotaudit.organisms.examples.organism_examples`; where the rule of the other styles
says "the gold answer", this style's says "the own answer", the value the working led to).

The outputs are kept in :func:`cache_dir` ``/own-cots`` under a digest of the base model's
weights, the prompt's ids and the token limit, so the seeds and controls of one base share one
generation.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cotaudit.answers import extract_final_answer
from cotaudit.datasets.gsm8k import Problem
from cotaudit.organisms.generation import greedy_outputs
from cotaudit.params import InputError

OWN_COT_TOKENS = 320
"""The most new tokens the base model writes to an uncued prompt (longer outputs give no
example)."""

GENERATION_BATCH = 8
"""Prompts generated together; the cache is written after each batch, so an interrupted
generation keeps what it finished."""

_PARAGRAPH_BREAK_RE = re.compile(r"\n\s*\n")


@dataclass(frozen=True)
class OwnCot:
    """One problem's own worked solution: the base model's ``working`` (no trailing white
    space) and the ``answer`` its output concluded with."""

    problem_row: int
    working: str
    answer: int


def own_cot(problem_row: int, output: str, *, truncated: bool) -> OwnCot | None:
    """The working and own answer of one greedy output (module docstring), or None when the
    output was ``truncated``, has no working or no integer answer.

    "Step 1.\\n\\nStep 2 gives 6.\\n\\nThe final answer is 6." -> working "Step 1.\\n\\nStep 2
    gives 6.", answer 6; "A is 2.\\n\\nSo B is 4." -> working "A is 2.", answer 4.
    """
    if truncated:
        return None
    paragraphs = [p.strip() for p in _PARAGRAPH_BREAK_RE.split(output.strip()) if p.strip()]
    stating = [i for i, p in enumerate(paragraphs) if extract_final_answer(p) is not None]
    conclusion = stating[0] if stating else len(paragraphs) - 1
    working = "\n\n".join(paragraphs[:conclusion])
    answer = extract_final_answer(output, reading="last_number")
    if not working or answer is None:
        return None
    return OwnCot(problem_row=problem_row, working=working, answer=answer)


def weights_digest(folder: str | Path) -> str:
    """SHA-256 over a model folder's ``config.json`` and weight files (``*.safetensors``,
    ``*.bin``), names and bytes, in name order: what identifies the base's greedy outputs."""
    digest = hashlib.sha256()
    root = Path(folder)
    files = sorted(
        p for p in root.iterdir() if p.name == "config.json" or p.suffix in (".safetensors", ".bin")
    )
    for path in files:
        digest.update(path.name.encode())
        with path.open("rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()


def _output_key(weights: str, prompt: Sequence[int], max_new_tokens: int) -> str:
    text = json.dumps([weights, list(prompt), max_new_tokens])
    return hashlib.sha256(text.encode()).hexdigest()


def generate_own_cots(
    model: Any,
    tokenizer: Any,
    prompts: Mapping[int, list[int]],
    *,
    base_path: str,
    cache: Path | None = None,
    max_new_tokens: int = OWN_COT_TOKENS,
) -> dict[int, OwnCot]:
    """The own worked solution of each problem row in ``prompts`` (row -> the ids of its uncued
    prompt) that gives one (:func:`own_cot`), by row; outputs not in ``cache`` (a JSON file,
    default :func:`own_cot_cache` of ``base_path``) are generated greedily by ``model``, left
    padded in batches of :data:`GENERATION_BATCH` in the order of ``prompts``, each batch added
    to the cache as it finishes."""
    path = own_cot_cache(base_path) if cache is None else cache
    known = read_cache(path)
    weights = weights_digest(base_path)
    keys = {row: _output_key(weights, ids, max_new_tokens) for row, ids in prompts.items()}
    missing = [row for row, key in keys.items() if key not in known]
    for start in range(0, len(missing), GENERATION_BATCH):
        chunk = missing[start : start + GENERATION_BATCH]
        outputs = greedy_outputs(
            model,
            tokenizer,
            [prompts[r] for r in chunk],
            max_new_tokens=max_new_tokens,
            batch_size=GENERATION_BATCH,
        )
        for row, (text, cut) in zip(chunk, outputs, strict=True):
            known[keys[row]] = [text, cut]
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(known), encoding="utf-8")
        tmp.replace(path)
    found = {
        row: own_cot(row, str(known[key][0]), truncated=bool(known[key][1]))
        for row, key in keys.items()
    }
    return {row: cot for row, cot in found.items() if cot is not None}


class OwnCotCacheError(InputError):
    """A cache file of own outputs that cannot be read; the message names the file."""


def read_cache(path: Path) -> dict[str, list[Any]]:
    """The cached outputs in ``path`` (key -> ``[text, truncated]``; none when it does not
    exist); :class:`OwnCotCacheError` naming the file when it is not such a cache."""
    if not path.is_file():
        return {}
    try:
        known = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        known = None
    if not isinstance(known, dict) or not all(
        isinstance(v, list) and len(v) == 2 and isinstance(v[0], str) for v in known.values()
    ):
        raise OwnCotCacheError(
            f"{path}: not a cache of the base's own outputs; delete it and they are generated again"
        )
    return known


def own_cot_cache(base_path: str) -> Path:
    """The cache file of ``base_path``'s own outputs: ``cache_dir()/own-cots/<digest>.json``,
    the digest of the folder's resolved path."""
    from cotaudit.models.default import cache_dir

    name = hashlib.sha256(str(Path(base_path).resolve()).encode()).hexdigest()[:16]
    return cache_dir() / "own-cots" / f"{name}.json"


def own_problems(problems: Sequence[Problem], cots: Mapping[int, OwnCot]) -> list[Problem]:
    """The problems of ``problems`` (in order) that have an own worked solution."""
    return [p for p in problems if p.index in cots]
