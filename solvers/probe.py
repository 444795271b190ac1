"""The probe core's solver, and the generic probe as its configuration.

:func:`sweep_solver` is the one truncate-and-force-answer loop of every probe: run a solver
chain, take the trace it wrote (the last assistant message; the prompt is every message before
it), cut its reasoning span and force k answers after each prefix under each prompt a
:class:`SweepPlan` names, then save the plan's record. A probe is a configuration of it: the
chain, the plan (prompts, positions, record), the sampling. The generic probe
(:func:`probe_sweep`) runs the task's own chain, cuts the think block when there is one (see
:mod:`cotaudit.probing.think`) at a :class:`~cotaudit.probing.positions.Schedule`'s positions
under the trace's own prompt and, with ``replay_under``, under another condition's prompt with
the same tokens, and stores the raw answers (:class:`cotaudit.probing.record.ProbeRecord`) with
the target and choices each prompt's answers are verified against (the sibling's for a replay);
the probe scorer verifies them with the task's own scorer. The studies' solvers
(``solvers/selfcommit.py``, ``solvers/trace_tutor.py``) are configurations too.

When the trace is the message a ``generate()`` call of the chain returned, it and its prompt are
taken as that call returned and sent them, so a solver that rewrites the history after
generating (``multiple_choice(shuffle=...)`` writes the unshuffled prompt and "ANSWER: X" back)
does not change what is probed.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Sequence
from copy import deepcopy
from dataclasses import dataclass, field
from itertools import groupby
from typing import Any, Generic, Literal, NamedTuple, Protocol, TypeVar

from inspect_ai.dataset import Sample
from inspect_ai.log import EvalSample
from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ContentReasoning,
    GenerateConfig,
    ModelOutput,
    get_model,
)
from inspect_ai.scorer import Target
from inspect_ai.solver import Choices, Generate, Solver, TaskState, solver

from cotaudit.engine.base import LocalEngine, Message, ProbeEngine
from cotaudit.engine.chat import to_plain
from cotaudit.probing.audit import Judge
from cotaudit.probing.choices import ShownChoice
from cotaudit.probing.exact import (
    Estimator,
    ExactPlan,
    ExactPoint,
    exact_temperature,
    reads_exact,
    samples,
    token_classes,
)
from cotaudit.probing.forcing import ForcedAnswers
from cotaudit.probing.forms import ExactReference, get_form
from cotaudit.probing.positions import Schedule
from cotaudit.probing.record import ContextAnswers, ProbeKind, ProbeRecord
from cotaudit.probing.sentences import capped, sentence_ends
from cotaudit.probing.store_record import StoreRecord
from cotaudit.probing.sweep import Prefixes, fit_to_context
from cotaudit.probing.think import (
    DEFAULT_THINK_CLOSE,
    THINK_OPEN,
    TraceSplit,
    compose_reasoning,
    cut_tag,
    inside_think,
    split_trace,
    token_span,
)
from cotaudit.probing.trajectory import Step, StepMark

from .audit import SweepHeading, force_and_record, probe_span, score_and_record
from .engine import completion_token_ids, probe_engine, state_seed


@dataclass(frozen=True)
class Replay:
    """What a trace is replayed under: the chat prompt, and the sample whose target and choices
    (in the order the prompt shows them) the forced answers are verified against; None: the
    probed sample's own."""

    messages: list[Message]
    sample_id: str | None = None
    target: list[str] | None = None
    choices: list[ShownChoice] | None = None


ReplayPrompt = Callable[[TaskState, str], Awaitable[Replay | list[Message]]]
"""(state, condition) -> what the trace is replayed under: a :class:`Replay`, or a bare prompt
(whose answers are then verified against the probed sample's own target and choices)."""


def shown_choices(choices: Choices) -> list[ShownChoice] | None:
    """A state's choices in the order its prompt shows them (None when it has none)."""
    return [
        ShownChoice(value=c.value, original_position=c.original_position) for c in choices
    ] or None


class _Captured(Exception):
    """Raised by the capturing ``generate`` to stop a solver chain at its first model call."""

    def __init__(self, state: TaskState) -> None:
        self.messages: list[ChatMessage] = list(state.messages)
        self.choices = shown_choices(state.choices)


S = TypeVar("S", Sample, EvalSample)


