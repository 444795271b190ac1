"""Answer forms of a truncate-and-force-answer probe: what a forced answer looks like.

:data:`FORMS` is the one registry: each entry is an :class:`AnswerForm` that owns everything
form-specific, and every other module reads the form through it (never by comparing its name):

- ``name``: what ``-T answer=`` calls it (:data:`FORM_NAMES` lists the registry's names);
- ``detects(facts)``: whether ``-T answer=auto`` chooses it for a task (:func:`detect_form`:
  the first entry, in registry order, that detects the task's :class:`TaskFacts`);
- ``tag``: the text appended after a cut prefix to force an answer (overridable per run): a
  blank line, then ``lead``;
- ``lead``: how a forced answer is stated to the task's scorer: its verification text is
  ``lead + answer`` ("ANSWER: B", "The final answer is 18", "The answer is Paris"), whatever
  tag elicited it, so a task that parses "ANSWER: X" still reads an answer forced by another tag;
- ``answer_max_tokens``: the token budget of one forced answer;
- ``extract(text)``: the canonical answer in a text (a full response, or what a task's scorer
  returned as ``Score.answer``), or None when there is none. Two answers are *the same* when
  their canonical strings are equal;
- ``reads_choices`` and ``choice_answer(selected, letters_of)``: whether a scored copy's
  marked choices give its canonical answer (on a sample with choices), and the answer they give;
- ``target_reference`` / ``final_reference``: what the exact estimator checks a prompt's forced
  answers against (the canonical target for TRACE, the trace's own final answer for
  self-commitment), as an :class:`ExactReference` holding ``reference_value`` of the canonical
  answer;
- ``exact_plan(reference, ...)``: the token tree the exact estimator scores for that reference
  (:mod:`cotaudit.probing.exact`).

The forms and what each reads are the entries' docstrings (and the table in docs/probe.md).
A forced continuation is first ``clip``-ped to its first non-empty line (the answer the tag asked
for, not what the model rambles on with).
"""

from __future__ import annotations

import re
import string
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import ClassVar

from cotaudit.answers import extract_final_answer, normalize_number
from cotaudit.probing.choices import (
    ALPHABET,
    ShownChoice,
    choice_letters,
    dataset_letters,
    shown_letters,
)
from cotaudit.probing.exact import (
    ExactPlan,
    TokenClasses,
    integer_plan,
    letter_plan,
    string_plan,
)

Tokenize = Callable[[str], list[int]]
Shown = Sequence[ShownChoice] | None
"""The choices a prompt shows, in shown order (None: a prompt without choices)."""

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
    """Canonical integer answer: the *stated* answer as decimal text
    (:func:`cotaudit.answers.extract_final_answer`, ``reading="stated"``: the last ``\\boxed{}``,
    ``#### N``, the number after the last "final answer is", else after the last "answer is",
    else a text that is one number; "18.00" -> "18", "1/2" -> None); None for a text that
    states no answer (never its last number)."""
    value = extract_final_answer(text or "", reading="stated")
    return None if value is None else str(value)


def _letters(group: str) -> str:
    return ", ".join(sorted({ch.upper() for ch in group if ch.isalpha()}))


def extract_letter(text: str | None) -> str | None:
    """Canonical multiple-choice answer: sorted upper-case letters joined by ", "; None if none
    ("b" -> "B", "ANSWER: C, A" -> "A, C", "B) Paris" -> "B").

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
    non-empty line; normalised by :func:`normalize_string` ("The answer is Paris." -> "paris");
    None if empty."""
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
class TaskFacts:
    """What a task shows of its answers, as answer-form detection reads it: whether its samples
    have choices, whether its scorer matches numbers (``match(numeric=True)``), and its samples'
    targets (a text or a list of texts each)."""

    has_choices: bool
    numeric_scorer: bool
    targets: tuple[str | Sequence[str], ...]


@dataclass(frozen=True)
class ExactReference:
    """What the exact estimator checks one prompt's forced answers against: the reference
    ``value`` in the canonical form of its answer ``form`` (None: no reference, p = 0), the
    texts it is also written as (``written``, e.g. the target as given) and the choice letters
    a prompt names (``letters``; a form reading choices reads their whole distribution)."""

    form: AnswerForm
    value: int | str | None
    written: tuple[str, ...] = ()
    letters: tuple[str, ...] = ()

    def plan(self, tokenize: Tokenize, classes: TokenClasses, max_tokens: int) -> ExactPlan:
        """The token tree the exact estimator scores for this reference (the form's plan)."""
        return self.form.exact_plan(self, tokenize, classes, max_tokens)


def _first_entry(target: Sequence[str]) -> str:
    """A target's first non-empty entry, stripped ("" for none)."""
    return next((t.strip() for t in target if t.strip()), "")


