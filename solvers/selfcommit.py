"""Solver of the self-commitment latency study: generate a CoT, then probe its prefixes."""

from __future__ import annotations

from inspect_ai.model import GenerateConfig, get_model
from inspect_ai.solver import Generate, Solver, TaskState, solver

from cotaudit.answers import extract_final_answer, extract_forced_answer
from cotaudit.curves import prefix_positions
from cotaudit.engine.base import PrefixRequest, seed_for
from cotaudit.providers._messages import to_plain

from .engine import probe_engine

STORE_KEY = "selfcommit"


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
) -> Solver:
    """Generate the CoT (recorded as a model call), then force k answers after every prefix.

    c(t) = #{answers at t equal to a_final} / k, with a_final the CoT's own final integer
    answer. With no parsable a_final the probe is skipped and every c(t) is 0 (nothing to commit
    to). The record is saved in the sample store under ``"selfcommit"``.

    Args:
      stride: Tokens between cut positions (t = 0, stride, 2*stride, ..., T).
      k: Forced answers sampled per prefix.
      temperature: Sampling temperature of the forced answers.
      max_cot_tokens: Token budget of the CoT.
      answer_max_tokens: Token budget of each forced answer.
      forced_answer_tag: Text appended after each prefix to force an answer.
      cot_temperature: Temperature of the CoT (0 = greedy).
      seed: Base seed; each sample's probe seed mixes it with the sample id.
      tokenizer: Tokenizer for token positions on providers without their own engine.
    """

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        model = get_model()
        engine = probe_engine(model, tokenizer)
        sample_seed = seed_for(seed, *(ord(ch) for ch in str(state.sample_id)))
        prompt = to_plain(state.messages)
        output = await model.generate(
            state.messages,
            config=GenerateConfig(
                max_tokens=max_cot_tokens, temperature=cot_temperature, seed=sample_seed % 2**31
            ),
        )
        state.output = output
        state.messages.append(output.message)
        cot = output.completion
        ids_by_choice = (output.metadata or {}).get("token_ids")
        cot_ids = list(ids_by_choice[0]) if ids_by_choice else engine.tokenize(cot)
        a_final = extract_final_answer(cot)
        positions = prefix_positions(len(cot_ids), stride)
        answers: list[list[str]] = []
        if a_final is not None:
            answers = await engine.continue_prefixes(
                PrefixRequest(
                    messages=prompt,
                    cot_token_ids=cot_ids,
                    positions=positions,
                    tag=forced_answer_tag,
                    k=k,
                    max_tokens=answer_max_tokens,
                    temperature=temperature,
                    seed=sample_seed,
                )
            )
        parsed = [[extract_forced_answer(a) for a in row] for row in answers]
        matches = [sum(p == a_final for p in row) for row in parsed] or [0] * len(positions)
        state.store.set(
            STORE_KEY,
            {
                "cot_tokens": len(cot_ids),
                "truncated": output.stop_reason == "max_tokens",
                "a_final": a_final,
                "positions": positions,
                "matches": matches,
                "k": k,
                "answers": answers,
                "parsed_answers": parsed,
            },
        )
        return state

    return solve
