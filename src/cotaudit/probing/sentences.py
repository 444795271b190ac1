"""Sentences of a chain of thought, and the token positions where they end.

A sentence ends after terminal punctuation (``.``, ``?``, ``!``, with any closing quotes or
brackets after it) followed by white space, or at a line break; the white space after it belongs
to the sentence it ends, so the sentences concatenate back to the text exactly (newlines
included). No sentence ends:

- inside mathematics: ``$$...$$``, ``\\(...\\)``, ``\\[...\\]``, and ``$...$`` as pandoc reads
  it (no space just inside either dollar, no digit right after the closing one: "$3.50 and
  $4" is money);
- inside a number: ``3.5`` and ``1,234`` have no white space after their separator;
- after an abbreviation (:data:`ABBREVIATIONS`, any case: "e.g.", "Dr.", "approx.") or a
  single capital initial ("J. Smith");
- after a list marker: a number, a single letter or a roman numeral and a period at the start of
  a line ("1. ", "b. ", "iv. "), whose item is the sentence;
- before a lowercase letter ("5 apples cost approx. two dollars": an unlisted abbreviation).

Blank lines stay with the sentence before them. The splitter of the Thought Anchors work ends a
chunk at ``.``, ``?`` or ``!`` followed by a space or newline and at a blank line, and merges
fragments shorter than a few characters; the rules above keep the same sentences on plain prose
and keep numbers, abbreviations, list items and mathematics whole where it would cut them.

Token positions (:func:`sentence_ends`): the cut after a sentence is the number of the model's
own tokens whose text lies within the sentences up to it (a token that straddles the end goes
with the next sentence), so a cut is a prefix of the very token ids the model wrote.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Callable, Sequence

ABBREVIATIONS = frozenset(
    {
        "e.g", "i.e", "etc", "vs", "cf", "approx", "appr", "ca", "resp", "al", "dr", "mr", "mrs",
        "ms", "prof", "sr", "jr", "st", "no", "nos", "fig", "figs", "eq", "eqs", "sec", "ch",
        "vol", "p", "pp", "a.m", "p.m", "u.s", "u.k", "inc", "ltd", "co", "dept", "est", "min",
        "max", "avg", "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct",
        "nov", "dec", "mon", "tue", "wed", "thu", "fri", "sat", "sun",
    }
)  # fmt: skip
"""Words (lowercase, without their final period) after which a period ends no sentence."""

_MATH = re.compile(
    r"\$\$.*?\$\$"  # display math
    r"|\$(?=\S)[^$\n]*?(?<=\S)\$(?!\d)"  # inline math; "$3.50 and $4" is money, not math
    r"|\\\(.*?\\\)|\\\[.*?\\\]",
    re.DOTALL,
)
_END = re.compile(r"[.?!]+[\"'\)\]\u201d\u2019]*(?=\s)|\n")
_LIST_MARKER = re.compile(r"(?:^|\n)[ \t]*(?:\d+|[A-Za-z]|[ivxlcdm]+|[IVXLCDM]+)\.$")
_WORD_BEFORE = re.compile(r"([A-Za-z](?:[A-Za-z.]*[A-Za-z])?)\.$")


def _shielded(text: str) -> list[tuple[int, int]]:
    """Character spans of mathematics, where no sentence ends."""
    return [m.span() for m in _MATH.finditer(text)]


def _period_ends_sentence(text: str, at: int) -> bool:
    """Whether the period at ``text[at]`` (followed by white space) ends a sentence."""
    head = text[: at + 1]
    if _LIST_MARKER.search(head):
        return False
    word = _WORD_BEFORE.search(head)
    if word is not None:
        name = word.group(1)
        if name.lower() in ABBREVIATIONS or (len(name) == 1 and name.isupper()):
            return False
    return True


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """The sentences of ``text`` as character spans [start, end) that tile it (see the module
    docstring); empty for an empty text."""
    math = _shielded(text)
    ends: list[int] = []
    for match in _END.finditer(text):
        start, end = match.span()
        if any(a <= start < b for a, b in math):
            continue
        if match.group() != "\n":
            following = re.match(r"\s*(\S)", text[end:])
            if following is not None and following.group(1).islower():
                continue
            last_period = match.group().rfind(".")
            if match.group().rstrip("\"')]\u201d\u2019").endswith(".") and not (
                _period_ends_sentence(text, start + last_period)
            ):
                continue
        # the white space after the end (blank lines too) stays with this sentence
        tail = re.match(r"\s*", text[end:])
        ends.append(end + (tail.end() if tail else 0))
    spans: list[tuple[int, int]] = []
    start = 0
    for end in sorted(set(ends)):
        if end > start:
            spans.append((start, end))
            start = end
    if start < len(text):
        spans.append((start, len(text)))
    return spans


def sentences(text: str) -> list[str]:
    """The sentences of ``text`` (:func:`sentence_spans`); ``"".join`` gives ``text`` back."""
    return [text[a:b] for a, b in sentence_spans(text)]


def token_ends(token_ids: Sequence[int], detokenize: Callable[[Sequence[int]], str]) -> list[int]:
    """Character offset in ``detokenize(token_ids)`` where each token's text ends: the length of
    the decoded prefix of its first i + 1 tokens (a token that decodes to part of a character
    ends where the character completes)."""
    ends, n = [], len(token_ids)
    full = detokenize(token_ids)
    for i in range(1, n + 1):
        prefix = detokenize(token_ids[:i])
        # a prefix that ends inside a multi-byte character decodes with a replacement mark
        while prefix and not full.startswith(prefix):
            prefix = prefix[:-1]
        ends.append(len(prefix))
    return ends


def sentence_ends(
    token_ids: Sequence[int], detokenize: Callable[[Sequence[int]], str]
) -> list[int]:
    """Token positions t (cuts: the first t tokens) at the end of each sentence of the decoded
    tokens: t = the number of tokens whose text ends within the sentences up to it. Positions
    are strictly increasing; the last is len(token_ids). Empty for no tokens."""
    if not token_ids:
        return []
    text = detokenize(token_ids)
    ends = token_ends(token_ids, detokenize)
    cuts: list[int] = []
    t = 0
    for _, end in sentence_spans(text):
        while t < len(ends) and ends[t] <= end:
            t += 1
        if t and (not cuts or t > cuts[-1]):
            cuts.append(t)
    if cuts[-1] != len(token_ids):
        cuts.append(len(token_ids))
    return cuts


def completed_sentences(positions: Sequence[int], ends: Sequence[int]) -> list[int]:
    """Each position moved forward to the first of the sentence ``ends`` at or after it (a cut
    inside a sentence keeps the rest of that sentence); 0 stays 0, and a position past the last
    end stays where it is."""
    out = []
    for t in positions:
        i = bisect_left(ends, t)
        out.append(t if t == 0 or i == len(ends) else ends[i])
    return out


def capped(cuts: Sequence[int], cap: int) -> list[int]:
    """At most ``cap`` of ``cuts`` (increasing), evenly spread and keeping the last: the cuts at
    ranks round((j + 1) * n / cap) - 1 for j < cap, n = len(cuts)."""
    if cap <= 0:
        raise ValueError(f"the cap on cuts must be positive, got {cap}")
    n = len(cuts)
    if n <= cap:
        return list(cuts)
    return [cuts[round((j + 1) * n / cap) - 1] for j in range(cap)]