class Siblings(Generic[S]):
    """Samples by (``pair_key``, ``condition_key``) metadata: the sibling of a sample under
    another condition of the same problem (``where``: the samples' source, named in the error
    when there is none)."""

    def __init__(self, samples: Iterable[S], pair_key: str, condition_key: str, where: str):
        self.pair_key, self.condition_key, self.where = pair_key, condition_key, where
        self.index: dict[tuple[str, str], S] = {}
        for s in samples:
            meta = s.metadata or {}
            if pair_key in meta and condition_key in meta:
                self.index[(str(meta[pair_key]), str(meta[condition_key]))] = s

    def of(self, state: TaskState, condition: str) -> S:
        """The sibling of ``state``'s sample under ``condition``; one clear error without one."""
        pair = (state.metadata or {}).get(self.pair_key)
        sibling = self.index.get((str(pair), condition))
        if sibling is None:
            raise ValueError(
                f"replay_under={condition!r}: sample {state.sample_id!r} has no sibling with "
                f"metadata {self.pair_key}={pair!r} and {self.condition_key}={condition!r} in "
                f"{self.where}"
            )
        return sibling


class SiblingPrompts:
    """Another condition's prompt for the same problem, as the task's own solver chain builds it,
    with that sibling's target and choices.

    The sibling is the dataset sample with the same ``pair_key`` metadata and
    ``condition_key`` = the condition. Its prompt is what the chain sends to its first
    ``generate()`` call (the chain runs on a fresh state of the sibling and is stopped there, no
    model call is made); its choices are the fresh state's at that call, in the order the prompt
    shows them (a chain that shuffles at solve time draws the order then), and its target is the
    sibling's ``Sample.target``."""

    def __init__(
        self, samples: Sequence[Sample], chain: Solver, *, pair_key: str, condition_key: str
    ) -> None:
        self.chain = chain
        self.siblings = Siblings(samples, pair_key, condition_key, "the task's dataset")

    async def __call__(self, state: TaskState, condition: str) -> Replay:
        from inspect_ai._eval.task.util import sample_messages

        sibling = self.siblings.of(state, condition)
        fresh = TaskState(
            model=state.model,
            sample_id=sibling.id or 0,
            epoch=state.epoch,
            input=sibling.input,
            target=Target(sibling.target),
            choices=sibling.choices,
            messages=sample_messages(sibling),
            metadata=dict(sibling.metadata or {}),
        )

        async def capture(state: TaskState, *args: Any, **kwargs: Any) -> TaskState:
            raise _Captured(state)

        try:
            await self.chain(fresh, capture)
        except _Captured as c:
            return Replay(
                messages=to_plain(c.messages),
                sample_id=None if sibling.id is None else str(sibling.id),
                target=list(fresh.target.target),
                choices=c.choices,
            )
        raise ValueError(
            f"replay_under={condition!r}: the task's solver chain never called generate(), so "
            "the prompt it would send under another condition is unknown; pass a replay prompt "
            "function instead"
        )


@dataclass(frozen=True)
class GenerateCall:
    """One ``generate()`` call of the task's chain as the model saw it: the assistant message it
    appended (``returned``, the object in ``state.messages``), copies of that message and of the
    output taken when it returned, and the prompt it was sent (every message before it)."""

    returned: ChatMessage
    message: ChatMessageAssistant
    output: ModelOutput
    prompt: list[Message]


def recording(generate: Generate, calls: list[GenerateCall]) -> Generate:
    """``generate`` that appends a :class:`GenerateCall` to ``calls`` after each call that ends
    with an assistant message."""

    async def call(state: TaskState, *args: Any, **kwargs: Any) -> TaskState:
        state = await generate(state, *args, **kwargs)
        last = state.messages[-1] if state.messages else None
        if isinstance(last, ChatMessageAssistant):
            calls.append(
                GenerateCall(
                    last, deepcopy(last), deepcopy(state.output), to_plain(state.messages[:-1])
                )
            )
        return state

    return call


