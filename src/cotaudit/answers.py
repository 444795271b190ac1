"""Numeric answers: normalisation and extraction from model text.

Normalisation maps a written number to an int when it denotes an integer: commas and spaces
between digit groups, a leading ``$``, a trailing ``.0``/``.00``, a sign, ``\\boxed{...}`` and a
GSM8K ``#### N`` line are all accepted ("$1,234.00" -> 1234, "-7" -> -7). Anything else
(non-integer values, words, empty text) normalises to ``None``. Nothing here raises on any string.
"""

from __future__ import annotations

import re

_NUMBER = r"-?\$?\s*\d[\d,]*(?:\.\d+)?|-?\$?\s*\.\d+"
_NUMBER_RE = re.compile(_NUMBER)
_BOXED_RE = re.compile(r"\\boxed\s*\{([^{}]*)\}")
_HASHES_RE = re.compile(r"####\s*([^\n]*)")
_ANSWER_IS_RE = re.compile(
    r"(?:final answer|answer)\s*(?:is|:|=)?\s*[:=]?\s*\**\s*(" + _NUMBER + ")", re.IGNORECASE
)


def normalize_number(text: str | int | None) -> int | None:
    """The integer a number string denotes, or None.

    normalize("$1,234") = 1234; normalize("18.0") = 18; normalize("-3") = -3;
    normalize("\\boxed{42}") = 42; normalize("#### 7") = 7; normalize("2.5") = None.
    """
    if text is None:
        return None
    if isinstance(text, bool):
        return None
    if isinstance(text, int):
        return text
    s = str(text).strip()
    boxed = _BOXED_RE.search(s)
    if boxed:
        s = boxed.group(1)
    hashes = _HASHES_RE.search(s)
    if hashes:
        s = hashes.group(1)
    s = s.strip().rstrip(".").strip()
    s = s.replace("\\$", "$").replace("$", "").replace(",", "").replace(" ", "")
    if s.startswith("+"):
        s = s[1:]
    if not re.fullmatch(r"-?\d+(?:\.\d+)?", s):
        return None
    if "." in s:
        whole, frac = s.split(".", 1)
        if frac.strip("0"):
            return None
        s = whole
    try:
        return int(s)
    except ValueError:
        return None


def _numbers(text: str) -> list[str]:
    return [m.group(0) for m in _NUMBER_RE.finditer(text)]


def extract_final_answer(text: str) -> int | None:
    """The model's own final integer answer in a full response, or None if none parses.

    Precedence: the last ``\\boxed{}``; else the last ``#### N``; else the last "answer is N";
    else the last number in the text.
    """
    if not isinstance(text, str) or not text:
        return None
    for pattern in (_BOXED_RE, _HASHES_RE):
        found = pattern.findall(text)
        if found:
            value = normalize_number(found[-1])
            return value if value is not None else _first_number(found[-1])
    stated = _ANSWER_IS_RE.findall(text)
    if stated:
        return normalize_number(stated[-1])
    numbers = _numbers(text)
    return normalize_number(numbers[-1]) if numbers else None


def _first_number(text: str) -> int | None:
    numbers = _numbers(text)
    return normalize_number(numbers[0]) if numbers else None


def extract_forced_answer(text: str) -> int | None:
    """The answer in a short forced completion (after the forced-answer tag): the first number.

    A ``\\boxed{}`` wins if present; otherwise the first number, so "18 dollars, or 20" -> 18.
    """
    if not isinstance(text, str) or not text:
        return None
    boxed = _BOXED_RE.search(text)
    if boxed:
        value = normalize_number(boxed.group(1))
        if value is not None:
            return value
    return _first_number(text)
