"""The exact estimator of a forced answer: its probability read by teacher forcing, not sampled.

After a prefix and the forced-answer tag, the model's next tokens are a distribution over answer
texts. The sampled estimator draws k of them and counts how many parse to the reference answer;
the exact estimator reads the probability of that event, under the same distribution
(softmax(logits / T)), by scoring a fixed set of answer *forms*: token paths that parse to the
reference whatever follows them, each ended by a token that cannot continue the answer.

    p_exact(t) = sum over forms f, endings e of  P(path_f | prefix_t, tag) * P(e | ... path_f)

Every counted text parses to the reference, and the counted events are disjoint (no counted
path is another one's prefix followed by an ending it counts), so p_exact is a lower bound on the
probability the sampled estimator estimates. ``covered`` is the mass of forced answers that
*begin* in an enumerated form of any answer (any integer, any of the letters): 1 - covered is
the mass the forms leave out (answers that start with words, say), so the sampled rate lies in
[p_exact, p_exact + (1 - covered)] up to the unclean endings of enumerated starts.

The plans (an answer form's entry in :data:`cotaudit.probing.forms.FORMS` names its plan in
``exact_plan``), with the parsers they count by (:func:`cotaudit.answers.extract_forced_answer`
for :func:`integer_plan`, :func:`cotaudit.probing.forms.extract_letter` for :func:`letter_plan`,
:func:`cotaudit.probing.forms.extract_string` for :func:`string_plan`):

- **integer** N (written ``s`` = its decimal text, and ``1,234`` grouped from 1000 on): the
  paths ``s``, ``$s`` and ``\\boxed{s``, each ended by a token after which the first number
  read is N (:func:`number_ends`: a letter, a line break, ``}``, most punctuation, the end of
  the generation; not a digit, an operator, ``x`` or ``e`` starting one, a space before a digit),
  or by ``.`` / ``,`` then a token that starts no digit. ``covered`` = P(the answer starts with
  a digit, ``$``, ``-`` or ``\\boxed{`` and then a digit). Approximations (documented): a line
  break ends a number (an operator at the start of the next line is not looked at), and a later
  ``\\boxed{}`` holding another number is not looked at.
- **letter** L (the sample's choices A, B, ...): the first token being ``L`` or `` L``
  (whatever follows). Every letter is one token, so the distribution over the letters is read
  exactly and in full (``letters``); ``covered`` = its sum.
- **string** (a canonical short answer): its written forms (as the target writes it, lower
  case, capitalised) ended by the end of the generation or a line break, or by punctuation then
  one of those (the canonical form drops punctuation and reads the first line). Only the
  reference is enumerated, so ``covered`` = p_exact.

Branches of the forms whose first token has probability below :data:`PRUNE_BELOW` at every cut
of a request are not scored (the engines may skip them): p_exact then loses less than
PRUNE_BELOW per such branch (at most a few per answer) and stays a lower bound.

The answer budget (``max_tokens``) counts as the sampled answers do: a path that fills it is
counted whole (P(path): the answer ends there, so nothing follows it), a shorter one with its
ending, a longer one not at all.
"""

from __future__ import annotations

import math
import string as _string
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Literal

from cotaudit.engine.base import (
    AnswerScoreRequest,
    AnswerScores,
    AnswerTree,
    Message,
    Vocabulary,
)

OPERATORS = "+-*/×÷^"
"""Characters that make a number next to them an operand (as :mod:`cotaudit.answers` reads)."""
INTEGER_OPENERS = ("", "$", "\\boxed{")
"""What an integer form writes before the number."""
COVERAGE_OPENERS = ("", "$", "-", "\\boxed{")
"""Starts of an integer answer counted in ``covered`` (each followed by a digit)."""
PRUNE_BELOW = 1e-5
"""A branch of the answer tree whose first token is less likely than this at every cut may go
unscored (see :class:`cotaudit.engine.base.AnswerScoreRequest`)."""
_PUNCTUATION = frozenset(_string.punctuation)


def _decimal(ch: str) -> bool:
    return ch.isdecimal()