class Trace(NamedTuple):
    """The chain's trace: the prompt it was written under, the response text, its token ids, the
    think source override (``reasoning_content`` or "") and the generation's stop reason; for a
    recorded trajectory (:mod:`cotaudit.probing.trajectory`) also ``final``, the text its final
    answer is read from (then the whole text is the span: no think block is split off),
    ``steps``, its steps with their character ends in ``text``, and ``submitted``: ``final`` is
    the argument of a ``submit()`` call."""

    prompt: list[Message]
    text: str
    ids: list[int]
    source: Literal["reasoning_content", ""]
    stop_reason: str
    final: str | None = None
    steps: tuple[Step, ...] = ()
    submitted: bool = False
    span: tuple[int, int] | None = None
    """The token span [start, end) of ``ids`` that is cut (the think block when one is), as the
    sweep hands the trace to its planner; None before."""


def trace_of(
    state: TaskState,
    engine: ProbeEngine,
    call: GenerateCall | None = None,
    *,
    reasoning: bool = True,
) -> Trace:
    """The chain's trace: its last assistant message and the messages before it; when that message
    is the one ``call`` returned, the message, output and prompt as that call returned and sent
    them. With ``reasoning``, the message's reasoning parts are composed in before its text
    (:func:`cotaudit.probing.think.compose_reasoning`); without, the trace is its text."""
    idx = next(
        (
            i
            for i in range(len(state.messages) - 1, -1, -1)
            if isinstance(state.messages[i], ChatMessageAssistant)
        ),
        None,
    )
    if idx is None:
        raise ValueError(
            f"sample {state.sample_id!r}: the task's solver chain wrote no assistant message "
            "(the probe needs a generated trace)"
        )
    message, output = state.messages[idx], state.output
    prompt = to_plain(state.messages[:idx])
    if call is not None and call.returned is message:
        message, output, prompt = call.message, call.output, call.prompt
    stop_reason = str(output.stop_reason)
    content = message.content if isinstance(message.content, list) else []
    parts = [c.reasoning for c in content if isinstance(c, ContentReasoning) and not c.redacted]
    if reasoning and parts:
        text = compose_reasoning("\n".join(parts), message.text)
        return Trace(prompt, text, engine.tokenize(text), "reasoning_content", stop_reason)
    if output.completion == message.text and output.choices:
        ids = completion_token_ids(output, engine)
    else:
        ids = engine.tokenize(message.text)
    return Trace(prompt, engine.detokenize(ids), ids, "", stop_reason)


TraceReader = Callable[[TaskState, ProbeEngine, "GenerateCall | None"], Trace]
"""(state after the chain, engine, the chain's last ``generate()`` call) -> the trace to cut
(default :func:`trace_of`)."""


def step_ends(trace: Trace, engine: ProbeEngine, start: int) -> list[int]:
    """Token position, in the span starting at token ``start``, where each of the trace's steps
    ends: the last token ending at or before the step's last character
    (:func:`cotaudit.probing.think.token_span`); [] for a trace without steps."""
    return [
        token_span(trace.ids, engine.detokenize, 0, step.end)[1] - start for step in trace.steps
    ]


def prompt_opens_think(engine: ProbeEngine, prompt: Sequence[Message]) -> bool:
    """The chat template's generation prompt ends inside an open ``<think>`` block."""
    if not isinstance(engine, LocalEngine):
        return False
    return engine.detokenize(engine.render(prompt)).rstrip().endswith(THINK_OPEN)


@dataclass(frozen=True)
class SweptPrompt:
    """One prompt a trace is swept under: its ``name`` (its key in the record and the
    transcript), its messages, and what the transcript says of its answers: ``reference``
    (header fields naming what they are checked against) and ``judge`` (each answer's parsed
    value and verdict, for a solver that reads them; None: verified later by a scorer);
    ``exact``: what the exact estimator checks its answers against (None: not read exactly)."""

    name: str
    messages: list[Message]
    reference: dict[str, Any] = field(default_factory=dict)
    judge: Judge | None = None
    exact: ExactReference | None = None


@dataclass(frozen=True)
class Forced:
    """One round of cuts as forced: per prompt name, the k sampled answers at each position
    (``answers``; empty rows when the estimator samples none) and the exact estimator's points
    (``exact``; only for prompts read exactly)."""

    answers: dict[str, list[list[str]]]
    exact: dict[str, list[ExactPoint]]


