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

The exact estimator's sweep of a prompt (:func:`sweep_header` without k, ``estimator:
"exact"``) and its cuts (:func:`exact_record`): per cut the probability ``p_exact`` that a
forced answer parses to the reference, the mass ``covered`` by the enumerated answer forms and,
for letters, the distribution over the letters (:mod:`cotaudit.probing.exact`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from cotaudit.probing.exact import ExactPoint

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
    k: int | None,
    temperature: float,
    max_tokens: int,
    response_tokens: int,
    positions: Sequence[int],
    offset: int = 0,
    **reference: Any,
) -> dict[str, Any]:
    """What one sweep of one prompt asks: ``reference`` names what its answers are checked
    against (``a_final=...``, ``gold=...``, ``condition=...``, ``sample_id=...``). ``k`` None:
    the exact estimator's sweep, ``estimator`` "exact" (after the context) in place of k (the
    temperature is the one the distribution is read at). The positions come last (the viewer
    shows a record's first lines folded)."""
    header: dict[str, Any] = {"context": context}
    if k is None:
        header["estimator"] = "exact"
    header["tag"] = clipped(tag, TAG_CHARS)
    if k is not None:
        header["k"] = k
    return header | {
        "temperature": temperature,
        "answer_max_tokens": max_tokens,
        "response_tokens": response_tokens,
        "offset": offset,
        **reference,
        "positions": list(positions),
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
    :func:`prefix_end`), the clipped ``answers``; with ``judge`` also ``matches`` = #match,
    ``parsed`` and ``match`` (one verdict per answer). Scalars first, the prompt's name last."""
    record: dict[str, Any] = {"t": t, "prefix_tokens": offset + t}
    verdicts = [judge(a) for a in answers] if judge is not None else None
    if verdicts is not None:
        record["matches"] = sum(bool(m) for _, m in verdicts)
    record["prefix_end"] = prefix_end(prefix_text, whole=whole_prefix)
    record["answers"] = [clipped(a, ANSWER_CHARS) for a in answers]
    if verdicts is not None:
        record["parsed"] = [p for p, _ in verdicts]
        record["match"] = [bool(m) for _, m in verdicts]
    record["context"] = context
    return record


def exact_record(
    *,
    context: str,
    t: int,
    offset: int,
    prefix_text: str,
    point: ExactPoint,
    whole_prefix: bool = True,
) -> dict[str, Any]:
    """One cut read exactly: t, ``prefix_tokens``, ``p_exact``, ``covered``, for letters
    ``letters`` (letter -> probability), ``prefix_end``; the prompt's name last."""
    record: dict[str, Any] = {
        "t": t,
        "prefix_tokens": offset + t,
        "p_exact": point.p,
        "covered": point.covered,
    }
    if point.letters is not None:
        record["letters"] = dict(point.letters)
    record["prefix_end"] = prefix_end(prefix_text, whole=whole_prefix)
    record["context"] = context
    return record


def verdict_record(
    *,
    context: str,
    t: int,
    canonical: Sequence[Any],
    values: Sequence[float],
    reference: Any = None,
) -> dict[str, Any]:
    """The verification of one cut's answers by a task's own scorer: ``correct`` = the sum of
    the score values (1 = correct), the canonical answer of each and its value; with a
    ``reference`` (self-commitment: a_final) also ``matches`` = #match and ``match`` (canonical
    answer equal to it, one verdict per answer)."""
    record: dict[str, Any] = {"t": t, "correct": float(sum(values))}
    match = [a == reference for a in canonical] if reference is not None else None
    if match is not None:
        record["matches"] = sum(match)
    record["canonical"] = list(canonical)
    record["values"] = list(values)
    if match is not None:
        record["match"] = match
    record["context"] = context
    return record


def label(record: dict[str, Any]) -> str:
    """The event title of a record (``inspect view`` shows it folded): ``probe <context>`` for a
    header, ``probe <context> t=<t>[: <matches>/<k> match]`` for a cut, ``probe verdict
    <context> t=<t>: <correct>/<k> correct[, <matches>/<k> match]`` for a verdict; ``probe
    exact <context>`` and ``probe exact <context> t=<t>: p=<p> (covered <c>)`` for the exact
    estimator's."""
    exact = "exact " if record.get("estimator") == "exact" or "p_exact" in record else ""
    if "positions" in record:
        return f"probe {exact}{record['context']}"
    where = f"{record['context']} t={record['t']}"
    if exact:
        return f"probe exact {where}: p={record['p_exact']:.3f} (covered {record['covered']:.3f})"
    if "canonical" in record:
        k = len(record["values"])
        text = f"probe verdict {where}: {record['correct']:g}/{k} correct"
        return text + (f", {record['matches']}/{k} match" if "matches" in record else "")
    k = len(record["answers"])
    return f"probe {where}" + (f": {record['matches']}/{k} match" if "matches" in record else "")
