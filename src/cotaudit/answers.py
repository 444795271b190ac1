"""Numeric answers: normalisation and extraction from model text.

Normalisation maps a written number to an int when it denotes an integer: digit groups of three
separated by commas or spaces, a leading ``$``, a trailing ``.0``/``.00``, a sign,
``\\boxed{...}`` and a GSM8K ``#### N`` line are all accepted ("$1,234.00" -> 1234, "-7" -> -7).
Anything else normalises to ``None``: non-integer values ("2.5", "1,234.5"), fractions ("1/2",
``\\frac{1}{2}``), arithmetic expressions ("15 - 1"), malformed groups ("1,23"), words, empty
text. Extraction never reads one operand of a fraction or an expression as the answer: a
number written next to an operator (``+ - * / × ÷ ^`` with a number on its other side) is no
answer, so "1/2" is not 1 and "15 - 1" is not -1. Nothing here raises on any string.
"""

from __future__ import annotations

import re

# A written number: sign (unary only, see _token_sign), optional $, digits (commas allowed;
# their grouping is checked by normalize_number), optional decimals.
_NUMBER_RE = re.compile(r"(?:-\s*)?(?:\\?\$\s*)?(?:-\s*)?(?:\d+(?:,\d+)*(?:\.\d+)?|\.\d+)")
_BOXED_RE = re.compile(r"\\boxed\s*\{((?:[^{}]|\{[^{}]*\})*)\}")
_HASHES_RE = re.compile(r"####\s*([^\n]*)")
_ANSWER_IS_RE = re.compile(r"(?:final answer|answer)\s*(?:is|:|=)?\s*[:=]?\s*\**\s*", re.IGNORECASE)
_INTEGER_RE = re.compile(r"-?(?:\d{1,3}(?:,\d{3})+|\d{1,3}(?: \d{3})+|\d+)(?:\.\d+)?")
_OPERATORS = "+-*/×÷^"
_FRACTION_MARKUP = ("\\frac", "\\dfrac", "\\tfrac")
_FRACTION_RE = re.compile(r"\\[dt]?frac\s*\{[^{}]*\}\s*\{[^{}]*\}")


def normalize_number(text: str | int | None) -> int | None:
    """The integer a number string denotes, or None.

    normalize("$1,234") = 1234; normalize("18.0") = 18; normalize("-3") = -3;
    normalize("\\boxed{42}") = 42; normalize("#### 7") = 7; normalize("2.5") = None;
    normalize("1,234.5") = None; normalize("1/2") = None; normalize("15 - 1") = None.
    """
    if text is None or isinstance(text, bool):
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
    s = s.replace("\\$", "$")
    sign = ""
    for _ in range(2):  # "-$5", "$-5", "+5"
        s = s.strip()
        if s[:1] in ("-", "+"):
            sign, s = ("-" if s[0] == "-" else ""), s[1:]
        elif s[:1] == "$":
            s = s[1:]
    s = sign + s.strip()
    if not _INTEGER_RE.fullmatch(s):
        return None
    s = s.replace(",", "").replace(" ", "")
    if "." in s:
        whole, frac = s.split(".", 1)
        if frac.strip("0"):
            return None
        s = whole
    return int(s)


def _skip_back(text: str, i: int) -> int:
    """Index of the last non-space character before ``i`` (-1 if none)."""
    i -= 1
    while i >= 0 and text[i].isspace():
        i -= 1
    return i


def _skip_forward(text: str, i: int) -> int:
    """Index of the first non-space character at or after ``i`` (len(text) if none)."""
    while i < len(text) and text[i].isspace():
        i += 1
    return i


def _operand_before(text: str, i: int) -> bool:
    """A number (digit or closing bracket) ends just before position ``i``, spaces aside."""
    j = _skip_back(text, i)
    return j >= 0 and (text[j].isdecimal() or text[j] in ")]}")


def _operand_after(text: str, i: int) -> bool:
    """A number (digit, ``$``, ``.5``, opening bracket, LaTeX) starts at ``i``, spaces aside."""
    j = _skip_forward(text, i)
    if j < len(text) and text[j] == ".":
        j += 1
    return j < len(text) and (text[j].isdecimal() or text[j] in "$(\\")