class Force(Protocol):
    """Positions t -> the :class:`Forced` answers after prefix t at each (one
    :func:`~cotaudit.solvers.audit.force_and_record` /
    :func:`~cotaudit.solvers.audit.score_and_record` call per prompt: one header per prompt,
    estimator and round). ``closes_think``: the positions lie inside a think block the sweep's
    tag does not close (a recorded trajectory's step), so the closer is fed before the tag."""

    def __call__(self, positions: list[int], closes_think: bool = False) -> Awaitable[Forced]: ...


@dataclass(frozen=True)
class Sweep:
    """One sample's sweep as run: the trace, its split, the span cut (``length`` tokens from
    token ``start`` of the response), the cut tag, whether the span was shortened to fit the
    context, every position forced (``probed``, in order over the rounds) and, per prompt name,
    the k answers at each (``answers[name][i]`` at ``probed[i]``; empty rows when the estimator
    samples none) and, for the prompts read exactly, the exact points (``exact[name][i]``); the
    ``estimator`` and the temperature the exact points were read at (``exact_temperature``);
    ``think_cuts``: the positions forced with the think closer before the tag (a trajectory's
    cuts inside a step's think block)."""

    trace: Trace
    split: TraceSplit
    start: int
    length: int
    tag: str
    context_truncated: bool
    probed: list[int]
    answers: dict[str, list[list[str]]]
    exact: dict[str, list[ExactPoint]]
    estimator: Estimator
    exact_temperature: float
    think_cuts: list[int] = field(default_factory=list)


@dataclass(frozen=True)
class SweepPlan:
    """A probe's configuration for one sample: the prompts the trace is swept under, ``cut``
    (length T of the span, force) -> forces the positions probed, in one or more rounds, and
    ``record`` (the sweep) -> the record saved in the sample's store."""

    prompts: list[SweptPrompt]
    cut: Callable[[int, Force], Awaitable[None]]
    record: Callable[[Sweep], StoreRecord]


Planner = Callable[[TaskState, Trace], Awaitable[SweepPlan]]
"""(state after the chain, its trace) -> the sample's :class:`SweepPlan`."""


def at_schedule(schedule: Schedule) -> Callable[[int, Force], Awaitable[None]]:
    """A ``cut`` forcing, in one round, every position ``schedule`` probes on a span of T
    tokens."""

    async def cut(length: int, force: Force) -> None:
        await force(schedule.probed(length))

    return cut


def closing_think_blocks(
    schedule: Schedule, inside: Callable[[int], bool]
) -> Callable[[int, Force], Awaitable[None]]:
    """A ``cut`` forcing every position ``schedule`` probes, in order, in runs of consecutive
    positions alike: those where ``inside(t)`` (the prefix ends inside a think block) with the
    think closer before the tag, the others without."""

    async def cut(length: int, force: Force) -> None:
        for closes, run in groupby(schedule.probed(length), key=inside):
            await force(list(run), closes_think=closes)

    return cut


