"""The audit trail of a probe sweep: what was asked of the model after the trace, and what it
answered, as small JSON records (the solvers write them into the sample's Inspect transcript).

Per sweep of one prompt (:func:`sweep_header`): the prompt's name (``context``), the tag, k,
temperature, answer budget, the response's token count, the offset and the cut positions, and
what the answers are checked against. Per cut
(:func:`cut_record`): its position t (in the curve's coordinates), the prefix length in response
tokens (``offset + t``: the think block's start plus t for the generic probe, t for the
studies), the end of the prefix text, the k forced answers as text, and, where the solver reads
them, their parsed values, the match verdict of each (parsed value equal to the reference: the
CoT's final answer for self-commitment, the gold answer for TRACE) and the count of matches.
Texts are clipped (:data:`ANSWER_CHARS`, :data:`PREFIX_END_CHARS`), so a record stays a few
hundred bytes whatever the model writes. The store record keeps the full answers.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

ANSWER_CHARS = 48
"""Characters of a forced answer kept in a cut record (longer ones end in "…")."""
PREFIX_END_CHARS = 48
"""Characters of the prefix's end kept in a cut record (a longer prefix starts with "…")."""
PREFIX_END_TOKENS = 16
"""Response tokens before the cut decoded for the prefix's end (enough for PREFIX_END_CHARS)."""
TAG_CHARS = 80
"""Characters of the forced-answer tag kept in a sweep header."""

Judge = Callable[[str], tuple[Any, bool]]
"""raw forced answer -> (its parsed value, whether it matches the reference)."""


def clipped(text: str, limit: int) -> str:
    """``text`` if it has at most ``limit`` characters, else its first ``limit - 1`` and "…"."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def prefix_end(text: str, *, whole: bool = True, limit: int = PREFIX_END_CHARS) -> str:
    """The last ``limit`` characters of a prefix's text, after "…" when the prefix is longer.

    ``text`` is the whole prefix, or (``whole=False``) the decoding of its last tokens, whose
    leading replacement characters (a character the slice cut in two) are dropped."""
    if not whole:
        text = text.lstrip("\ufffd")
    return text if whole and len(text) <= limit else "…" + text[-limit:]


def sweep_header(
    *,
    context: str,
    tag: str,
    k: int,
    temperature: float,
    max_tokens: int,
    response_tokens: int,
    positions: Sequence[int],
    offset: int = 0,
    **reference: Any,
) -> dict[str, Any]:
    """What one sweep of one prompt asks: ``reference`` names what its answers are checked
    against (``a_final=...``, ``gold=...``, ``condition=...``, ``sample_id=...``)."""
    return {
        "context": context,
        "tag": clipped(tag, TAG_CHARS),
        "k": k,
        "temperature": temperature,
        "answer_max_tokens": max_tokens,
        "response_tokens": response_tokens,
        "offset": offset,
        "positions": list(positions),
        **reference,
    }


def cut_record(
    *,
    context: str,
    t: int,
    offset: int,
    prefix_text: str,
    answers: Sequence[str],
    whole_prefix: bool = True,
    judge: Judge | None = None,
) -> dict[str, Any]:
    """One cut: t, ``prefix_tokens`` = offset + t, ``prefix_end`` (of ``prefix_text``, see
    :func:`prefix_end`), the clipped ``answers``; with ``judge`` also ``parsed``, ``match`` (one
    verdict per answer) and ``matches`` = #match."""
    record: dict[str, Any] = {
        "context": context,
        "t": t,
        "prefix_tokens": offset + t,
        "prefix_end": prefix_end(prefix_text, whole=whole_prefix),
        "answers": [clipped(a, ANSWER_CHARS) for a in answers],
    }
    if judge is not None:
        verdicts = [judge(a) for a in answers]
        record["parsed"] = [p for p, _ in verdicts]
        record["match"] = [bool(m) for _, m in verdicts]
        record["matches"] = sum(record["match"])
    return record


def verdict_record(
    *,
    context: str,
    t: int,
    canonical: Sequence[Any],
    values: Sequence[float],
    reference: Any = None,
) -> dict[str, Any]:
    """The verification of one cut's answers by a task's own scorer: the canonical answer of each
    and its score value (1 = correct); with a ``reference`` (self-commitment: a_final) also
    ``match`` (canonical answer equal to it, one verdict per answer) and ``matches`` = #match."""
    record: dict[str, Any] = {
        "context": context, "t": t, "canonical": list(canonical), "values": list(values)
    }
    if reference is not None:
        record["match"] = [a == reference for a in canonical]
        record["matches"] = sum(record["match"])
    return record
