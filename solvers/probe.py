"""The probe core's solver, and the generic probe as its configuration.

:func:`sweep_solver` is the one truncate-and-force-answer loop of every probe: run a solver
chain, take the trace it wrote (the last assistant message; the prompt is every message before
it), cut its reasoning span and force k answers after each prefix under each prompt a
:class:`~cotaudit.probing.sweep_plan.SweepPlan` names
(:class:`~cotaudit.probing.forcing_loop.ForcingLoop`), then save the plan's record. A probe is a
configuration of it: the chain, the plan (prompts, positions, record), the sampling. The generic
probe (:func:`probe_sweep`) runs the task's own chain, cuts the think block when there is one
(see :mod:`cotaudit.probing.think`) at a :class:`~cotaudit.probing.positions.Schedule`'s
positions under the trace's own prompt and, with ``replay_under``, under another condition's
prompt with the same tokens, and stores the raw answers
(:class:`cotaudit.probing.record.ProbeRecord`) with the target and choices each prompt's answers
are verified against (the sibling's for a replay;
:class:`~cotaudit.probing.probe_plan.ProbePlanner`); the probe scorer verifies them with the
task's own scorer. The studies' solvers (``solvers/selfcommit.py``, ``solvers/trace_tutor.py``)
are configurations too.

When the trace is the message a ``generate()`` call of the chain returned, it and its prompt are
taken as that call returned and sent them, so a solver that rewrites the history after
generating (``multiple_choice(shuffle=...)`` writes the unshuffled prompt and "ANSWER: X" back)
does not change what is probed.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Sequence
from copy import deepcopy
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

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

from cotaudit.engine.base import Message, ProbeEngine
from cotaudit.engine.chat import to_plain
from cotaudit.probing.choices import ShownChoice
from cotaudit.probing.forcing import ForcedAnswers
from cotaudit.probing.forcing_loop import ForcingLoop, SweepSpan
from cotaudit.probing.positions import Schedule
from cotaudit.probing.probe_plan import ProbePlanner, Replay, Under
from cotaudit.probing.record import ProbeKind
from cotaudit.probing.sweep_plan import SweepPlan
from cotaudit.probing.think import DEFAULT_THINK_CLOSE, compose_reasoning
from cotaudit.probing.trace import Trace, final_text

from .audit import probe_span, record_event
from .engine import completion_token_ids, probe_engine, state_seed

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


Planner = Callable[[TaskState, Trace], Awaitable[SweepPlan]]
"""(state after the chain, its trace) -> its :class:`~cotaudit.probing.sweep_plan.SweepPlan`."""


@dataclass(frozen=True)
class SweepSolver:
    """The probe core's solver on one sample (its settings: :func:`sweep_solver`'s)."""

    chain: Solver
    plan: Planner
    forced: ForcedAnswers
    per_epoch_seed: bool
    think: bool
    think_close: str
    fit_context: bool
    read_trace: TraceReader | None

    async def run(self, state: TaskState, generate: Generate) -> TaskState:
        """Run the chain, take its trace, sweep it as the sample's plan says (every forced cut
        in the sample's transcript, in one :func:`~cotaudit.solvers.audit.probe_span`) and save
        the plan's record in the sample's store."""
        calls: list[GenerateCall] = []
        # the engine first: over a served model (vllm/, sglang/) it makes a dead server fail
        # the chain's own generate() at once instead of being retried for minutes
        engine = probe_engine(get_model(), self.forced.tokenizer)
        state = await self.chain(state, recording(generate, calls))
        if state.completed:
            return state
        last_call = calls[-1] if calls else None
        trace = (
            trace_of(state, engine, last_call, reasoning=self.think)
            if self.read_trace is None
            else self.read_trace(state, engine, last_call)
        )
        span = SweepSpan.of(
            engine, trace, think=self.think, think_close=self.think_close, tag=self.forced.tag
        )
        trace = trace._replace(span=(span.start, span.end))
        planned = await self.plan(state, trace)
        if self.fit_context:
            span = span.fitted(engine, planned.prompts, trace.ids, self.forced.max_tokens)
        loop = ForcingLoop(
            engine,
            planned.prompts,
            trace.ids[: span.end],
            span,
            self.forced,
            think_close=self.think_close,
            seed=state_seed(self.forced.seed, state, per_epoch=self.per_epoch_seed),
            emit=record_event,
        )
        async with probe_span():
            await planned.cut(span.length, loop.force)
        planned.record(loop.sweep(trace)).save(state.store)
        return state


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

    The span and the forcing loop (the think block or the whole response, fitted to the
    context; ``prompt ++ response[:start + t] ++ tag``): :mod:`cotaudit.probing.forcing_loop`,
    with the sample's seed (:func:`~cotaudit.solvers.engine.state_seed`) for every prompt.
    Every forced cut is recorded in the sample's transcript, in one span
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
    core = SweepSolver(
        chain, plan, forced, per_epoch_seed, think, think_close, fit_context, read_trace
    )

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        return await core.run(state, generate)

    return solve


@dataclass(frozen=True)
class ProbePlan:
    """The generic probe's :data:`Planner`: the sample's plan by ``planner``
    (:class:`~cotaudit.probing.probe_plan.ProbePlanner`) under the trace's own prompt, verified
    against the sample's target and choices and named for its ``condition_key`` metadata, and,
    with the planner's ``replay_under``, under that condition's prompt (``replay_prompt``)
    unless the sample is of that condition already."""

    planner: ProbePlanner
    condition_key: str
    replay_prompt: ReplayPrompt | None

    async def __call__(self, state: TaskState, trace: Trace) -> SweepPlan:
        unders = await self.unders(state, trace)
        engine = probe_engine(get_model(), self.planner.forced.tokenizer)
        final = final_text(trace, engine) if self.planner.probe == "selfcommit" else ""
        return self.planner.plan(engine, trace, unders, final)

    async def unders(self, state: TaskState, trace: Trace) -> list[Under]:
        """The prompts the sample's trace is probed under: its own, then the replay's."""
        own_condition = (state.metadata or {}).get(self.condition_key)
        own = Replay(
            messages=trace.prompt,
            sample_id=str(state.sample_id),
            target=list(state.target.target),
            choices=shown_choices(state.choices),
        )
        unders = [Under("own", None if own_condition is None else str(own_condition), own)]
        replay_under = self.planner.replay_under
        if replay_under is not None and str(own_condition) != replay_under:
            assert self.replay_prompt is not None
            replay = await self.replay_prompt(state, replay_under)
            if not isinstance(replay, Replay):
                replay = Replay(messages=list(replay))
            unders.append(Under("replay", replay_under, replay))
        return unders


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
    stored as a :class:`~cotaudit.probing.record.ProbeRecord`
    (:class:`~cotaudit.probing.probe_plan.ProbePlanner`, which also says how the estimator
    ``exact`` or ``both`` reads each prompt exactly against its own reference).

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
    planner = ProbePlanner(probe, form, forced, schedule, replay_under, verification_lead)
    return sweep_solver(
        chain=chain,
        plan=ProbePlan(planner, condition_key, replay_prompt),
        forced=forced,
        think_close=think_close,
        read_trace=read_trace,
    )
