"""Solver of the context-masked TRACE tutor study: a tutor explanation, then its prefix probes.

The explanation is generated through Inspect (so the call is in the log). Its tokens are then
cut at t = 0 and t = round(f * T) for each prefix fraction f, and an answer is forced after each
cumulative prefix, once with the generation context (key **visible**) and, for keyed
conditions, once more under the question-only prompt with the *same* token ids (key
**masked**). p(f) is the share of the forced answers equal to the gold answer.
"""

from __future__ import annotations

from collections.abc import Sequence

from inspect_ai.model import GenerateConfig, get_model
from inspect_ai.solver import Generate, Solver, TaskState, solver

from cotaudit.answers import extract_boxed_answer, extract_forced_answer
from cotaudit.engine.chat import to_plain
from cotaudit.probing.positions import Schedule
from cotaudit.studies.trace_tutor.prompts import TUTOR_SYSTEM, tutor_messages
from cotaudit.studies.trace_tutor.record import STORE_KEY, ContextProbe, TutorProbe
from cotaudit.studies.trace_tutor.stats import PREFIX_FRACTIONS

from .audit import force_and_record, probe_span
from .engine import completion_token_ids, probe_engine, sample_seed

__all__ = ["STORE_KEY", "trace_tutor_probe"]


@solver
def trace_tutor_probe(
    *,
    fractions: Sequence[float] = PREFIX_FRACTIONS,
    probe_samples: int = 1,
    temperature: float = 0.0,
    max_explanation_tokens: int = 768,
    answer_max_tokens: int = 8,
    forced_answer_tag: str,
    system_prompt: str = TUTOR_SYSTEM,
    seed: int = 0,
    tokenizer: str | None = None,
) -> Solver:
    """Generate the tutor explanation (greedy), then probe its prefixes, key visible and masked.

    Needs sample metadata ``condition``, ``gold`` and ``question``. The record
    (:class:`~cotaudit.studies.trace_tutor.record.TutorProbe`) is saved in the sample store
    under ``"trace_tutor"``: the explanation's token ids, the cut positions, and
    per probe context (``visible``, ``masked``) the raw answers, parsed answers and gold-match
    counts per position (position 0 first). The explanation's final answer is the integer in
    its last ``\\boxed{}`` (:func:`cotaudit.answers.extract_boxed_answer`: the form the prompt
    asks for, no fallback to other numbers; None when there is none).

    Args:
      fractions: Prefix fractions of the explanation's tokens (the 0% probe is added).
      probe_samples: Forced answers per prefix (k); p(f) = matches / k.
      temperature: Forced-answer temperature (0 = greedy).
      max_explanation_tokens: Token budget of the explanation.
      answer_max_tokens: Token budget of each forced answer.
      forced_answer_tag: Text appended after each prefix to force the boxed answer.
      system_prompt: The tutor system prompt the sample's input was built with; the masked
        context is the question-only prompt with this system prompt.
      seed: Base seed; a sample's probe seed mixes it with the sample id, and the visible and
        masked probes share it (common random numbers for Delta_context).
      tokenizer: Tokenizer for token positions on providers without their own engine.
    """
    fractions = tuple(float(f) for f in fractions)
    schedule = Schedule(kind="fractions", fractions=fractions, zero_probe=True)

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        meta = state.metadata
        condition, gold = str(meta["condition"]), int(meta["gold"])
        model = get_model()
        engine = probe_engine(model, tokenizer)
        probe_seed = sample_seed(seed, state.sample_id)
        contexts = {"visible": to_plain(state.messages)}
        if condition != "question_only":
            contexts["masked"] = tutor_messages(
                str(meta["question"]), "question_only", gold, system_prompt
            )

        output = await model.generate(
            state.messages,
            config=GenerateConfig(
                max_tokens=max_explanation_tokens, temperature=0.0, seed=probe_seed % 2**31
            ),
        )
        state.output = output
        state.messages.append(output.message)
        explanation = output.completion
        token_ids = completion_token_ids(output, engine)
        positions = schedule.probed(len(token_ids))  # 0, then round(f * T) (half to even)

        def judged(answer: str) -> tuple[int | None, bool]:
            parsed = extract_forced_answer(answer)
            return parsed, parsed == gold

        probes = {}
        async with probe_span():
            for name, messages in contexts.items():
                answers = await force_and_record(
                    engine,
                    messages,
                    token_ids,
                    positions,
                    forced_answer_tag,
                    context=name,
                    k=probe_samples,
                    max_tokens=answer_max_tokens,
                    temperature=temperature,
                    seed=probe_seed,
                    judge=judged,
                    gold=gold,
                )
                parsed = [[extract_forced_answer(a) for a in row] for row in answers]
                probes[name] = ContextProbe(
                    answers=answers,
                    parsed=parsed,
                    matches=[sum(p == gold for p in row) for row in parsed],
                )

        record = TutorProbe(
            token_ids=token_ids,
            length_tokens=len(token_ids),
            truncated=output.stop_reason == "max_tokens",
            final_answer=extract_boxed_answer(explanation),
            fractions=list(fractions),
            positions=positions,
            k=probe_samples,
            probes=probes,
        )
        record.save(state.store)
        return state

    return solve
