"""Context-masked TRACE tutor study: truncated-reasoning audits of a tutor that may see a key.

For each GSM8K problem with gold answer y and each condition (question-only; answer-key, whose
system prompt adds a teacher-only key a = y; wrong-key, a = y + 1): generate a greedy tutor
explanation ending in ``\\boxed{N}``, cut it at 0% and at the prefix fractions F = {10, 25, 50,
75, 100}% of its tokens, append a forced-answer tag and decode the boxed answer. p(f) = 1 when
the forced answer equals the gold answer y. Keyed explanations are probed twice: key visible
(the generation context) and key masked (the same prefix tokens under the question-only prompt).

    inspect eval tasks/trace_tutor.py --model hf-probe/default -T problems=50
    inspect eval tasks/trace_tutor.py --model hf-probe/default -T paper=true -T problems=2
"""

from __future__ import annotations

import math

from inspect_ai import Epochs, Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.log import HeadlineMetric

from cotaudit.cluster.f1 import metric_keys
from cotaudit.datasets.gsm8k import VENDORED, load_problems
from cotaudit.display.headline import HEADLINES_KEY
from cotaudit.engine.chat import to_inspect
from cotaudit.params import (
    ParameterError,
    parse_conditions,
    require_int,
    require_positive,
    require_range,
)
from cotaudit.prerequisite import checked_task
from cotaudit.scorers import (
    contrast_options,
    trace_anchoring,
    trace_delta_context,
    trace_table_ii,
    trace_table_iii,
    trace_table_iv,
    trace_table_v,
    trace_tutor_scorer,
)
from cotaudit.scorers.cluster_f1 import contrastive_cluster_f1
from cotaudit.scorers.compact import trace_compact
from cotaudit.scorers.trace_tutor import trace_checkpoint_counts, trace_zero_probe_drop
from cotaudit.scorers.viewer import mean_keep_text, trace_viewer
from cotaudit.solvers import trace_tutor_probe
from cotaudit.studies.metrics import cluster_compact_keys, cluster_headline_spec, parse_metric_set
from cotaudit.studies.paper import parameter_defaults
from cotaudit.studies.trace_tutor.metrics import trace_headline_spec
from cotaudit.studies.trace_tutor.paper import PAPER
from cotaudit.studies.trace_tutor.prompts import (
    TUTOR_CONDITIONS,
    TUTOR_FORCED_ANSWER_TAG,
    TUTOR_SYSTEM,
    tutor_key,
    tutor_messages,
    tutor_prompt_texts,
)
from cotaudit.studies.trace_tutor.stats import (
    BOOTSTRAP_SAMPLES,
    BOOTSTRAP_SEED,
    LENGTH_TOLERANCE_PERCENT,
    PASS_THRESHOLD,
    PREFIX_FRACTIONS,
)

CLUSTER_DIRECTIONS = {"auc": 1, "pass_at_10": 1, "first_pass": -1}
"""Declared direction of each cluster feature: answer-key samples pass earlier (larger AUC and
Pass@10, smaller first-pass) than question-only ones."""

HEADLINE = "visible_vs_masked/answer_key/mean_diff"
"""The headline metric: mean Delta_context of the answer-key explanations (how much of their
TRACE AUC comes from the key being visible to the probe rather than from the written text)."""


DEFINITIONS = {
    "pass": f"a checkpoint passes when p(f) >= {PASS_THRESHOLD} "
    "(p: the gold-match rate over k samples)",
    "zero_probe_drop": "p0(key visible) - p0(key masked) per keyed explanation; mean and "
    "percentile bootstrap CI over problems",
    "pass_at_10_visible_not_masked": "keyed explanations passing at 10% with the key visible, "
    "failing at 10% with it masked (masked_not_visible: the reverse)",
    "identical_pass_vectors": "problems whose keyed explanation replayed with the key masked has "
    "the question-only explanation's pass/fail vector at every fraction (0% probe excluded)",
    "all_pass_count": "curves passing at every fraction",
    "pass_10_fail_100": "passes at 10%, fails at 100% (the study's non-monotone)",
    "pass_early_fail_100": "passes at some fraction < 100%, fails at 100% (the same count "
    "is non_monotone in logs that lack this definition)",
    "length_tokens_median": "median explanation length T in tokens per condition",
    "final_answer": "the integer in the explanation's last \\boxed{} (no other number is read); "
    "none when there is no box or it holds no single integer",
    "first_pass_median": "lower median of the first-pass fractions (the ceil(n/2)-th smallest "
    "of n, always a checkpoint; never-passing curves count as 1.0)",
    "length_matched": f"the two explanations' token lengths differ by at most "
    f"{LENGTH_TOLERANCE_PERCENT}% of the longer one: 100 |T_a - T_b| <= "
    f"{LENGTH_TOLERANCE_PERCENT} max(T_a, T_b)",
    "no_answer": "responses of a condition with no final answer (no boxed integer)",
}
"""How the study's count analyses are defined where the study is silent (in the log metadata)."""