class AnswerForm(ABC):
    """One answer form (see the module docstring): its name, lead, answer budget, detection,
    canonical extractor, exact references and exact plan."""

    name: ClassVar[str]
    lead: ClassVar[str]
    answer_max_tokens: ClassVar[int]
    reads_choices: ClassVar[bool] = False

    @property
    def tag(self) -> str:
        """The default forced-answer tag: a blank line, then the lead."""
        return "\n\n" + self.lead

    @abstractmethod
    def detects(self, facts: TaskFacts) -> bool:
        """Whether ``-T answer=auto`` chooses this form for a task showing ``facts`` (asked in
        registry order; the first that detects is chosen)."""

    @abstractmethod
    def extract(self, text: str | None) -> str | None:
        """The canonical answer in ``text``; None when it states none."""

    @abstractmethod
    def exact_plan(
        self, reference: ExactReference, tokenize: Tokenize, classes: TokenClasses, max_tokens: int
    ) -> ExactPlan:
        """The token tree whose probability is P(a forced answer parses to ``reference``)."""

    def reference_value(self, canonical: str | None) -> int | str | None:
        """A canonical answer as the exact estimator's reference holds it (here: as it is)."""
        return canonical

    def target_reference(self, target: Sequence[str], choices: Shown) -> ExactReference:
        """The exact reference of a TRACE probe under a prompt with this ``target`` and
        ``choices`` (shown order): the canonical target, i.e. :meth:`reference_value` of the
        canonical form of the target's first non-empty entry, also written as the target
        writes it (``written``)."""
        text = _first_entry(target)
        canonical = self.extract(text)
        written = (text,) if canonical else ()
        return ExactReference(self, self.reference_value(canonical), written=written)

    def final_reference(
        self, final_text: str, own_choices: Shown, choices: Shown
    ) -> ExactReference:
        """The exact reference of a self-commitment probe under a prompt showing ``choices``:
        :meth:`reference_value` of :meth:`final_answer` of the trace's own final-answer text;
        ``own_choices`` are the choices the trace's own prompt showed."""
        return ExactReference(self, self.reference_value(self.final_answer(final_text)))

    def final_answer(self, final_text: str) -> str | None:
        """The canonical form (:meth:`extract`) of a trace's own final-answer text; None for a
        blank text (no final answer)."""
        return self.extract(final_text) if final_text.strip() else None

    def choice_answer(
        self, selected: Sequence[ShownChoice], letters_of: Sequence[ShownChoice]
    ) -> str | None:
        """The canonical answer of a scored copy whose marked choices are ``selected``, named
        among the probed sample's choices ``letters_of`` (None: none); asked only of a form that
        :attr:`reads_choices` (the others read ``Score.answer`` or the text)."""
        return None

    def verification_text(self, forced_answer: str, lead: str | None = None) -> str:
        """What the task's scorer reads for a forced answer: ``lead`` (default the form's) +
        its first line."""
        return (self.lead if lead is None else lead) + clip(forced_answer)

    def same(self, a: str | None, b: str | None) -> bool:
        """Both texts have a canonical answer and it is the same."""
        ca, cb = self.extract(a), self.extract(b)
        return ca is not None and ca == cb


class LetterForm(AnswerForm):
    """Multiple-choice letters (Inspect's ``multiple_choice()`` / ``choice()``): chosen when the
    samples have choices; canonical answer :func:`extract_letter`; on a sample with choices, a
    scored copy's marked choices named by the probed sample's dataset letters
    (:func:`cotaudit.probing.choices.dataset_letters`). Exact: the first token's mass on each
    choice letter (:func:`cotaudit.probing.exact.letter_plan`)."""

    name = "letter"
    lead = "ANSWER: "
    answer_max_tokens = 4
    reads_choices = True

    def detects(self, facts: TaskFacts) -> bool:
        """The samples have choices."""
        return facts.has_choices

    def extract(self, text: str | None) -> str | None:
        """:func:`extract_letter`."""
        return extract_letter(text)

    def choice_answer(
        self, selected: Sequence[ShownChoice], letters_of: Sequence[ShownChoice]
    ) -> str | None:
        """:func:`cotaudit.probing.choices.dataset_letters` of the marked choices."""
        return dataset_letters(selected, letters_of)

    def target_reference(self, target: Sequence[str], choices: Shown) -> ExactReference:
        """The letter the prompt shows the target's choice at
        (:func:`cotaudit.probing.choices.shown_letters`; without choices the target's letter),
        among :func:`cotaudit.probing.choices.choice_letters`; a target naming several letters
        (or none) has no single-letter reference (value None)."""
        letters = choice_letters(choices)
        shown = shown_letters(target, choices or _identity(letters))
        return ExactReference(self, _single_letter(shown), letters=letters)

    def final_reference(
        self, final_text: str, own_choices: Shown, choices: Shown
    ) -> ExactReference:
        """The final answer's letter, read in the order the trace's own prompt shows its choices
        (``own_choices``) and named by the letter the same choice (by value) has in ``choices``;
        several letters, or a choice that prompt does not show, give no reference."""
        letter = _single_letter(self.final_answer(final_text))
        if letter is not None and own_choices and choices:
            i = ALPHABET.index(letter)
            value = own_choices[i].value if i < len(own_choices) else None
            j = next((n for n, c in enumerate(choices) if c.value == value), None)
            letter = None if j is None else ALPHABET[j]
        return ExactReference(self, letter, letters=choice_letters(choices))

    def exact_plan(
        self, reference: ExactReference, tokenize: Tokenize, classes: TokenClasses, max_tokens: int
    ) -> ExactPlan:
        """:func:`cotaudit.probing.exact.letter_plan` over the reference's choice letters."""
        letter = None if reference.value is None else str(reference.value)
        return letter_plan(letter, reference.letters, classes)


