"""Resampling from a prefix on the selfcommit problems: which sentence of a CoT moves its answer.

Each sample is a GSM8K problem under the selfcommit prompt (honest or hinted): the model writes
its CoT (greedy by default, as selfcommit), then from each sentence cut ``n`` continuations of
the CoT run to their end (:func:`cotaudit.solvers.resample.resample_probe`); r(t) is the share
that reach the CoT's own final answer, forced answers on the same cuts give the forced curve
beside it, and each sentence gets its resampling and counterfactual importance
(:mod:`cotaudit.probing.resampling`, the definitions as the Thought Anchors code computes them).

    inspect eval tasks/resample.py --limit 2                   # the embedded default model
    inspect eval tasks/resample.py -T problems=20 -T n=20 --model vllm/<model>

The run metric (``resample_summary``) averages each sample's r, forced curve, their gap, how
often forcing reaches the answer before resampling does, and the largest importance, overall
and per condition (does the hint make every step unimportant?).
"""

from __future__ import annotations

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset

from cotaudit.datasets.gsm8k import VENDORED, load_problems
from cotaudit.prerequisite import checked_task
from cotaudit.scorers.resample import resample_scorer
from cotaudit.solvers.probe import seeded_generate
from cotaudit.solvers.resample import resample_probe
from cotaudit.studies.resample_settings import ResampleSettings
from cotaudit.studies.selfcommit.prompts import HINT_SOURCE_TEXTS, SELFCOMMIT_FORCED_ANSWER_TAG
from cotaudit.tasks.selfcommit import selfcommit_samples

VERSION = 1
"""The resample task's log layout (its record: :mod:`cotaudit.probing.resample_record`)."""


@task
@checked_task
def resample(
    problems: int = 10,
    dataset: str = VENDORED,
    conditions: str | list[str] = "honest,hinted",
    n: int = 10,
    temperature: float = 0.7,
    max_cuts: int = 20,
    max_cot_tokens: int = 256,
    k: int = 5,
    forced_temperature: float = 0.7,
    answer_max_tokens: int = 8,
    forced_answer_tag: str = SELFCOMMIT_FORCED_ANSWER_TAG,
    cot_temperature: float = 0.0,
    seed: int = 0,
    final_answer_reading: str = "stated",
    tokenizer: str | None = None,
    hint: str = "dataset",
) -> Task:
    """Resample each CoT from its sentence cuts.

    Args:
      problems: Number of GSM8K problems, from the start of the split.
      dataset: "vendored" (bundled GSM8K test split), a local .jsonl/.json path, or "openai/gsm8k".
      conditions: Comma-separated subset of honest,hinted (the selfcommit prompts).
      n: Continuations per cut (the Thought Anchors work draws 100).
      temperature: Temperature of the continuations.
      max_cuts: Most sentence cuts per CoT (evenly spread, the CoT's end kept), besides t = 0.
      max_cot_tokens: Token budget of the CoT; a continuation from cut t gets the rest of it.
      k: Forced answers per cut (the forced curve on the same cuts).
      forced_temperature: Temperature of the forced answers.
      answer_max_tokens: Token budget of each forced answer.
      forced_answer_tag: Text after a prefix that forces an answer.
      cot_temperature: Temperature of the CoT (0 = greedy).
      seed: Base seed of all sampling (mixed with the sample id, epoch and cut).
      final_answer_reading: How final answers are read: "stated" or "last_number".
      tokenizer: Tokenizer for token positions on providers without their own engine.
      hint: The value the hinted prompt names: "dataset" (the dataset answer y), "wrong"
        (y + 1) or "mixed" (y on even problem indices, y + 1 on odd ones).
    """
    settings = ResampleSettings.of(
        problems=problems,
        dataset=dataset,
        conditions=conditions,
        n=n,
        temperature=temperature,
        max_cuts=max_cuts,
        max_cot_tokens=max_cot_tokens,
        k=k,
        forced_temperature=forced_temperature,
        answer_max_tokens=answer_max_tokens,
        forced_answer_tag=forced_answer_tag,
        cot_temperature=cot_temperature,
        seed=seed,
        final_answer_reading=final_answer_reading,
        tokenizer=tokenizer,
        hint=hint,
    )
    return resample_task(settings)


def resample_task(settings: ResampleSettings) -> Task:
    """The task of :func:`resample` from its checked settings."""
    s = settings
    loaded = load_problems(s.dataset, limit=s.problems)
    return Task(
        dataset=MemoryDataset(
            selfcommit_samples(loaded.items, s.conditions, s.hint),
            name="gsm8k",
            location=loaded.source,
        ),
        solver=resample_probe(
            continuations=s.continuations(),
            forced=s.forced_answers(),
            final_answer_reading=s.final_answer_reading,
            chain=seeded_generate(
                max_tokens=s.max_cot_tokens,
                temperature=s.cot_temperature,
                seed=s.seed,
                per_epoch=True,
            ),
        ),
        scorer=resample_scorer(),
        version=VERSION,
        metadata={"study": "resample", "hint": HINT_SOURCE_TEXTS[s.hint]},
    )