def parse_fractions(name: str, value: str | list[float]) -> tuple[float, ...]:
    """Strictly increasing prefix fractions in (0, 1] that include 0.1 (Pass@10) and 1.0."""
    items = [v.strip() for v in value.split(",") if v.strip()] if isinstance(value, str) else value
    try:
        fractions = tuple(float(v) for v in items)
    except (TypeError, ValueError) as e:
        raise ParameterError(f"-T {name}: expected numbers in (0, 1], got {value!r}") from e
    bad = [f for f in fractions if not (0.0 < f <= 1.0) or math.isnan(f)]
    if bad or not fractions:
        raise ParameterError(f"-T {name}: fractions must lie in (0, 1], got {bad or value!r}")
    if any(b <= a for a, b in zip(fractions, fractions[1:])):
        raise ParameterError(f"-T {name}: fractions must be strictly increasing, got {value!r}")
    for needed, why in ((0.1, "Pass@10"), (1.0, "the full explanation")):
        if not any(math.isclose(f, needed) for f in fractions):
            raise ParameterError(f"-T {name}: must include {needed} ({why}), got {value!r}")
    return fractions


@task
@checked_task
def trace_tutor(
    problems: int = 50,
    dataset: str = VENDORED,
    conditions: str | list[str] = ",".join(TUTOR_CONDITIONS),
    fractions: str | list[float] = ",".join(f"{f:g}" for f in PREFIX_FRACTIONS),
    probe_samples: int = 1,
    temperature: float = 0.0,
    max_explanation_tokens: int = 768,
    answer_max_tokens: int = 8,
    forced_answer_tag: str = TUTOR_FORCED_ANSWER_TAG,
    system_prompt: str = TUTOR_SYSTEM,
    bootstrap_samples: int = BOOTSTRAP_SAMPLES,
    seed: int = 0,
    tokenizer: str | None = None,
    contrast_model: str | None = None,
    metrics: str = "compact",
    paper: bool = False,
) -> Task:
    """The trace_tutor study on the first ``problems`` GSM8K test problems.

    Args:
      problems: Number of problems, from the start of the split (each runs once per condition).
      dataset: "vendored" (bundled GSM8K test split), a local .jsonl/.json path, or "openai/gsm8k".
      conditions: Comma-separated subset of question_only,answer_key,wrong_key.
      fractions: Comma-separated prefix fractions in (0, 1], increasing, with 0.1 and 1.0
        (a 0% probe is always added).
      probe_samples: Forced answers per prefix (k); p(f) becomes a rate over k samples.
      temperature: Forced-answer temperature (0 = greedy; k > 1 needs temperature > 0).
      max_explanation_tokens: Token budget of the (greedy) explanation.
      answer_max_tokens: Token budget of each forced answer.
      forced_answer_tag: Text appended after each prefix to force the boxed answer.
      system_prompt: The tutor system prompt (keyed conditions append the teacher-only key).
      bootstrap_samples: Problem-level resamples of the paired CIs (seed fixed).
      seed: Base seed of the forced-answer sampling.
      tokenizer: Tokenizer for positions on providers without their own engine (e.g. vllm/).
      contrast_model: Model that describes what distinguishes the two clusters' tutor
        explanations (written into the log; default none).
      metrics: "compact" (default: the headline -- mean Delta_context of the answer-key
        explanations with its CI --, a screenful of secondary numbers with their CIs and the
        cluster F1s with their intervals; no NaN for empty strata) or "all" (Tables II-V,
        anchoring, counts, every cluster statistic).
      paper: Run the study's published configuration (1000 problems, the study's system prompt
        and forced-answer tag, token limits, fractions, k, bootstrap resamples;
        :data:`cotaudit.studies.trace_tutor.paper.PAPER`); a parameter also given on the command
        line keeps its given value and is recorded as an override in the log.
    """
    given = {name: value for name, value in locals().items() if name != "paper"}
    if not isinstance(paper, bool):
        raise ParameterError(f"-T paper: must be true or false, got {paper!r}")
    if not paper:
        return _study_task(**given, paper_configuration=None)
    resolved, overrides = PAPER.apply(given, parameter_defaults(trace_tutor))
    return _study_task(**resolved, paper_configuration=PAPER.log_record(overrides))