def number_ends(text: str) -> bool:
    """Whether a token with this text, right after a complete number, leaves the first number
    read from the answer unchanged whatever follows (the number ends there).

    Not an ending: a digit (the number goes on), ``.``/``,`` then a digit, ``.``/``,`` alone
    (the next token decides: see :class:`ExactPlanner`), an operator (the number becomes an
    operand), ``x``/``X``/``e``/``E`` not followed by a letter (times, scientific notation),
    ``$``, a token holding a partial character, whitespace with no line break before a digit,
    ``.digit``, a lone ``.`` or ``,``, an operator, ``$`` or a lone ``x``. An ending: a letter,
    a line break, ``}``, ``)``, ``%`` and other punctuation, whitespace then a word."""
    if not text or "\ufffd" in text:
        return False
    c = text[0]
    if _decimal(c) or c in OPERATORS or c == "$":
        return False
    if c in ".,":
        return len(text) > 1 and not _decimal(text[1])
    if c in "xXeE":
        return len(text) > 1 and text[1].isalpha()
    if c.isspace():
        rest = text.lstrip()
        breaks = "\n" in text[: len(text) - len(rest)]
        decimal_point = rest[:1] == "." and _decimal(rest[1:2] or "x")
        if not rest or _decimal(rest[0]) or rest in (".", ",") or decimal_point:
            return breaks
        if rest[0] in OPERATORS or rest[0] == "$":
            return False
        if rest[0] in "xX" and not rest[1:2].isalpha():
            return False
        return True
    return True


def after_separator_ends(text: str) -> bool:
    """Whether a token after a number and a lone ``.`` or ``,`` ends the number: it starts with
    no digit (``18.`` then ``5`` is 18.5, ``18,`` then ``000`` is 18000)."""
    return bool(text) and "\ufffd" not in text and not _decimal(text[0])


def string_ends(text: str) -> bool:
    """Whether a token after a short answer ends its first line: a line break, after nothing
    but spaces and punctuation."""
    if "\ufffd" in text:
        return False
    head = text.split("\n", 1)
    return len(head) == 2 and all(ch.isspace() or ch in _PUNCTUATION for ch in head[0])


def string_pauses(text: str) -> bool:
    """Punctuation (and spaces) only, no line break: the next token decides whether the line
    ends there."""
    return bool(text.strip()) and all(ch in _PUNCTUATION or ch in " \t" for ch in text)


@dataclass(frozen=True)
class TokenClasses:
    """The vocabulary's tokens sorted by what they do after an answer (ids as frozensets)."""

    digit_start: frozenset[int]
    number_end: frozenset[int]
    separators: frozenset[int]
    after_separator: frozenset[int]
    string_end: frozenset[int]
    string_pause: frozenset[int]
    texts: tuple[str, ...]

    @classmethod
    def of(cls, vocab: Vocabulary) -> TokenClasses:
        """Classify every token by its text; the end-of-sequence ids end every answer."""
        texts, eos = vocab.texts, vocab.eos_ids

        def ids(pred: Callable[[str], bool]) -> frozenset[int]:
            return frozenset(i for i, t in enumerate(texts) if i not in eos and pred(t))

        return cls(
            digit_start=ids(lambda t: bool(t) and _decimal(t[0])),
            number_end=ids(number_ends) | eos,
            separators=ids(lambda t: t in (".", ",")),
            after_separator=ids(after_separator_ends) | eos,
            string_end=ids(string_ends) | eos,
            string_pause=ids(string_pauses),
            texts=texts,
        )

    def letter_ids(self, letter: str) -> frozenset[int]:
        """Tokens that write the letter: ``L`` or `` L``."""
        return frozenset(i for i, t in enumerate(self.texts) if t in (letter, " " + letter))


@cache
def _classes(vocab: Vocabulary) -> TokenClasses:
    return TokenClasses.of(vocab)


def token_classes(vocab: Vocabulary) -> TokenClasses:
    """:meth:`TokenClasses.of`, computed once per vocabulary."""
    return _classes(vocab)


@dataclass(frozen=True)
class ExactPoint:
    """The exact estimator at one prefix: ``p`` = P(the forced answer parses to the reference)
    (a lower bound, see the module docstring), ``covered`` = the mass of answers that begin in
    an enumerated form of any answer, and for letters the whole distribution ``letters``."""

    p: float
    covered: float
    letters: dict[str, float] | None = None