def seeded_generate(
    *, max_tokens: int, temperature: float, seed: int, per_epoch: bool = False
) -> Solver:
    """A chain of one model call on the sample's messages (recorded by Inspect as a model call),
    with ``max_tokens``, ``temperature`` and the sample's probe seed mod 2**31
    (:func:`~cotaudit.solvers.engine.state_seed`); its output is appended as the trace."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        config = GenerateConfig(
            max_tokens=max_tokens,
            temperature=temperature,
            seed=state_seed(seed, state, per_epoch=per_epoch) % 2**31,
        )
        state.output = await get_model().generate(state.messages, config=config)
        state.messages.append(state.output.message)
        return state

    return solve


def sweep_solver(
    *,
    chain: Solver,
    plan: Planner,
    forced: ForcedAnswers,
    per_epoch_seed: bool = False,
    think: bool = True,
    think_close: str = DEFAULT_THINK_CLOSE,
    fit_context: bool = True,
    read_trace: TraceReader | None = None,
) -> Solver:
    """The probe core's solver: run ``chain``, take its trace, cut its span and force answers
    after each prefix under each of the plan's prompts (``forced``: k sampled answers, their
    exact probability for each prompt with an ``exact`` reference, or both), then save the
    plan's record.

    The span is the trace's think block (``think``; see :mod:`cotaudit.probing.think`), else
    the whole response; with ``fit_context`` it ends where the longest prompt + prefix + tag +
    answer still fit the model's context (:func:`cotaudit.probing.sweep.fit_to_context`). Each
    answer is forced after ``prompt ++ response[:start + t] ++ tag`` (``tag`` = ``forced.tag``,
    after ``think_close`` inside a think block), seeded with the
    sample's seed (:func:`~cotaudit.solvers.engine.state_seed`) for every prompt (common random
    numbers). Every forced cut is recorded in the sample's transcript, in one span
    (:func:`~cotaudit.solvers.audit.probe_span`).

    Args:
      chain: The solver chain that writes the trace (its ``generate()`` calls are recorded as
        sent and returned, see :func:`trace_of`).
      plan: (state, trace) -> the sample's prompts, cuts and record.
      forced: How answers are forced (tag, k, temperature, token budget, seed, estimator,
        tokenizer).
      per_epoch_seed: The probe seed also mixes the epoch (from epoch 2 on).
      think: Cut the think block (reasoning parts composed in); False: the completion as
        generated, whole.
      think_close: Text closing a think block before the tag.
      fit_context: Shorten the span to fit the model's context (engines that know it).
      read_trace: Reads the trace after the chain (None: :func:`trace_of`; a recorded log's
        reader for a transcript).
    """
    read_at = exact_temperature(forced.temperature)
    estimator = forced.estimator

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        calls: list[GenerateCall] = []
        # the engine first: over a served model (vllm/, sglang/) it makes a dead server fail
        # the chain's own generate() at once instead of being retried for minutes
        engine = probe_engine(get_model(), forced.tokenizer)
        state = await chain(state, recording(generate, calls))
        if state.completed:
            return state
        last_call = calls[-1] if calls else None
        trace = (
            trace_of(state, engine, last_call, reasoning=think)
            if read_trace is None
            else read_trace(state, engine, last_call)
        )
        split = (
            split_trace(
                trace.text,
                opened_by_prompt=prompt_opens_think(engine, trace.prompt),
                source=trace.source or None,
            )
            if think and trace.final is None
            else TraceSplit(
                0, len(trace.text), True, trace.text if trace.final is None else trace.final, "none"
            )
        )
        start, end = (
            token_span(trace.ids, engine.detokenize, split.start, split.end)
            if split.think
            else (0, len(trace.ids))
        )
        tag = cut_tag(forced.tag, inside_think=split.think, think_close=think_close)
        trace = trace._replace(span=(start, end))
        planned = await plan(state, trace)
        fitted, context_truncated = trace.ids[:end], False
        if fit_context:
            for prompt in planned.prompts:
                fitted, cut = fit_to_context(
                    engine, prompt.messages, fitted, tag, forced.max_tokens
                )
                context_truncated |= cut
        end = max(start, len(fitted))
        ids = trace.ids[:end]
        probe_seed = state_seed(forced.seed, state, per_epoch=per_epoch_seed)
        probed: list[int] = []
        think_cuts: list[int] = []
        answers: dict[str, list[list[str]]] = {p.name: [] for p in planned.prompts}
        exact: dict[str, list[ExactPoint]] = {
            p.name: [] for p in planned.prompts if p.exact is not None
        }
        plans: dict[str, ExactPlan] = {}

        def plan_of(prompt: SweptPrompt) -> ExactPlan:
            assert prompt.exact is not None
            if prompt.name not in plans:
                classes = token_classes(engine.vocabulary())
                plans[prompt.name] = prompt.exact.plan(engine.tokenize, classes, forced.max_tokens)
            return plans[prompt.name]

        async def force(positions: list[int], closes_think: bool = False) -> Forced:
            cuts = [start + t for t in positions]
            round_tag = think_close + tag if closes_think else tag
            rows: dict[str, list[list[str]]] = {}
            points: dict[str, list[ExactPoint]] = {}
            for prompt in planned.prompts:
                prefixes = Prefixes(prompt.messages, ids, cuts, round_tag)
                heading = SweepHeading(prompt.name, start, prompt.reference)
                rows[prompt.name] = [[] for _ in positions]
                if samples(estimator):
                    rows[prompt.name] = await force_and_record(
                        engine,
                        prefixes,
                        heading,
                        k=forced.k,
                        max_tokens=forced.max_tokens,
                        temperature=forced.temperature,
                        seed=probe_seed,
                        judge=prompt.judge,
                    )
                answers[prompt.name] += rows[prompt.name]
                if reads_exact(estimator) and prompt.exact is not None:
                    points[prompt.name] = await score_and_record(
                        engine,
                        prefixes,
                        heading,
                        plan_of(prompt),
                        temperature=read_at,
                        max_tokens=forced.max_tokens,
                    )
                    exact[prompt.name] += points[prompt.name]
            probed.extend(positions)
            if closes_think:
                think_cuts.extend(positions)
            return Forced(rows, points)

        async with probe_span():
            await planned.cut(end - start, force)
        sweep = Sweep(
            trace,
            split,
            start,
            end - start,
            tag,
            context_truncated,
            probed,
            answers,
            exact,
            estimator,
            read_at,
            think_cuts,
        )
        planned.record(sweep).save(state.store)
        return state

    return solve


def final_text_of(trace: Trace, tokenizer: str | None) -> str:
    """The trace's final-answer text as the sweep splits it (after its think block; the whole
    response without one): :func:`cotaudit.probing.think.split_trace` with the engine's view of
    whether the prompt opens the block."""
    if trace.final is not None:
        return trace.final
    engine = probe_engine(get_model(), tokenizer)
    return split_trace(
        trace.text,
        opened_by_prompt=prompt_opens_think(engine, trace.prompt),
        source=trace.source or None,
    ).final_text


@solver
def probe_sweep(
    *,
    chain: Solver,
    probe: ProbeKind,
    form: str,
    forced: ForcedAnswers,
    schedule: Schedule,
    think_close: str = DEFAULT_THINK_CLOSE,
    replay_under: str | None = None,
    condition_key: str = "condition",
    replay_prompt: ReplayPrompt | None = None,
    read_trace: TraceReader | None = None,
    verification_lead: str | None = None,
) -> Solver:
    """The generic probe: the core's solver (:func:`sweep_solver`) over the task's own chain,
    its trace's think block cut at ``schedule``'s positions under the trace's own prompt
    (``own``) and, with ``replay_under``, another condition's (``replay``); the raw answers are
    stored as a :class:`~cotaudit.probing.record.ProbeRecord`.

    With the estimator ``exact`` or ``both`` each prompt is also read exactly against its own
    reference (the form's ``target_reference`` of its target and choices for ``trace``, its
    ``final_reference`` of the trace's final answer for ``selfcommit``), and the points are
    stored beside the answers (``p_exact``, ``covered_exact``, ``letters_exact``).

    Args:
      chain: The task's own solver chain (its ``generate()`` calls are recorded as sent and
        returned, see :func:`trace_of`).
      probe: ``trace`` or ``selfcommit`` (recorded; the scorer reads the answers accordingly).
      form: Answer form name (a key of :data:`cotaudit.probing.forms.FORMS`).
      forced: How answers are forced (the tag after each prefix, after ``think_close`` inside
        a think block; k, temperature, token budget, estimator, tokenizer; the seed, which own
        and replayed probes share: common random numbers).
      schedule: Cut positions (stride or fractions, optional zero probe).
      think_close: Text closing a think block before the tag.
      replay_under: Condition whose prompt the trace is also probed under (samples already of
        that condition are probed once).
      condition_key: Sample metadata key naming a sample's condition.
      replay_prompt: (state, condition) -> the prompt to replay under (a :class:`Replay` names
        the target and choices its answers are verified against).
      read_trace: Reads the trace after the chain (None: :func:`trace_of`; a recorded log's
        reader for a transcript, whose steps a ``steps`` schedule cuts after: a trace without
        steps is one step).
      verification_lead: The text forced answers follow in their verification copies (None:
        the form's lead; a trace whose answer was submitted with ``submit()`` uses "", the
        answer alone).
    """
    if replay_under is not None and replay_prompt is None:
        raise ValueError("replay_under needs a replay_prompt function")
    answer_form = get_form(form)
    estimator = forced.estimator

    async def plan(state: TaskState, trace: Trace) -> SweepPlan:
        own_condition = (state.metadata or {}).get(condition_key)
        own = Replay(
            messages=trace.prompt,
            sample_id=str(state.sample_id),
            target=list(state.target.target),
            choices=shown_choices(state.choices),
        )
        unders: list[tuple[Literal["own", "replay"], str | None, Replay]] = [
            ("own", None if own_condition is None else str(own_condition), own)
        ]
        if replay_under is not None and str(own_condition) != replay_under:
            assert replay_prompt is not None
            replay = await replay_prompt(state, replay_under)
            if not isinstance(replay, Replay):
                replay = Replay(messages=list(replay))
            unders.append(("replay", replay_under, replay))
        own_choices = own.choices
        final_text = final_text_of(trace, forced.tokenizer) if probe == "selfcommit" else ""

        def reference(under: Replay) -> ExactReference | None:
            if not reads_exact(estimator):
                return None
            choices = under.choices if under.choices is not None else own_choices
            if probe == "trace":
                target = under.target if under.target is not None else own.target or []
                return answer_form.target_reference(target, choices)
            return answer_form.final_reference(final_text, own_choices, choices)

        references: dict[str, ExactReference | None] = {
            name: reference(under) for name, _, under in unders
        }

        def exact_fields(sweep: Sweep, name: str) -> dict[str, Any]:
            ref = references[name]
            if ref is None:
                return {}
            points = sweep.exact[name]
            return {
                "reference_exact": None if ref.value is None else str(ref.value),
                "p_exact": None if ref.value is None else [p.p for p in points],
                "covered_exact": [p.covered for p in points],
                "letters_exact": ([dict(p.letters or {}) for p in points] if ref.letters else None),
            }

        ends: list[int] = []

        def record(sweep: Sweep) -> ProbeRecord:
            return ProbeRecord(
                probe=probe,
                form=form,
                tag=forced.tag,
                cut_tag=sweep.tag,
                think_source=sweep.split.source,
                think_closed=sweep.split.closed,
                response=sweep.trace.text,
                final_text=sweep.split.final_text,
                trace_tokens=sweep.length,
                offset=sweep.start,
                generation_truncated=sweep.trace.stop_reason == "max_tokens",
                context_truncated=sweep.context_truncated,
                schedule=sample_schedule,
                positions=sample_schedule.positions(sweep.length),
                curve_fractions=sample_schedule.curve_fractions(sweep.length),
                probed=sweep.probed,
                k=forced.k,
                temperature=forced.temperature,
                contexts=[
                    ContextAnswers(
                        name=name,
                        condition=condition,
                        answers=sweep.answers[name] if samples(estimator) else None,
                        sample_id=under.sample_id,
                        target=under.target,
                        choices=under.choices,
                        **exact_fields(sweep, name),
                    )
                    for name, condition, under in unders
                ],
                replay_under=replay_under,
                estimator=estimator,
                exact_temperature=sweep.exact_temperature if reads_exact(estimator) else None,
                steps=[
                    StepMark(kind=step.kind, name=step.name, end=end)
                    for step, end in zip(trace.steps, ends, strict=True)
                ]
                or None,
                think_cuts=sweep.think_cuts or None,
                verification_lead="" if trace.submitted else verification_lead,
            )

        engine = probe_engine(get_model(), forced.tokenizer)
        if trace.steps:
            ends.extend(step_ends(trace, engine, 0))
        prompts = [
            SweptPrompt(
                name,
                under.messages,
                {"condition": condition, "sample_id": under.sample_id}
                | ({"step_ends": ends} if ends else {}),
                exact=references[name],
            )
            for name, condition, under in unders
        ]
        sample_schedule = schedule
        if schedule.kind == "steps":
            sample_schedule = schedule.model_copy(
                update={"steps": tuple(ends) if ends else (len(trace.ids),)}
            )
        elif schedule.kind == "sentences":
            start, stop = trace.span or (0, len(trace.ids))
            sentence_cuts = sentence_ends(trace.ids[start:stop], engine.detokenize)
            sample_schedule = schedule.model_copy(
                update={"steps": tuple(capped(sentence_cuts, schedule.max_cuts)) or (0,)}
            )
        cut = at_schedule(sample_schedule)
        if any(THINK_OPEN in step.text for step in trace.steps):  # reasoning inside the steps
            cut = closing_think_blocks(
                sample_schedule, lambda t: inside_think(engine.detokenize(trace.ids[:t]))
            )
        return SweepPlan(prompts, cut, record)

    return sweep_solver(
        chain=chain,
        plan=plan,
        forced=forced,
        think_close=think_close,
        read_trace=read_trace,
    )