class IntegerForm(AnswerForm):
    """GSM8K-style numbers: chosen when the scorer matches numbers or every target is an integer;
    canonical answer :func:`extract_integer`. Exact: the integer's written forms and their
    endings (:func:`cotaudit.probing.exact.integer_plan`)."""

    name = "integer"
    lead = "The final answer is "
    answer_max_tokens = 8

    def detects(self, facts: TaskFacts) -> bool:
        """The scorer matches numbers (``match(numeric=True)``), or every target (there is one
        at least) is a text that is one integer."""
        if facts.numeric_scorer:
            return True
        targets = facts.targets
        return bool(targets) and all(
            isinstance(x, str) and normalize_number(x) is not None for x in targets
        )

    def extract(self, text: str | None) -> str | None:
        """:func:`extract_integer`."""
        return extract_integer(text)

    def reference_value(self, canonical: str | None) -> int | str | None:
        """The canonical answer's integer."""
        return None if canonical is None else int(canonical)

    def exact_plan(
        self, reference: ExactReference, tokenize: Tokenize, classes: TokenClasses, max_tokens: int
    ) -> ExactPlan:
        """:func:`cotaudit.probing.exact.integer_plan` of the reference's integer."""
        value = None if reference.value is None else int(reference.value)
        return integer_plan(value, tokenize, classes, max_tokens)


class StringForm(AnswerForm):
    """Short exact strings (``match()`` / ``includes()``): chosen when no other form is;
    canonical answer :func:`extract_string`. Exact: the reference's written forms ended by the
    end of the line (:func:`cotaudit.probing.exact.string_plan`)."""

    name = "string"
    lead = "The answer is "
    answer_max_tokens = 12

    def detects(self, facts: TaskFacts) -> bool:
        """Always: the form of a task no earlier entry detects."""
        return True

    def extract(self, text: str | None) -> str | None:
        """:func:`extract_string`."""
        return extract_string(text)

    def exact_plan(
        self, reference: ExactReference, tokenize: Tokenize, classes: TokenClasses, max_tokens: int
    ) -> ExactPlan:
        """:func:`cotaudit.probing.exact.string_plan` of the reference and its written forms."""
        text = None if reference.value is None else str(reference.value)
        return string_plan(text, reference.written, tokenize, classes, max_tokens)


def _identity(letters: Sequence[str]) -> list[ShownChoice]:
    return [ShownChoice(value=x, original_position=i) for i, x in enumerate(letters)]


def _single_letter(letters: str | None) -> str | None:
    """A canonical letter answer naming one letter, else None (several letters, none)."""
    return letters if letters is not None and "," not in letters else None


FORMS: dict[str, AnswerForm] = {f.name: f for f in (LetterForm(), IntegerForm(), StringForm())}
"""Every answer form by name, in detection order (:func:`detect_form`)."""
FORM_NAMES: tuple[str, ...] = tuple(FORMS)
"""The names ``-T answer=`` accepts besides ``auto``."""


def get_form(name: str) -> AnswerForm:
    """The form called ``name``; a clear error for an unknown name."""
    try:
        return FORMS[name]
    except KeyError:
        raise ValueError(f"unknown answer form {name!r}; expected one of {FORM_NAMES}") from None


def detect_form(facts: TaskFacts) -> AnswerForm:
    """The form ``-T answer=auto`` chooses: the first in :data:`FORMS` that detects ``facts``."""
    return next(f for f in FORMS.values() if f.detects(facts))


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