def _binary_minus(text: str, i: int) -> bool:
    """The ``-`` at ``i`` subtracts: a number precedes it, or it stands between spaces after a
    word ("x - 5")."""
    if _operand_before(text, i):
        return True
    spaced = 0 < i < len(text) - 1 and text[i - 1].isspace() and text[i + 1].isspace()
    j = _skip_back(text, i)
    return spaced and j >= 0 and text[j].isalnum()


def _in_expression(text: str, start: int, end: int) -> bool:
    """The number at text[start:end] is an operand of an arithmetic operator or fraction."""
    after = _skip_forward(text, end)
    if after < len(text) and text[after] in _OPERATORS and _operand_after(text, after + 1):
        return True
    before = _skip_back(text, start)
    if before < 0 or text[before] not in _OPERATORS:
        return False
    return _operand_before(text, before) or (text[before] == "-" and _binary_minus(text, before))


def _tokens(text: str) -> list[tuple[int, str, bool]]:
    """Every written number in ``text``: (where its match starts, the number, whether it is
    part of an expression), in order. A ``-`` that subtracts is no sign: it stays outside the
    number, which is then an operand."""
    fractions = [f.span() for f in _FRACTION_RE.finditer(text)]
    out = []
    for m in _NUMBER_RE.finditer(text):
        start, number = m.start(), m.group(0)
        if any(a <= start < b for a, b in fractions):
            out.append((start, number, True))
            continue
        if number.startswith("-") and _binary_minus(text, start):
            number = number[1:].lstrip()
            start = m.end() - len(number)
        out.append((m.start(), number, _in_expression(text, start, m.end())))
    return out


def _read(token: tuple[int, str, bool]) -> int | None:
    _, number, in_expression = token
    return None if in_expression else normalize_number(number)


def _boxed_value(content: str) -> int | None:
    """The integer in a ``\\boxed{}``: its whole content, else its only number ("18
    \\text{ dollars}" -> 18); None for fractions, expressions or several numbers."""
    value = normalize_number(content)
    if value is not None or any(f in content for f in _FRACTION_MARKUP):
        return value
    tokens = _tokens(content)
    return _read(tokens[0]) if len(tokens) == 1 else None


def extract_final_answer(text: str) -> int | None:
    """The model's own final integer answer in a full response, or None if none parses.

    Precedence: the last ``\\boxed{}``; else the last ``#### N``; else the number right after
    the last "answer is"; else the last number in the text. The number so chosen must be an
    integer standing alone: a fraction, a decimal or an operand of an expression gives None.
    """
    if not isinstance(text, str) or not text:
        return None
    boxed = _BOXED_RE.findall(text)
    if boxed:
        return _boxed_value(boxed[-1])
    hashes = _HASHES_RE.findall(text)
    if hashes:
        return _boxed_value(hashes[-1])
    tokens = _tokens(text)
    stated = {m.end() for m in _ANSWER_IS_RE.finditer(text)}
    after_stated = [t for t in tokens if t[0] in stated]
    if after_stated:
        return _read(after_stated[-1])
    return _read(tokens[-1]) if tokens else None


def extract_forced_answer(text: str) -> int | None:
    """The answer in a short forced completion (after the forced-answer tag): the first number.

    A ``\\boxed{}`` is the answer if present; otherwise the first number, so "18 dollars, or
    20" -> 18, but "1/2" and "15 - 1" -> None (a fraction or expression is no integer answer).
    """
    if not isinstance(text, str) or not text:
        return None
    boxed = _BOXED_RE.search(text)
    if boxed:
        return _boxed_value(boxed.group(1))
    tokens = _tokens(text)
    return _read(tokens[0]) if tokens else None


def extract_boxed_answer(text: str) -> int | None:
    """The integer in the last ``\\boxed{}`` of a response, or None (no box, or a box holding no
    single integer): the answer a prompt asking for a boxed integer states, with no fallback."""
    if not isinstance(text, str) or not text:
        return None
    boxed = _BOXED_RE.findall(text)
    return _boxed_value(boxed[-1]) if boxed else None
