"""What a probe recorded for one sample: the solver writes it, the scorer and reports read it."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import BaseModel

from cotaudit.probing.choices import ShownChoice
from cotaudit.probing.exact import Estimator
from cotaudit.probing.positions import Schedule
from cotaudit.probing.store_record import StoreRecord
from cotaudit.probing.trajectory import StepMark

STORE_KEY = "probe"
"""Key of the record in Inspect's sample store."""

ProbeKind = Literal["trace", "selfcommit"]
PROBE_KINDS: tuple[str, ...] = ("trace", "selfcommit")


class ContextAnswers(BaseModel):
    """Forced answers under one prompt: ``own`` (the prompt the trace was written under) or
    ``replay`` (another condition's prompt, same trace tokens). ``answers[i]`` holds the k raw
    continuations after the tag at ``ProbeRecord.probed[i]`` (None: the estimator sampled none).

    ``target`` and ``choices`` are what the answers are verified against: the target of the
    sample whose prompt they were forced under (``sample_id``; for ``replay`` the sibling) and
    its choices in the order that prompt shows them. None: the probed sample's own.

    The exact estimator (:mod:`cotaudit.probing.exact`; None where it was not run):
    ``reference_exact`` is the canonical answer its probabilities are read against (the target's
    for ``trace``, the trace's own final answer's for ``selfcommit``; a letter as this prompt
    shows it) and ``p_exact[i]`` = P(a forced answer at ``probed[i]`` parses to it), a lower
    bound (the TRACE pass probability p(t), the self-commitment c(t)); None when there is no
    single reference (a target naming several letters, a trace with no final answer).
    ``covered_exact[i]`` is the mass of forced answers that begin in an enumerated form of any
    answer; ``letters_exact[i]`` (letter form) the whole distribution over the choice letters."""

    name: Literal["own", "replay"]
    condition: str | None = None
    answers: list[list[str]] | None
    sample_id: str | None = None
    target: list[str] | None = None
    choices: list[ShownChoice] | None = None
    reference_exact: str | None = None
    p_exact: list[float] | None = None
    covered_exact: list[float] | None = None
    letters_exact: list[dict[str, float]] | None = None


class ProbeRecord(StoreRecord):
    """One sample's truncate-and-force-answer sweep.

    The trace is the reasoning span of the response (the think block when there is one):
    ``trace_tokens`` = T tokens, starting ``offset`` tokens into the response. Prefix t is the
    response's first ``offset + t`` tokens followed by ``cut_tag`` (``tag``, after the think
    closer when inside a think block).

    ``steps`` (a recorded trajectory's, None for a single response): each step's kind, tool and
    the token position in the span where it ends (a cut there keeps the steps up to it);
    ``think_cuts``: the positions inside a step's think block, where the think closer was fed
    before ``cut_tag`` (None: none).

    ``verification_lead``: the text a forced answer follows in its verification copy when not
    the form's lead: "" for a trajectory that submits its answer with ``submit()`` (the scorer
    reads the answer alone, as the agent submitted it), a scorer's answer-pattern prefix
    (:func:`cotaudit.probing.forms.pattern_lead`); None: the form's lead.

    ``estimator`` says how the forced answers were read (``sampled``: k answers per prefix,
    ``exact``: their probability by teacher forcing, ``both``) and ``exact_temperature`` the
    temperature the exact probabilities were read at (None without them).
    """

    store_key: ClassVar[str] = STORE_KEY
    solver: ClassVar[str] = "probe_sweep"
    scorer: ClassVar[str] = "probe_scorer"

    probe: ProbeKind
    form: str
    tag: str
    cut_tag: str
    think_source: str
    think_closed: bool
    response: str
    final_text: str
    trace_tokens: int
    offset: int
    generation_truncated: bool
    context_truncated: bool
    schedule: Schedule
    positions: list[int]
    curve_fractions: list[float]
    probed: list[int]
    k: int
    temperature: float
    contexts: list[ContextAnswers]
    replay_under: str | None = None
    estimator: Estimator = "sampled"
    exact_temperature: float | None = None
    steps: list[StepMark] | None = None
    think_cuts: list[int] | None = None
    verification_lead: str | None = None

    def context(self, name: str) -> ContextAnswers | None:
        return next((c for c in self.contexts if c.name == name), None)