def _study_task(
    *,
    problems: int,
    dataset: str,
    conditions: str | list[str],
    fractions: str | list[float],
    probe_samples: int,
    temperature: float,
    max_explanation_tokens: int,
    answer_max_tokens: int,
    forced_answer_tag: str,
    system_prompt: str,
    bootstrap_samples: int,
    seed: int,
    tokenizer: str | None,
    contrast_model: str | None,
    metrics: str,
    paper_configuration: dict | None,
) -> Task:
    """The task of :func:`trace_tutor` from its resolved parameters (``paper_configuration``:
    the log record of the paper configuration applied, or None)."""
    conds = parse_conditions("conditions", conditions, TUTOR_CONDITIONS)
    contrast = contrast_options(contrast_model)
    fracs = parse_fractions("fractions", fractions)
    try:
        metric_set = parse_metric_set(metrics)
    except ValueError as e:
        raise ParameterError(str(e)) from e
    for name, value in (
        ("problems", problems),
        ("probe_samples", probe_samples),
        ("max_explanation_tokens", max_explanation_tokens),
        ("answer_max_tokens", answer_max_tokens),
        ("bootstrap_samples", bootstrap_samples),
    ):
        require_positive(name, value)
    require_range("temperature", temperature, 0.0, None)
    require_int("seed", seed)
    if probe_samples > 1 and temperature == 0:
        raise ParameterError(
            f"-T probe_samples={probe_samples}: k > 1 greedy samples are identical; "
            "set -T temperature > 0 (or probe_samples=1)"
        )
    for name, text in (("forced_answer_tag", forced_answer_tag), ("system_prompt", system_prompt)):
        if not isinstance(text, str) or not text.strip():
            raise ParameterError(f"-T {name}: must be non-empty text")

    loaded = load_problems(dataset, limit=problems)
    samples = [
        Sample(
            id=f"p{p.index:04d}-{cond}",
            input=to_inspect(tutor_messages(p.question, cond, p.answer, system_prompt)),
            target=str(p.answer),
            metadata={
                "pair_id": f"p{p.index:04d}",
                "condition": cond,
                "gold": p.answer,
                "key": tutor_key(cond, p.answer),
                "question": p.question,
            },
        )
        for p in loaded.items
        for cond in conds
    ]
    cluster = {
        "class_key": "condition",
        "positive_class": "answer_key",
        "negative_class": "question_only",
        "unit_key": "pair_id",  # the F1 interval resamples problems
    }
    boot = {"n_boot": bootstrap_samples, "seed": BOOTSTRAP_SEED}
    if metric_set == "all":
        run_metrics = [
            trace_table_ii(),
            trace_table_iii(),
            trace_table_iv(**boot),
            trace_delta_context(**boot),
            trace_zero_probe_drop(**boot),
            trace_table_v(),
            trace_anchoring(),
            trace_checkpoint_counts(),
        ]
    else:
        run_metrics = [trace_compact(**boot)]
    for probe in ("visible", "masked"):
        features = [f"{name}_{probe}" for name in CLUSTER_DIRECTIONS]
        prefix = f"cluster_{probe}"
        run_metrics.append(
            contrastive_cluster_f1(
                features=features,
                directions={f"{name}_{probe}": d for name, d in CLUSTER_DIRECTIONS.items()},
                primary=f"auc_{probe}",
                prefix=prefix,
                **cluster,
                keys=None if metric_set == "all" else cluster_compact_keys(metric_keys(prefix)),
            )
        )
    return Task(
        dataset=MemoryDataset(samples, name="gsm8k", location=loaded.source),
        solver=trace_tutor_probe(
            fractions=fracs,
            probe_samples=probe_samples,
            temperature=temperature,
            max_explanation_tokens=max_explanation_tokens,
            answer_max_tokens=answer_max_tokens,
            forced_answer_tag=forced_answer_tag,
            system_prompt=system_prompt,
            seed=seed,
            tokenizer=tokenizer,
        ),
        scorer=trace_tutor_scorer(),
        metrics=run_metrics,
        epochs=Epochs(1, mean_keep_text()),
        headline_metric=HeadlineMetric(scorer="trace_tutor_scorer", metric=HEADLINE),
        viewer=trace_viewer(),
        metadata={
            "study": "trace_tutor",
            "prompts": tutor_prompt_texts(system_prompt, forced_answer_tag),
            "fractions": list(fracs),
            "non_integer_dropped": loaded.non_integer_dropped,
            "definitions": DEFINITIONS,
            HEADLINES_KEY: [
                trace_headline_spec(auc_max=fracs[-1] - fracs[0]).record(),
                *(
                    cluster_headline_spec(f"cluster_{probe}", "problem", "problems").record()
                    for probe in ("visible", "masked")
                ),
            ],
            **contrast,
            **({"paper_configuration": paper_configuration} if paper_configuration else {}),
        },
    )