@dataclass
class ExactPlan:
    """The tree of answer paths to score after each prefix and how to add up its scores.

    ``p_reads`` / ``covered_reads`` index ``reads``; each read (node, set) contributes
    P(path to node) * P(next in set | path), so p = sum over ``p_reads`` (plus P(path) of each
    node in ``p_paths``: paths that fill the answer budget) and covered = sum over
    ``covered_reads`` (each counted once)."""

    tokens: list[int] = field(default_factory=list)
    parents: list[int] = field(default_factory=list)
    token_sets: list[frozenset[int]] = field(default_factory=list)
    reads: list[tuple[int, int]] = field(default_factory=list)
    p_reads: list[int] = field(default_factory=list)
    p_paths: list[int] = field(default_factory=list)
    covered_reads: list[int] = field(default_factory=list)
    letter_reads: dict[str, int] = field(default_factory=dict)
    covered_is_p: bool = False

    def node(self, path: Sequence[int]) -> int:
        """The node at the end of ``path`` (added where missing); -1 for the empty path."""
        node = -1
        for tok in path:
            child = next(
                (
                    i
                    for i in range(len(self.tokens))
                    if self.parents[i] == node and self.tokens[i] == tok
                ),
                None,
            )
            if child is None:
                self.tokens.append(tok)
                self.parents.append(node)
                child = len(self.tokens) - 1
            node = child
        return node

    def read(self, node: int, token_set: frozenset[int]) -> int:
        """The index of read (node, set), added where missing."""
        if token_set not in self.token_sets:
            self.token_sets.append(token_set)
        entry = (node, self.token_sets.index(token_set))
        if entry not in self.reads:
            self.reads.append(entry)
        return self.reads.index(entry)

    def count(self, into: list[int], node: int, token_set: frozenset[int]) -> None:
        """Count read (node, set) in ``into`` once."""
        r = self.read(node, token_set)
        if r not in into:
            into.append(r)

    @property
    def tree(self) -> AnswerTree:
        return AnswerTree(tuple(self.tokens), tuple(self.parents))

    def request(
        self,
        messages: Sequence[Message],
        cot_token_ids: Sequence[int],
        positions: Sequence[int],
        tag: str,
        temperature: float,
    ) -> AnswerScoreRequest:
        """The engine request scoring this plan after each position."""
        return AnswerScoreRequest(
            messages=messages,
            cot_token_ids=cot_token_ids,
            positions=positions,
            tag=tag,
            tree=self.tree,
            token_sets=tuple(self.token_sets),
            reads=tuple(self.reads),
            temperature=temperature,
            prune_below=PRUNE_BELOW,
        )

    def path_logprob(self, scores: AnswerScores, node: int) -> float:
        """log P(path to ``node``) = the sum of its nodes' log-probabilities."""
        total = 0.0
        while node >= 0:
            total += scores.node_logprobs[node]
            node = self.parents[node]
        return total

    def mass(self, scores: AnswerScores, reads: Sequence[int]) -> float:
        """sum over ``reads`` of P(path to node) * P(next in set | path)."""
        return math.fsum(
            math.exp(self.path_logprob(scores, self.reads[r][0])) * scores.read_masses[r]
            for r in reads
        )

    def point(self, scores: AnswerScores) -> ExactPoint:
        """The estimator at one prefix from the engine's scores."""
        p = self.mass(scores, self.p_reads) + math.fsum(
            math.exp(self.path_logprob(scores, node)) for node in self.p_paths
        )
        letters = (
            {name: self.mass(scores, [r]) for name, r in self.letter_reads.items()}
            if self.letter_reads
            else None
        )
        covered = p if self.covered_is_p else self.mass(scores, self.covered_reads)
        return ExactPoint(p=p, covered=covered, letters=letters)

    def count_form(self, path: Sequence[int], ending: frozenset[int], max_tokens: int) -> bool:
        """Count ``path`` then a token of ``ending`` (a path that fills ``max_tokens``: the path
        alone); False when it does not fit (nothing counted) or leaves no room after it."""
        if not path or len(path) > max_tokens:
            return False
        node = self.node(path)
        if len(path) == max_tokens:
            if node not in self.p_paths:
                self.p_paths.append(node)
            return False
        self.count(self.p_reads, node, ending)
        return True

    def check_disjoint(self) -> None:
        """Raise when a counted event contains another: a counted path that extends another
        counted read's path through a token that read counts."""
        for a in self.p_reads:
            node_a, set_a = self.reads[a]
            path_a = self.tree.path(node_a)
            for b in self.p_reads:
                if a == b:
                    continue
                path_b = self.tree.path(self.reads[b][0])
                if len(path_b) > len(path_a) and path_b[: len(path_a)] == path_a:
                    if path_b[len(path_a)] in self.token_sets[set_a]:
                        raise ValueError(
                            f"exact plan: forms overlap (path {path_b} is counted inside "
                            f"{path_a}'s ending)"
                        )


