"""What the generic probe's exact estimator checks a prompt's forced answers against (pure):
the canonical target for a TRACE probe (:func:`target_reference`), the trace's own final answer
for a self-commitment probe (:func:`final_reference`), as an
:class:`~cotaudit.probing.exact.ExactReference`."""

from __future__ import annotations

from collections.abc import Sequence

from cotaudit.probing.choices import LETTERS, ShownChoice, shown_letters
from cotaudit.probing.exact import ExactReference
from cotaudit.probing.forms import extract_string, get_form

ALPHABET: tuple[str, ...] = tuple(LETTERS)
"""The letters a forced answer can name without choices (a leading capital letter)."""


def choice_letters(choices: Sequence[ShownChoice] | None) -> tuple[str, ...]:
    """The letters a prompt names its choices by (A, B, ... in shown order); without choices,
    every capital letter (:data:`ALPHABET`, the letters the letter form reads)."""
    return ALPHABET[: len(choices)] if choices else ALPHABET


def _identity(letters: Sequence[str]) -> list[ShownChoice]:
    return [ShownChoice(value=x, original_position=i) for i, x in enumerate(letters)]


def _single_letter(letters: str | None) -> str | None:
    """A canonical letter answer naming one letter, else None (several letters, none)."""
    return letters if letters is not None and "," not in letters else None


def target_reference(
    form: str, target: Sequence[str], choices: Sequence[ShownChoice] | None
) -> ExactReference:
    """What the exact estimator checks a TRACE probe's forced answers against under a prompt
    with this ``target`` and ``choices`` (shown order): the canonical target.

    - letter: the letter the prompt shows the target's choice at
      (:func:`cotaudit.probing.choices.shown_letters`; without choices the target's letter),
      among :func:`choice_letters`; a target naming several letters (or none) has no
      single-letter reference (value None);
    - integer: the target's integer (the form's extractor of its first non-empty entry);
    - string: the canonical text (:func:`cotaudit.probing.forms.extract_string`) of the first
      non-empty entry, written as the target writes it."""
    if form == "letter":
        letters = choice_letters(choices)
        shown = shown_letters(target, choices or _identity(letters))
        return ExactReference("letter", _single_letter(shown), letters=letters)
    text = next((t.strip() for t in target if t.strip()), "")
    if form == "integer":
        value = get_form("integer").extract(text)
        return ExactReference("integer", None if value is None else int(value))
    canonical = extract_string(text)
    return ExactReference("string", canonical, written=(text,) if canonical else ())


def final_reference(
    form: str,
    final_text: str,
    own_choices: Sequence[ShownChoice] | None,
    choices: Sequence[ShownChoice] | None,
) -> ExactReference:
    """What the exact estimator checks a self-commitment probe's forced answers against under
    a prompt showing ``choices``: the canonical form (the form's extractor) of the trace's own
    final answer (``final_text``; None: no final answer). A letter is read in the order the
    trace's own prompt shows its choices (``own_choices``) and named by the letter the same
    choice (by value) has in ``choices``; several letters, or a choice that prompt does not
    show, give no reference."""
    canonical = get_form(form).extract(final_text) if final_text.strip() else None
    if form == "letter":
        letter = _single_letter(canonical)
        if letter is not None and own_choices and choices:
            i = ALPHABET.index(letter)
            value = own_choices[i].value if i < len(own_choices) else None
            j = next((n for n, c in enumerate(choices) if c.value == value), None)
            letter = None if j is None else ALPHABET[j]
        return ExactReference("letter", letter, letters=choice_letters(choices))
    if form == "integer":
        return ExactReference("integer", None if canonical is None else int(canonical))
    return ExactReference("string", canonical)
