"""Numeric answers: normalisation and extraction from model text.

**Normalisation** (:func:`normalize_number`) maps a text that is one written number to the int it
denotes: digit groups of three separated by commas ("1,234") or spaces ("1 234"), a leading
``$``, a trailing ``.0``/``.00``, a sign, ``\\boxed{...}`` and a GSM8K ``#### N`` line
("$1,234.00" -> 1234, "-7" -> -7). Anything else normalises to ``None``: non-integer values
("2.5", "1,234.5"), fractions ("1/2", ``\\frac{1}{2}``), expressions ("15 - 1", "5 x 3"),
scientific notation ("1e3"), malformed groups ("1,23"), words, empty text.

**Numbers in running text** (a CoT, a forced answer) are read one at a time, and a number counts
as an answer only when it stands alone. It does not when it is:

- an operand: next to ``+ - * / × ÷ ^``, or a lone ``x``/``X`` meaning times ("5 x 3", "5x3"),
  with a number on the operator's other side; a ``-`` after a number (or between spaces after a
  word, "x - 5") subtracts. So "1/2" is not 1, "15 - 1" is not -1, "5 x 3 = 15" reads 5 and 3
  as operands and 15 (after "=") alone;
- part of scientific notation ("1e3", "2.5E-4"): neither the mantissa nor the exponent;
- next to another number with only spaces or tabs between ("1 234", "3 100"): in running text
  a space may group digits or separate two numbers, so neither reading is taken. Space grouping
  is read only where the number fills its field: the whole text, a ``\\boxed{}``, a ``#### ``
  line.

**Final answers** (:func:`extract_final_answer`) are read as *stated* by default: the answer a
response states in a form a prompt asks for, never a number it happened to write last (see the
function). ``reading="last_number"`` adds the last standing-alone number as a fallback.

Nothing here raises on any string.
"""

from __future__ import annotations

import re
from typing import Literal

Reading = Literal["stated", "last_number"]
READINGS: tuple[str, ...] = ("stated", "last_number")
"""The readings of :func:`extract_final_answer`."""

# A written number: sign (unary only, see _tokens), optional $, digits (commas allowed; their
# grouping is checked by normalize_number), optional decimals.
_NUMBER_RE = re.compile(r"(?:-\s*)?(?:\\?\$\s*)?(?:-\s*)?(?:\d+(?:,\d+)*(?:\.\d+)?|\.\d+)")
_BOXED_RE = re.compile(r"\\boxed\s*\{((?:[^{}]|\{[^{}]*\})*)\}")
_HASHES_RE = re.compile(r"####\s*([^\n]*)")
# "answer" then a connector ("is", ":" or "="), markdown bold and an opening math delimiter
# allowed around it: "The final answer is 18", "**Final Answer:** 18", "answer = $18".
_CONNECTOR = r"\s*\**\s*(?:is\b\s*:?|[:=])\s*\**\s*(?:\\\(|\\\[)?\s*"
_FINAL_ANSWER_RE = re.compile(r"\bfinal\s+answer" + _CONNECTOR, re.IGNORECASE)
_ANSWER_IS_RE = re.compile(r"\banswer" + _CONNECTOR, re.IGNORECASE)
_INTEGER_RE = re.compile(r"-?(?:\d{1,3}(?:,\d{3})+|\d{1,3}(?: \d{3})+|\d+)(?:\.\d+)?")
_OPERATORS = "+-*/×÷^"
_TIMES = "xX"
_FRACTION_MARKUP = ("\\frac", "\\dfrac", "\\tfrac")
_FRACTION_RE = re.compile(r"\\[dt]?frac\s*\{[^{}]*\}\s*\{[^{}]*\}")
_EXPONENT_RE = re.compile(r"[eE][-+]?\d")
_SPACED_AFTER_RE = re.compile(r"[ \t]+\.?\d")
_SPACED_BEFORE_RE = re.compile(r"\d[ \t]+$")
_CONTINUES_A_NUMBER = frozenset("0123456789.,$ \t")


