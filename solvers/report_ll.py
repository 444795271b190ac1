"""Solver of the report log-likelihood study: the four scorings of one fixture version.

No text is generated. For each transcript T in {hack, clean} the model reads T's chat (the
sample's ``metadata["contexts"][T]``) and both fixed reports are scored as its reply:
``S(r, T) = sum of log p(report token)`` in nats. On a
:class:`~cotaudit.engine.base.LocalEngine` (``loglikelihood_many``) the transcript is prefilled
once and its cache serves both reports; otherwise each report is a separate ``loglikelihood``
request (same numbers), the first sent before the others so that a server's prefix cache holds
the transcript when they come (vLLM: see
:class:`~cotaudit.engine.inspect_prefill.InspectPrefillEngine`).

Which models can score: providers with their own engine (``hf-probe/``, ``mlx/``; an
``mlx-server/`` engine refuses on its first call, before any request) and OpenAI-compatible
servers that return prompt log-probabilities (``vllm/``, ``sglang/``, ``openai-api/...``,
through :class:`~cotaudit.engine.inspect_prefill.InspectPrefillEngine`, which needs the
model's tokenizer and raises :class:`EngineCapabilityError` when the server returns none).
Every other provider is refused at once, with no tokenizer loaded and no request sent.

Token audit of the register rewrite: where the sample's unit has both dressed rewrites
(``metadata["dressing_texts"]``), the solver counts the plain and dressed reports' tokens with
the scored model's own tokenizer (``engine.tokenize``: the text alone, no special tokens) and
writes them into the sample's metadata as ``metadata["dressing_tokens"]``
(:func:`~cotaudit.studies.report_ll.fixtures.audits.added_tokens`: ``tokens_{r}_{plain,dressed}``,
``added_tokens_{r}``, ``added_tokens_gap``; 0 when the rewrites are matched on tokens added).
"""

from __future__ import annotations

import asyncio

from inspect_ai.model import Model, get_model
from inspect_ai.solver import Generate, Solver, TaskState, solver

from cotaudit.engine.base import (
    SCORING_BACKENDS,
    EngineCapabilityError,
    LocalEngine,
    LoglikResult,
    ProbeEngine,
)
from cotaudit.studies.report_ll.fixtures.audits import added_tokens
from cotaudit.studies.report_ll.record import REPORTS, TRANSCRIPTS, ReportScorings

from .engine import probe_engine

SCORING_PROVIDERS = (
    f"{SCORING_BACKENDS}, or a vllm/ or sglang/ server returning prompt log-probabilities"
)


def _openai_compatible(api: object) -> bool:
    """Inspect's OpenAI-compatible providers (vllm/, sglang/, openai-api/...) pass
    ``prompt_logprobs`` to the server."""
    return any(c.__name__ == "OpenAICompatibleAPI" for c in type(api).__mro__)


def loglikelihood_engine(model: Model, tokenizer: str | None = None) -> ProbeEngine:
    """The probe engine of ``model`` for scoring fixed continuations (see the module
    docstring); :class:`EngineCapabilityError` at once for a provider that cannot."""
    if getattr(model.api, "probe_engine", None) is not None or _openai_compatible(model.api):
        return probe_engine(model, tokenizer)
    if model.api.model_name in ("none", "") or type(model.api).__name__ == "NoModel":
        return probe_engine(model, tokenizer)  # raises its "no model given" error
    raise EngineCapabilityError(
        f"{model} cannot score fixed reports: the report_ll study needs the log-likelihood of a "
        f"given continuation (prompt log-probabilities), which this provider does not expose; "
        f"use a provider that can: {SCORING_PROVIDERS} (e.g. --model hf-probe/default)"
    )


async def score_reports(
    engine: ProbeEngine, context: list[dict[str, str]], reports: list[str]
) -> list[LoglikResult]:
    """``loglikelihood`` of each report after ``context``: one prefill for all reports on a
    :class:`LocalEngine`, else one request per report: the first alone, so that a server's
    prefix cache holds the context when the others, sent together, read it."""
    if isinstance(engine, LocalEngine):
        return list(await engine.loglikelihood_many(context, reports))
    if not reports:
        return []
    first = await engine.loglikelihood(context, reports[0])
    rest = await asyncio.gather(*(engine.loglikelihood(context, r) for r in reports[1:]))
    return [first, *rest]


@solver
def report_ll_scorings(tokenizer: str | None = None) -> Solver:
    """Score the sample's honest and concealing reports after its hack and clean transcripts.

    ``tokenizer``: the served model's tokenizer (hub id or folder) on providers without their
    own engine (``vllm/``, ``sglang/``); default the model's name.

    Reads ``metadata["contexts"]`` (``{"hack": messages, "clean": messages}``) and
    ``metadata["reports"]`` (``{"honest": text, "concealing": text}``); saves the four scorings
    in the sample store under ``"report_ll"``
    (:class:`~cotaudit.studies.report_ll.record.ReportScorings`) and, where
    ``metadata["dressing_texts"]`` is set, the token audit ``metadata["dressing_tokens"]``
    (module docstring).
    """

    engines: dict[str, ProbeEngine] = {}  # per model: a prefill engine loads a tokenizer

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        model = get_model()
        engine = engines.get(str(model))
        if engine is None:
            engine = engines[str(model)] = loglikelihood_engine(model, tokenizer)
        contexts = state.metadata["contexts"]
        reports = [state.metadata["reports"][r] for r in REPORTS]
        results: dict[tuple[str, str], LoglikResult] = {}
        for transcript in TRANSCRIPTS:
            scored = await score_reports(engine, contexts[transcript], reports)
            for report, result in zip(REPORTS, scored, strict=True):
                results[(report, transcript)] = result
        ReportScorings.from_results(results).save(state.store)
        if state.metadata.get("dressing_texts"):
            state.metadata["dressing_tokens"] = added_tokens(
                state.metadata["dressing_texts"], engine.tokenize
            )
        return state

    return solve
