"""Solver of the self-commitment latency study: generate a CoT, then probe its prefixes."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from inspect_ai.model import GenerateConfig, get_model
from inspect_ai.solver import Generate, Solver, TaskState, solver

from cotaudit.answers import Reading, extract_final_answer, extract_forced_answer
from cotaudit.engine.chat import to_plain
from cotaudit.probing.positions import Schedule
from cotaudit.probing.sweep import context_room
from cotaudit.studies.selfcommit.record import STORE_KEY, SelfcommitProbe
from cotaudit.studies.selfcommit.schedule import (
    coarse_positions,
    fill_schedule,
    refinement_positions,
)

from .audit import force_and_record, note, probe_span
from .engine import completion_token_ids, probe_engine, sample_seed

__all__ = ["STORE_KEY", "fit_to_context", "selfcommit_probe"]


def fit_to_context(
    engine: Any, prompt: Sequence[dict[str, str]], cot_ids: list[int], tag: str, answer_tokens: int
) -> tuple[list[int], bool]:
    """Cut the CoT so prompt + CoT + tag + answer fit the model's context; flag if cut.

    Only for engines that know their context length and prompt rendering (``hf-probe/``,
    ``mlx/``); others are left to the server (:func:`cotaudit.probing.sweep.context_room`)."""
    room = context_room(engine, prompt, tag, answer_tokens)
    if room is None or len(cot_ids) <= room:
        return cot_ids, False
    return cot_ids[:room], True


@solver
def selfcommit_probe(
    *,
    stride: int = 30,
    k: int = 5,
    temperature: float = 0.7,
    max_cot_tokens: int = 1024,
    answer_max_tokens: int = 8,
    forced_answer_tag: str,
    cot_temperature: float = 0.0,
    seed: int = 0,
    tokenizer: str | None = None,
    schedule: Literal["full", "adaptive"] = "full",
    zero_probe: bool = False,
    final_answer_reading: Reading = "stated",
) -> Solver:
    """Generate the CoT (recorded as a model call), then force k answers after every prefix.

    c(t) = #{answers at t equal to a_final} / k, with a_final the CoT's own final integer
    answer as the CoT states it (:func:`cotaudit.answers.extract_final_answer` with
    ``final_answer_reading``; a CoT that hit ``max_cot_tokens`` is read as ``truncated``), at
    t = stride, 2*stride, ..., T. With ``zero_probe`` the empty prefix is probed too and kept
    apart as c0 = c(0) (no point of the curve). With no a_final the probe is skipped (nothing to
    commit to; ``matches`` and ``c0`` are None). The record
    (:class:`~cotaudit.studies.selfcommit.record.SelfcommitProbe`) is saved in the sample store
    under ``"selfcommit"``.

    Args:
      stride: Tokens between cut positions (t = stride, 2*stride, ..., T).
      k: Forced answers sampled per prefix.
      temperature: Sampling temperature of the forced answers.
      max_cot_tokens: Token budget of the CoT.
      answer_max_tokens: Token budget of each forced answer.
      forced_answer_tag: Text appended after each prefix to force an answer.
      cot_temperature: Temperature of the CoT (0 = greedy).
      seed: Base seed; each sample's probe seed mixes it with the sample id and the epoch
        (from epoch 2 on), so ``--epochs N`` draws N different sets of forced answers (and of
        CoTs when ``cot_temperature`` > 0).
      tokenizer: Tokenizer for token positions on providers without their own engine.
      schedule: ``full`` probes every position; ``adaptive`` probes every 4th first and fills
        in only where c(t) is ambiguous (see ``cotaudit.studies.selfcommit.schedule``).
      zero_probe: Also probe t = 0 (the prompt alone) and record it as ``c0``.
      final_answer_reading: ``stated`` (the answer the CoT states) or ``last_number`` (else its
        last number, truncated or not); see :func:`cotaudit.answers.extract_final_answer`.
    """

    stride_cuts = Schedule(kind="stride", stride=stride)

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        model = get_model()
        engine = probe_engine(model, tokenizer)
        probe_seed = sample_seed(seed, state.sample_id, state.epoch)
        prompt = to_plain(state.messages)
        output = await model.generate(
            state.messages,
            config=GenerateConfig(
                max_tokens=max_cot_tokens, temperature=cot_temperature, seed=probe_seed % 2**31
            ),
        )
        state.output = output
        state.messages.append(output.message)
        cot = output.completion
        cot_ids = completion_token_ids(output, engine)
        cot_ids, context_truncated = fit_to_context(
            engine, prompt, cot_ids, forced_answer_tag, answer_max_tokens
        )
        truncated = output.stop_reason == "max_tokens"
        a_final = extract_final_answer(cot, reading=final_answer_reading, truncated=truncated)
        full = stride_cuts.positions(len(cot_ids))  # stride, 2*stride, ..., T
        zero = [0] if zero_probe else []

        async def probe(positions: list[int]) -> dict[int, list[str]]:
            if a_final is None or not positions:
                return {}
            answers = await force_and_record(
                engine,
                prompt,
                cot_ids,
                positions,
                forced_answer_tag,
                context="own",
                k=k,
                max_tokens=answer_max_tokens,
                temperature=temperature,
                seed=probe_seed,
                judge=judged,
                a_final=a_final,
            )
            return dict(zip(positions, answers))

        def judged(answer: str) -> tuple[int | None, bool]:
            parsed = extract_forced_answer(answer)
            return parsed, parsed == a_final

        def matches_of(row: list[str]) -> int:
            return sum(judged(a)[1] for a in row)

        async with probe_span():
            if a_final is None:
                note(
                    "No final answer in the CoT (a_final = None): nothing to commit to, "
                    "no prefix probed."
                )
            if schedule == "adaptive":
                coarse = coarse_positions(len(cot_ids), stride)
                answers = await probe(sorted(set(zero + coarse)))
                coarse_c = {t: matches_of(answers.get(t, [])) / k for t in coarse}
                answers |= await probe(refinement_positions(full, coarse, coarse_c))
            else:
                answers = await probe(sorted(set(zero + full)))
        probed = {t: matches_of(row) for t, row in answers.items()}
        matches, imputed = fill_schedule(full, probed) if probed else (None, None)
        c0 = probed[0] / k if zero_probe and probed else None
        record = SelfcommitProbe(
            cot_tokens=len(cot_ids),
            truncated=truncated,
            context_truncated=context_truncated,
            a_final=a_final,
            positions=full,
            matches=matches,
            imputed=imputed,
            zero_probe=zero_probe,
            c0=c0,
            prefixes_probed=len(answers),
            k=k,
            answers=[answers.get(t, []) for t in full],
            parsed_answers=[[extract_forced_answer(a) for a in answers.get(t, [])] for t in full],
        )
        record.save(state.store)
        return state

    return solve
