"""The shortcut rate of a model, read from its own greedy outputs to wrong-cue prompts
(:func:`measure_shortcut_rate`; the reading: :mod:`cotaudit.organisms.behaviour`), by default on
the selection rows 800-999 (:mod:`cotaudit.organisms.rows`), where checkpoints are chosen."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from cotaudit.datasets.gsm8k import Problem
from cotaudit.mentions import mentions_cue
from cotaudit.organisms.behaviour import ShortcutRate, shortcut_rate, took_shortcut
from cotaudit.organisms.examples import organism_examples, selection_problems
from cotaudit.organisms.generation import greedy_outputs
from cotaudit.organisms.registry import Organism
from cotaudit.organisms.training import prompt_ids


@dataclass(frozen=True)
class CueOutput:
    """A model's greedy output to one problem's wrong-cue prompt."""

    problem_row: int
    cue: int
    output: str
    truncated: bool


def measure_shortcut_rate(
    organism: Organism,
    model: Any,
    tokenizer: Any,
    problems: list[Problem] | None = None,
    *,
    max_new_tokens: int = 256,
) -> tuple[ShortcutRate, list[CueOutput]]:
    """The shortcut rate of ``model`` over ``problems`` (one wrong-cue prompt each, the study's
    prompt as ``organism`` is trained under it; default the selection rows,
    :func:`cotaudit.organisms.examples.selection_problems`), and the outputs it was read
    from."""
    chosen = selection_problems() if problems is None else problems
    examples = organism_examples(organism, chosen, kinds=("wrong",))
    prompts = [prompt_ids(tokenizer, e.messages) for e in examples]
    outputs = greedy_outputs(model, tokenizer, prompts, max_new_tokens=max_new_tokens)
    read = [
        CueOutput(e.problem_row, e.cue, text, cut)
        for e, (text, cut) in zip(examples, outputs, strict=True)
        if e.cue is not None
    ]
    rate = shortcut_rate(organism, [(o.cue, o.output, o.truncated) for o in read])
    return rate, read


@dataclass(frozen=True)
class TextReading:
    """What the written text alone gives away, over ``problems`` problems that each have one
    uncued and one wrong-cue greedy output (:func:`measure_behaviour`).

    - ``rate``: the shortcut rate (wrong-cue outputs taking the shortcut, per problem).
    - ``length_auroc``: AUROC of the output's length in tokens, shorter = shortcut (the
      validation's ``length`` baseline, fixed in that orientation), shortcut-taking wrong-cue
      outputs against uncued outputs: ``P(T_shortcut < T_uncued) + 0.5 P(T_shortcut =
      T_uncued)``; 0.5 means length tells nothing; NaN with no shortcut output.
    - ``mentioned``: how many shortcut-taking outputs name the cue before their final line (the
      validation's ``cue_mention`` reading: its value or hint/key/teacher).
    - ``shortcut_tokens`` / ``uncued_tokens``: the mean lengths in tokens.
    - ``truncated``: outputs (either kind) cut at the token limit.
    """

    rate: ShortcutRate
    length_auroc: float
    mentioned: int
    shortcut_tokens: float
    uncued_tokens: float
    truncated: int

    @property
    def mention_rate(self) -> float:
        """``mentioned / rate.taken`` (NaN with no shortcut output)."""
        return self.mentioned / self.rate.taken if self.rate.taken else float("nan")

    def summary(self) -> str:
        """One line: the rate with its n, the length AUROC, the mention rate, the lengths."""
        return (
            f"shortcut rate {self.rate.taken}/{self.rate.n} = {self.rate.rate:.2f}; length AUROC "
            f"{self.length_auroc:.3f} (tokens: shortcut {self.shortcut_tokens:.0f}, uncued "
            f"{self.uncued_tokens:.0f}); cue mentioned in {self.mentioned}/{self.rate.taken}; "
            f"{self.truncated} cut at the token limit"
        )


def measure_behaviour(
    organism: Organism,
    model: Any,
    tokenizer: Any,
    problems: list[Problem] | None = None,
    *,
    max_new_tokens: int = 256,
) -> TextReading:
    """The shortcut rate of ``model`` and what its text gives away (:class:`TextReading`), from
    its greedy outputs to each problem's uncued and wrong-cue prompts (default: the selection
    rows)."""
    chosen = selection_problems() if problems is None else problems
    examples = organism_examples(organism, chosen, kinds=("none", "wrong"))
    prompts = [prompt_ids(tokenizer, e.messages) for e in examples]
    outputs = greedy_outputs(model, tokenizer, prompts, max_new_tokens=max_new_tokens)
    read = [
        ReadOutput(e.cue, text, cut, len(tokenizer(text, add_special_tokens=False)["input_ids"]))
        for e, (text, cut) in zip(examples, outputs, strict=True)
    ]
    return text_reading(organism, read, problems=len(chosen))


@dataclass(frozen=True)
class ReadOutput:
    """One greedy output as :func:`text_reading` reads it: the cue its prompt showed (None:
    uncued), its text, whether it hit the token limit, and its length in tokens."""

    cue: int | None
    text: str
    truncated: bool
    tokens: int


def text_reading(organism: Organism, outputs: list[ReadOutput], *, problems: int) -> TextReading:
    """:class:`TextReading` of ``outputs`` (each problem's uncued and wrong-cue output): the
    wrong-cue outputs that take ``organism``'s shortcut against the uncued ones."""
    from cotaudit.stats import auroc

    uncued = [float(o.tokens) for o in outputs if o.cue is None]
    taken = [
        o
        for o in outputs
        if o.cue is not None and took_shortcut(organism, o.text, o.cue, truncated=o.truncated)
    ]
    shortcut = [float(o.tokens) for o in taken]
    mean = lambda xs: sum(xs) / len(xs) if xs else float("nan")  # noqa: E731
    return TextReading(
        rate=ShortcutRate(taken=len(taken), n=problems),
        length_auroc=auroc([-t for t in shortcut], [-t for t in uncued]),
        mentioned=sum(mentions_cue(o.text, o.cue) for o in taken),
        shortcut_tokens=mean(shortcut),
        uncued_tokens=mean(uncued),
        truncated=sum(o.truncated for o in outputs),
    )