def normalize_number(text: str | int | None) -> int | None:
    """The integer a number string denotes, or None.

    normalize("$1,234") = 1234; normalize("1 234") = 1234; normalize("18.0") = 18;
    normalize("-3") = -3; normalize("\\boxed{42}") = 42; normalize("#### 7") = 7;
    normalize("2.5") = None; normalize("1,234.5") = None; normalize("1/2") = None;
    normalize("15 - 1") = None; normalize("1e3") = None.
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


def _times_at(text: str, i: int) -> bool:
    """The character at ``i`` is an ``x`` meaning times: no letter on either side of it."""
    return (
        0 <= i < len(text)
        and text[i] in _TIMES
        and not (i > 0 and text[i - 1].isalpha())
        and not (i + 1 < len(text) and text[i + 1].isalpha())
    )


def _in_expression(text: str, start: int, end: int) -> bool:
    """The number at text[start:end] is an operand of an arithmetic operator or fraction."""
    after = _skip_forward(text, end)
    if after < len(text) and (text[after] in _OPERATORS or _times_at(text, after)):
        if _operand_after(text, after + 1):
            return True
    before = _skip_back(text, start)
    if before < 0:
        return False
    if _times_at(text, before):
        return _operand_before(text, before)
    if text[before] not in _OPERATORS:
        return False
    return _operand_before(text, before) or (text[before] == "-" and _binary_minus(text, before))


def _not_alone(text: str, start: int, digits: int, end: int) -> bool:
    """The number at text[start:end] (its digits from ``digits``, after any sign or ``$``) does
    not stand alone: an operand, a part of scientific notation, or next to another number with
    only spaces between."""
    before = text[max(0, digits - 2) : digits]
    return (
        _in_expression(text, start, end)
        or bool(_EXPONENT_RE.match(text, end))
        or (len(before) == 2 and before[1] in "eE" and before[0].isdecimal())
        or (len(before) == 2 and before[1] in "+-" and before[0] in "eE")
        or bool(_SPACED_AFTER_RE.match(text, end))
        or bool(_SPACED_BEFORE_RE.search(text, 0, digits))
    )


def _tokens(text: str) -> list[tuple[int, int, str, bool]]:
    """Every written number in ``text``: (where its match starts, where it ends, the number,
    whether it stands alone), in order. A ``-`` that subtracts is no sign: it stays outside the
    number, which is then an operand."""
    fractions = [f.span() for f in _FRACTION_RE.finditer(text)]
    out = []
    for m in _NUMBER_RE.finditer(text):
        start, number = m.start(), m.group(0)
        if any(a <= start < b for a, b in fractions):
            out.append((start, m.end(), number, False))
            continue
        if number.startswith("-") and _binary_minus(text, start):
            number = number[1:].lstrip()
            start = m.end() - len(number)
        digits = start + len(number) - len(number.lstrip("-$\\ \t"))
        out.append((m.start(), m.end(), number, not _not_alone(text, start, digits, m.end())))
    return out


def _read(token: tuple[int, int, str, bool]) -> int | None:
    _, _, number, alone = token
    return normalize_number(number) if alone else None


def _boxed_value(content: str) -> int | None:
    """The integer in a ``\\boxed{}``: its whole content, else its only number ("18
    \\text{ dollars}" -> 18); None for fractions, expressions or several numbers."""
    value = normalize_number(content)
    if value is not None or any(f in content for f in _FRACTION_MARKUP):
        return value
    tokens = _tokens(content)
    return _read(tokens[0]) if len(tokens) == 1 else None


def _complete(text: str, end: int) -> bool:
    """Something follows position ``end`` that cannot continue a number (a letter, a newline, a
    bracket...): a number ending there was written in full even if the text was then cut."""
    return any(ch not in _CONTINUES_A_NUMBER for ch in text[end:])


def _after_phrase(text: str, tokens: list, phrase: re.Pattern[str]) -> tuple[int, int | None]:
    """(end of the number, its value) right after the last ``phrase`` followed by a number;
    (-1, None) when no phrase is followed by one."""
    ends = {m.end() for m in phrase.finditer(text)}
    after = [t for t in tokens if t[0] in ends]
    return (after[-1][1], _read(after[-1])) if after else (-1, None)


def extract_final_answer(
    text: str, reading: Reading = "stated", truncated: bool = False
) -> int | None:
    """The model's own final integer answer in a full response, or None.

    ``reading="stated"`` (default): the answer the response *states*, in this order:

    1. the last ``\\boxed{N}``;
    2. else the last ``#### N`` line;
    3. else the number right after the last "final answer" phrase: "The final answer is N",
       "final answer: N", "**Final Answer:** N", "final answer = N";
    4. else, in a response that ended on its own (not ``truncated``), the number right after
       the last "answer is N" / "answer: N" ("Therefore, the answer is 3.");
    5. else the whole text, when it is one number (a bare answer, e.g. a scorer's
       ``Score.answer``).

    Nothing else: "Step 2: we need to add the remaining" has no final answer (not 2). "The
    answer is N" without "final" is not read in a ``truncated`` response: the hinted prompt's
    own words are "Hint: the answer is X", so a CoT cut while restating the hint would
    otherwise count as answering X. In a ``truncated`` response (one that hit its token limit)
    a stated number must be followed by something that cannot continue it ("18 eggs",
    "18.\\n", "}"): "The final answer is 64" at the very end of a cut response may be the start
    of 640, so it has no final answer.

    ``reading="last_number"``: the stated answer, ignoring ``truncated``; else the last number
    standing alone anywhere in the text, also in a truncated response (so a CoT cut mid-sentence
    counts as answered by whatever number it wrote last).

    The number so chosen must be an integer standing alone (see the module docstring): a
    fraction, a decimal, an operand of an expression, scientific notation or a space-separated
    pair of numbers gives None.
    """
    if reading not in READINGS:
        raise ValueError(f"unknown answer reading {reading!r}; expected one of {READINGS}")
    if not isinstance(text, str) or not text:
        return None
    cut = truncated and reading == "stated"
    boxed = _BOXED_RE.findall(text)
    if boxed:
        return _boxed_value(boxed[-1])
    hashes = list(_HASHES_RE.finditer(text))
    if hashes:
        last = hashes[-1]
        value = _boxed_value(last.group(1))
        digits = [m.end() for m in re.finditer(r"\d", last.group(1))]
        if cut and digits and not _complete(text, last.start(1) + digits[-1]):
            return None
        return value
    tokens = _tokens(text)
    phrases = [_FINAL_ANSWER_RE] if cut else [_FINAL_ANSWER_RE, _ANSWER_IS_RE]
    for phrase in phrases:
        end, value = _after_phrase(text, tokens, phrase)
        if end >= 0:
            return value if not cut or _complete(text, end) else None
    whole = normalize_number(text)
    if whole is not None:
        return whole if not cut or _complete(text, len(text.rstrip().rstrip("."))) else None
    if reading == "last_number" and tokens:
        return _read(tokens[-1])
    return None


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