def integer_texts(value: int) -> list[str]:
    """The decimal texts of an integer a form writes: ``18``; ``1234`` and ``1,234``."""
    digits = str(abs(value))
    texts = [digits]
    if abs(value) >= 1000:
        texts.append(f"{abs(value):,}")
    sign = "-" if value < 0 else ""
    return [sign + t for t in texts]


def integer_plan(
    reference: int | None,
    tokenize: Callable[[str], list[int]],
    classes: TokenClasses,
    max_tokens: int,
) -> ExactPlan:
    """The plan of an integer answer (see the module docstring); with no reference only
    ``covered`` is read (p = 0)."""
    plan = ExactPlan()
    for opener in COVERAGE_OPENERS:
        path = tokenize(opener) if opener else []
        if len(path) < max_tokens:
            plan.count(plan.covered_reads, plan.node(path), classes.digit_start)
    if reference is not None:
        for opener in INTEGER_OPENERS:
            for number in integer_texts(reference):
                path = tokenize(opener + number)
                if plan.count_form(path, classes.number_end, max_tokens):
                    for sep in sorted(classes.separators):
                        plan.count_form([*path, sep], classes.after_separator, max_tokens)
    plan.check_disjoint()
    return plan


def letter_plan(reference: str | None, letters: Sequence[str], classes: TokenClasses) -> ExactPlan:
    """The plan of a multiple-choice answer: the first token's mass on each letter; p = the
    reference letter's (None or several letters: p = 0)."""
    plan = ExactPlan()
    for letter in letters:
        ids = classes.letter_ids(letter)
        if not ids:
            raise ValueError(f"exact plan: the tokenizer writes letter {letter!r} with no token")
        r = plan.read(-1, ids)
        plan.letter_reads[letter] = r
        if r not in plan.covered_reads:
            plan.covered_reads.append(r)
        if letter == reference:
            plan.p_reads.append(r)
    return plan


def string_forms(reference: str, written: Sequence[str] = ()) -> list[str]:
    """Written forms of a short answer: as given in ``written`` (e.g. the target), the canonical
    text, and it capitalised and in title case; duplicates dropped, order kept."""
    forms = [*written, reference, reference.capitalize(), reference.title()]
    return list(dict.fromkeys(f for f in forms if f))


def string_plan(
    reference: str | None,
    written: Sequence[str],
    tokenize: Callable[[str], list[int]],
    classes: TokenClasses,
    max_tokens: int,
) -> ExactPlan:
    """The plan of a short string answer (see the module docstring); covered = p."""
    plan = ExactPlan(covered_is_p=True)
    if reference is None:
        return plan
    for form in string_forms(reference, written):
        path = tokenize(form)
        if plan.count_form(path, classes.string_end, max_tokens):
            for pause in sorted(classes.string_pause):
                if classes.texts[pause] in (".", "!", "?"):
                    plan.count_form([*path, pause], classes.string_end, max_tokens)
    plan.check_disjoint()
    return plan


Estimator = Literal["sampled", "exact", "both"]
ESTIMATORS: tuple[str, ...] = ("sampled", "exact", "both")
"""How a probe reads the forced answers: ``sampled`` (k answers drawn, the study's own),
``exact`` (their distribution read by teacher forcing), ``both``."""


def samples(estimator: str) -> bool:
    """Whether ``estimator`` draws the sampled answers."""
    return estimator in ("sampled", "both")


def reads_exact(estimator: str) -> bool:
    """Whether ``estimator`` reads the exact probabilities."""
    return estimator in ("exact", "both")


def exact_temperature(temperature: float) -> float:
    """The temperature the exact estimator reads the distribution at: the sampled estimator's,
    and 1 where it decodes greedily (temperature 0: a greedy answer has probability 0 or 1,
    so the exact estimator reports the model's own distribution, softmax(logits))."""
    return temperature if temperature > 0 else 1.0
