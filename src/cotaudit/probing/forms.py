"""Answer forms of a truncate-and-force-answer probe: what a forced answer looks like.

A form fixes four things:

- ``tag``: the text appended after a cut prefix to force an answer (overridable per run);
- ``lead``: how a forced answer is stated to the task's scorer: its verification text is
  ``lead + answer`` ("ANSWER: B", "The final answer is 18", "The answer is Paris"), whatever
  tag elicited it, so a task that parses "ANSWER: X" still reads an answer forced by another tag;
- ``answer_max_tokens``: the token budget of one forced answer;
- ``extract(text)``: the canonical answer in a text (a full response, or what a task's scorer
  returned as ``Score.answer``), or None when there is none. Two answers are *the same* when
  their canonical strings are equal.

Forms:

- ``integer``: GSM8K-style numbers; canonical = the integer as decimal text of the *stated*
  answer (:func:`cotaudit.answers.extract_final_answer`, ``reading="stated"``: the last
  ``\\boxed{}``, ``#### N``, the number after the last "final answer is", else after the last
  "answer is", else a text that is one number; "18.00" -> "18", "1/2" -> None, a response that
  states no answer -> None, never its last number).
- ``letter``: multiple-choice letters (Inspect's ``multiple_choice()`` / ``choice()``);
  canonical = the chosen letters, upper case, sorted and comma-joined ("b" -> "B",
  "ANSWER: C, A" -> "A, C"), read from the last ``ANSWER:`` line, else from a text that is only
  letters, else from a leading letter ("B) Paris" -> "B").
- ``string``: short exact strings (``match()`` / ``includes()``); canonical = the text after the
  last "answer:" / "answer is" marker (else the last non-empty line), case-folded, with
  punctuation and surrounding whitespace stripped and inner whitespace collapsed
  ("The answer is Paris." -> "paris").

A forced continuation is first ``clip``-ped to its first non-empty line (the answer the tag asked
for, not what the model rambles on with).
"""

from __future__ import annotations

import re
import string
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from cotaudit.answers import extract_final_answer

FormName = Literal["integer", "letter", "string"]
FORM_NAMES: tuple[str, ...] = ("integer", "letter", "string")

_ANSWER_LINE_RE = re.compile(r"(?im)^\s*answer\s*:\s*([A-Za-z](?:\s*[, ]\s*[A-Za-z])*)\s*\.?\s*$")
_LETTERS_ONLY_RE = re.compile(r"^\s*\(?([A-Za-z](?:\s*[, ]\s*[A-Za-z])*)\)?\s*\.?\s*$")
_LEADING_LETTER_RE = re.compile(r"^\s*\(?([A-Z])(?:[).:,]|\s|$)")
_ANSWER_MARKER_RE = re.compile(r"(?i)answer\s*(?::|is\b)")
_PUNCTUATION = str.maketrans("", "", string.punctuation)


def clip(text: str) -> str:
    """A forced continuation cut to its first non-empty line, stripped."""
    for line in text.splitlines():
        if line.strip():
            return line.strip()
    return ""


def extract_integer(text: str | None) -> str | None:
    """Canonical integer answer (decimal text) stated in ``text``; None if it states none."""
    value = extract_final_answer(text or "", reading="stated")
    return None if value is None else str(value)


def _letters(group: str) -> str:
    return ", ".join(sorted({ch.upper() for ch in group if ch.isalpha()}))


def extract_letter(text: str | None) -> str | None:
    """Canonical multiple-choice answer: sorted upper-case letters joined by ", "; None if none.

    Precedence: the last ``ANSWER: X`` line; else a text made of letters only ("b", "A, C");
    else a leading capital letter followed by ``)``, ``.``, ``:``, ``,``, a space or the end."""
    if not text:
        return None
    lines = _ANSWER_LINE_RE.findall(text)
    if lines:
        return _letters(lines[-1])
    only = _LETTERS_ONLY_RE.match(text)
    if only:
        return _letters(only.group(1))
    lead = _LEADING_LETTER_RE.match(text.strip())
    return lead.group(1) if lead else None


def normalize_string(text: str) -> str:
    """Case-folded, punctuation removed, whitespace collapsed."""
    return " ".join(text.casefold().translate(_PUNCTUATION).split())


