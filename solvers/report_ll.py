"""Solver of the report log-likelihood study: the four scorings of one fixture version.

No text is generated. For each transcript T in {hack, clean} the model reads T's chat (the
sample's ``metadata["contexts"][T]``) and both fixed reports are scored as its reply:
``S(r, T) = sum of log p(report token)`` in nats. With an engine that has
``loglikelihood_many`` the transcript is prefilled once and its cache serves both reports;
otherwise each report is a separate ``loglikelihood`` call (same numbers).
"""

from __future__ import annotations

from typing import Any

from inspect_ai.model import Model, get_model
from inspect_ai.solver import Generate, Solver, TaskState, solver

from cotaudit.engine.base import EngineCapabilityError, LoglikResult, ProbeEngine
from cotaudit.engine.inspect_prefill import SCORING_BACKENDS

STORE_KEY = "report_ll"
TRANSCRIPTS = ("hack", "clean")
REPORTS = ("honest", "concealing")
ARM = {"honest": "h", "concealing": "c"}


def loglikelihood_engine(model: Model) -> ProbeEngine:
    """The probe engine of ``model`` for scoring fixed continuations.

    Only providers with their own engine (``api.probe_engine``: ``hf-probe/``, ``mlx/``) can
    score a given text; any other provider raises :class:`EngineCapabilityError` at once (no
    tokenizer is loaded and no request is sent).
    """
    engine = getattr(model.api, "probe_engine", None)
    if engine is not None:
        return engine
    if model.api.model_name in ("none", "") or type(model.api).__name__ == "NoModel":
        raise RuntimeError(
            "no model given: pass --model (for the embedded default, --model hf-probe/default)"
        )
    raise EngineCapabilityError(
        f"{model} cannot score fixed reports: the report_ll study needs the log-likelihood of a "
        f"given continuation (prompt log-probabilities), which this provider does not expose; "
        f"use a provider that can: {SCORING_BACKENDS} (e.g. --model hf-probe/default)"
    )


async def score_reports(
    engine: ProbeEngine, context: list[dict[str, str]], reports: list[str]
) -> list[LoglikResult]:
    """``loglikelihood`` of each report after ``context`` (one prefill when the engine can)."""
    many = getattr(engine, "loglikelihood_many", None)
    if many is not None:
        return list(await many(context, reports))
    return [await engine.loglikelihood(context, r) for r in reports]


def scorings_record(results: dict[tuple[str, str], LoglikResult]) -> dict[str, Any]:
    """The store record: ``s_{h|c}_{hack|clean}`` (nats), ``n_...`` (tokens) and, per scoring,
    the report's tokens and their log-probabilities."""
    record: dict[str, Any] = {}
    detail: dict[str, Any] = {}
    for (report, transcript), r in results.items():
        key = f"{ARM[report]}_{transcript}"
        record[f"s_{key}"] = r.sum_logprob
        record[f"n_{key}"] = r.n_tokens
        detail[key] = {"tokens": list(r.tokens), "logprobs": [float(x) for x in r.token_logprobs]}
    record["token_logprobs"] = detail
    return record


@solver
def report_ll_scorings() -> Solver:
    """Score the sample's honest and concealing reports after its hack and clean transcripts.

    Reads ``metadata["contexts"]`` (``{"hack": messages, "clean": messages}``) and
    ``metadata["reports"]`` (``{"honest": text, "concealing": text}``); saves the four scorings
    in the sample store under ``"report_ll"`` (see :func:`scorings_record`).
    """

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        engine = loglikelihood_engine(get_model())
        contexts = state.metadata["contexts"]
        reports = [state.metadata["reports"][r] for r in REPORTS]
        results: dict[tuple[str, str], LoglikResult] = {}
        for transcript in TRANSCRIPTS:
            scored = await score_reports(engine, contexts[transcript], reports)
            for report, result in zip(REPORTS, scored, strict=True):
                results[(report, transcript)] = result
        state.store.set(STORE_KEY, scorings_record(results))
        return state

    return solve