def extract_string(text: str | None) -> str | None:
    """Canonical short answer: after the last "answer:"/"answer is" marker, else the last
    non-empty line; normalised by :func:`normalize_string`; None if empty."""
    if not text:
        return None
    markers = list(_ANSWER_MARKER_RE.finditer(text))
    if markers:
        tail = clip(text[markers[-1].end() :])
    else:
        lines = [line for line in text.splitlines() if line.strip()]
        tail = lines[-1] if lines else ""
    canonical = normalize_string(tail)
    return canonical or None


@dataclass(frozen=True)
class AnswerForm:
    """One answer form: its default forced-answer tag, answer budget and canonical extractor."""

    name: str
    lead: str
    answer_max_tokens: int
    extract: Callable[[str | None], str | None]

    @property
    def tag(self) -> str:
        """The default forced-answer tag: a blank line, then the lead."""
        return "\n\n" + self.lead

    def verification_text(self, forced_answer: str, lead: str | None = None) -> str:
        """What the task's scorer reads for a forced answer: ``lead`` (default the form's) +
        its first line."""
        return (self.lead if lead is None else lead) + clip(forced_answer)

    def same(self, a: str | None, b: str | None) -> bool:
        """Both texts have a canonical answer and it is the same."""
        ca, cb = self.extract(a), self.extract(b)
        return ca is not None and ca == cb


FORMS: dict[str, AnswerForm] = {
    "integer": AnswerForm("integer", "The final answer is ", 8, extract_integer),
    "letter": AnswerForm("letter", "ANSWER: ", 4, extract_letter),
    "string": AnswerForm("string", "The answer is ", 12, extract_string),
}


STAND_INS: tuple[str, ...] = ("X9", "9", "A")
"""Answers :func:`pattern_lead` checks a lead with (a word, a number, a letter)."""
_INLINE_FLAGS_RE = re.compile(r"^\(\?[aiLmsux]+\)")
_REGEX_SYNTAX = set(".^$*+?{}[]|()")


def pattern_lead(pattern: str, ignore_case: bool = True) -> str | None:
    """The text an answer follows for a scorer that reads it with ``pattern`` (Inspect's
    ``pattern()``: ``re.search``, the first group): the pattern's literal text before its first
    group, ``\\s`` and ``\\s+`` written as one space, ``\\s*`` and ``\\s?`` as one space too
    except before punctuation (nothing there), escaped characters as themselves
    (``ANSWER\\s*:\\s*(\\w+)`` -> ``"ANSWER: "``). None when that text holds
    other regex syntax, or when ``re.search(pattern, lead + a)`` captures no stand-in answer a
    (:data:`STAND_INS`) whole (a pattern that needs text after the answer)."""
    body = _INLINE_FLAGS_RE.sub("", pattern).lstrip("^")
    lead, i = "", 0
    while i < len(body) and body[i] != "(":
        ch = body[i]
        if ch == "\\" and i + 1 < len(body):
            nxt = body[i + 1]
            if nxt == "s":
                quantifier = body[i + 2 : i + 3]
                optional = quantifier in ("*", "?")
                i += 3 if quantifier in ("*", "+", "?") else 2
                before_text = i < len(body) and body[i] not in "(\\" and not body[i].isalnum()
                lead += "" if optional and before_text else " "
                continue
            if nxt.isalnum():
                return None  # \d, \w, \b ...: not literal text
            lead, i = lead + nxt, i + 2
            continue
        if ch in _REGEX_SYNTAX:
            return None
        lead, i = lead + ch, i + 1
    if i == len(body):
        return None  # no group: nothing captured
    flags = re.IGNORECASE if ignore_case else 0
    for answer in STAND_INS:
        try:
            found = re.search(pattern, lead + answer, flags)
        except re.error:
            return None
        if found is not None and found.groups() and found.group(1) == answer:
            return lead
    return None


def get_form(name: str) -> AnswerForm:
    """The form called ``name``; a clear error for an unknown name."""
    try:
        return FORMS[name]
    except KeyError:
        raise ValueError(f"unknown answer form {name!r}; expected one of {FORM_NAMES}") from None
