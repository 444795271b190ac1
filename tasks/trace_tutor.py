"""Context-masked TRACE tutor study: truncated-reasoning audits of a tutor that may see a key.

For each GSM8K problem with gold answer y and each condition (question-only; answer-key, whose
system prompt adds a teacher-only key a = y; wrong-key, a = y + 1): generate a greedy tutor
explanation ending in ``\\boxed{N}``, cut it at 0% and at the prefix fractions F = {10, 25, 50,
75, 100}% of its tokens, append a forced-answer tag and decode the boxed answer. p(f) = 1 when
the forced answer equals the gold answer y. Keyed explanations are probed twice: key visible
(the generation context) and key masked (the same prefix tokens under the question-only prompt).

    inspect eval tasks/trace_tutor.py --model hf-probe/default -T problems=50
    inspect eval tasks/trace_tutor.py --model hf-probe/default -T paper=true -T problems=2
    inspect eval tasks/trace_tutor.py --model hf-probe/default -T estimator=both -T problems=2
"""

from __future__ import annotations

from typing import Any

from inspect_ai import Epochs, Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.log import HeadlineMetric
from inspect_ai.solver import Solver, chain

from cotaudit.cluster.f1 import metric_keys
from cotaudit.cluster.scores import ClusterHypothesis
from cotaudit.datasets.gsm8k import VENDORED
from cotaudit.datasets.shipped import problems_from_row
from cotaudit.display.headline import HEADLINES_KEY
from cotaudit.engine.chat import to_inspect
from cotaudit.prerequisite import checked_task, given_arguments
from cotaudit.probing.exact import exact_temperature, reads_exact
from cotaudit.probing.resample_record import STUDY_PREFIX
from cotaudit.scorers.cluster_contrast import contrast_options
from cotaudit.scorers.cluster_f1 import cluster_f1_metric
from cotaudit.scorers.resample import resample_summary
from cotaudit.scorers.trace_tutor import run_metrics, trace_tutor_scorer
from cotaudit.scorers.viewer import mean_keep_text, viewer_config
from cotaudit.solvers import trace_tutor_probe
from cotaudit.solvers.resample import resample_probe
from cotaudit.studies.metrics import cluster_compact_keys, cluster_headline_spec
from cotaudit.studies.trace_tutor.display import sample_table
from cotaudit.studies.trace_tutor.metrics import (
    curve_estimators,
    headline_estimator,
    trace_headline_keys,
    trace_headline_spec,
)
from cotaudit.studies.trace_tutor.paper import PAPER
from cotaudit.studies.trace_tutor.prompts import (
    TUTOR_FORCED_ANSWER_TAG,
    TUTOR_SYSTEM,
    tutor_key,
    tutor_messages,
    tutor_prompt_texts,
)
from cotaudit.studies.trace_tutor.record import CurveEstimator, estimator_key
from cotaudit.studies.trace_tutor.settings import (
    DEFAULT_CONDITIONS,
    DEFAULT_FRACTIONS,
    TraceTutorSettings,
)
from cotaudit.studies.trace_tutor.stats import (
    BOOTSTRAP_SAMPLES,
    LENGTH_TOLERANCE_PERCENT,
    PASS_THRESHOLD,
)
from cotaudit.studies.trace_tutor.versions import TASK_VERSION

CLUSTER_DIRECTIONS = {"auc": 1, "pass_at_10": 1, "first_pass": -1}
"""Declared direction of each cluster feature: answer-key samples pass earlier (larger AUC and
Pass@10, smaller first-pass) than question-only ones."""


def headline_of(estimator: str) -> str:
    """The headline metric of a run of ``-T estimator``: mean Delta_context of the answer-key
    explanations (how much of their TRACE AUC comes from the key being visible to the probe
    rather than from the written text), of the curves
    :func:`~cotaudit.studies.trace_tutor.metrics.headline_estimator` names (the exact ones in
    an exact-only run, else the sampled ones)."""
    return trace_headline_keys(headline_estimator(estimator))[0]


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
    "pass_early_fail_100": "passes at some fraction < 100%, fails at 100%",
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

EXACT_DEFINITIONS = {
    "p_exact": "P(a forced answer parses to the gold answer), read by teacher forcing at the "
    "exact temperature (the forced-answer temperature; T = 1 when it is 0, greedy): the sum over "
    "the integer forms of the gold answer and their endings (cotaudit.probing.exact), a lower "
    "bound on that probability",
    "covered_exact": "the mass of forced answers that begin in an enumerated integer form of any "
    "answer (1 - covered: answers the forms leave out)",
    "pass_exact": f"a checkpoint of an exact curve passes when p_exact(f) >= {PASS_THRESHOLD}; "
    "every statistic of the exact curves (*_exact) reads them as the sampled ones are read",
    "exact_gap": "per explanation, mean over its probed cuts (each context's 0% probe and "
    "fractions) of p_exact - p; exact_gap_abs: of |p_exact - p| (estimator both)",
    "anchoring_exact": "wrong-key anchoring reads the explanations' final answers, no forced "
    "answer: it is the same whichever estimator read the curves (no *_exact counterpart)",
}
"""What the exact estimator's values are (in the log metadata of a run that reads them)."""


@task
@checked_task
def trace_tutor(
    problems: int = 50,
    dataset: str = VENDORED,
    conditions: str | list[str] = DEFAULT_CONDITIONS,
    fractions: str | list[float] = DEFAULT_FRACTIONS,
    cuts: str = "fractions",
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
    estimator: str = "sampled",
    resample: int = 0,
    resample_max_cuts: int = 20,
    resample_temperature: float = 0.7,
    paper: bool = False,
    first_row: int = 0,
) -> Task:
    """The trace_tutor study on the first ``problems`` GSM8K test problems; each parameter but
    ``paper`` is a field of :class:`TraceTutorSettings`, which says what it means.

    Args:
      paper: Run the study's published configuration (the values and quotes of
        :data:`cotaudit.studies.trace_tutor.paper.PAPER`); a parameter also given keeps its value
        and, where it differs from the paper's, is recorded as an override.
    """
    resolved, paper_configuration = PAPER.configure(
        paper,
        dict(
            problems=problems,
            dataset=dataset,
            conditions=conditions,
            fractions=fractions,
            cuts=cuts,
            probe_samples=probe_samples,
            temperature=temperature,
            max_explanation_tokens=max_explanation_tokens,
            answer_max_tokens=answer_max_tokens,
            forced_answer_tag=forced_answer_tag,
            system_prompt=system_prompt,
            bootstrap_samples=bootstrap_samples,
            seed=seed,
            tokenizer=tokenizer,
            contrast_model=contrast_model,
            metrics=metrics,
            estimator=estimator,
            resample=resample,
            resample_max_cuts=resample_max_cuts,
            resample_temperature=resample_temperature,
            first_row=first_row,
        ),
        given_arguments(),
    )
    return _study_task(TraceTutorSettings.of(**resolved), paper_configuration)


def _samples(settings: TraceTutorSettings, problems: list[Any]) -> list[Sample]:
    """One sample per problem and condition (id ``p<index>-<condition>``)."""
    return [
        Sample(
            id=f"p{p.index:04d}-{cond}",
            input=to_inspect(tutor_messages(p.question, cond, p.answer, settings.system_prompt)),
            target=str(p.answer),
            metadata={
                "pair_id": f"p{p.index:04d}",
                "condition": cond,
                "gold": p.answer,
                "key": tutor_key(cond, p.answer),
                "question": p.question,
            },
        )
        for p in problems
        for cond in settings.conditions
    ]


def _cluster_metrics(metric_set: str, estimator: str = "sampled") -> list[Any]:
    """The contrastive cluster F1 of each probe context (compact: its F1, n and interval), of
    each curve estimator the run reads (``cluster_<probe>``, ``cluster_<probe>_exact``)."""
    out = []
    for curves in curve_estimators(estimator):
        for probe in ("visible", "masked"):
            out.append(_cluster_metric(metric_set, probe, curves))
    return out


def _cluster_metric(metric_set: str, probe: str, curves: CurveEstimator) -> Any:
    """The contrastive cluster F1 of one probe context's features as ``curves`` read them."""
    prefix = estimator_key(f"cluster_{probe}", curves)

    def feature(name: str) -> str:
        return estimator_key(f"{name}_{probe}", curves)

    hypothesis = ClusterHypothesis(
        features=tuple(feature(name) for name in CLUSTER_DIRECTIONS),
        directions={feature(name): d for name, d in CLUSTER_DIRECTIONS.items()},
        primary=feature("auc"),
        class_key="condition",
        positive_class="answer_key",
        negative_class="question_only",
        unit_key="pair_id",  # the F1 interval resamples problems
    )
    keys = None if metric_set == "all" else cluster_compact_keys(metric_keys(prefix))
    return cluster_f1_metric(hypothesis, prefix=prefix, keys=keys)


def _with_resampling(settings: TraceTutorSettings, probe: Solver) -> Solver:
    """``probe``, then with ``-T resample`` the resampling of each explanation from its sentence
    cuts against the gold answer (forced answers on the same cuts with the study's tag)."""
    if not settings.resample:
        return probe
    return chain(
        probe,
        resample_probe(
            continuations=settings.continuations(
                max_tokens=settings.max_explanation_tokens, reference="gold"
            ),
            forced=settings.forced_answers(),
        ),
    )


def _study_task(settings: TraceTutorSettings, paper_configuration: dict | None) -> Task:
    """The task of :func:`trace_tutor` from its checked settings (``paper_configuration``: the
    log record of the paper configuration applied, or None)."""
    contrast = contrast_options(settings.contrast_model)
    fracs = settings.fractions
    loaded = problems_from_row(
        settings.dataset, limit=settings.problems, first_row=settings.first_row
    )
    exact = EXACT_DEFINITIONS
    exact_metadata: dict[str, Any] = {"estimator": settings.estimator}
    if reads_exact(settings.estimator):
        exact_metadata["exact_temperature"] = exact_temperature(settings.temperature)
    headline_order = curve_estimators(settings.estimator)
    return Task(
        dataset=MemoryDataset(
            _samples(settings, loaded.items), name="gsm8k", location=loaded.source
        ),
        solver=_with_resampling(
            settings,
            trace_tutor_probe(settings),
        ),
        scorer=trace_tutor_scorer(),
        metrics=[
            *run_metrics(settings),
            *_cluster_metrics(settings.metrics, settings.estimator),
            *([resample_summary(prefix=STUDY_PREFIX)] if settings.resample else []),
        ],
        epochs=Epochs(1, mean_keep_text()),
        headline_metric=HeadlineMetric(
            scorer="trace_tutor_scorer", metric=headline_of(settings.estimator)
        ),
        viewer=viewer_config(sample_table(settings.estimator)),
        version=TASK_VERSION,
        metadata={
            "study": "trace_tutor",
            "prompts": tutor_prompt_texts(settings.system_prompt, settings.forced_answer_tag),
            "fractions": list(fracs),
            "cuts": settings.cuts,
            **({"first_row": settings.first_row} if settings.first_row else {}),
            "non_integer_dropped": loaded.non_integer_dropped,
            "definitions": DEFINITIONS | (exact if reads_exact(settings.estimator) else {}),
            **exact_metadata,
            HEADLINES_KEY: [
                *(
                    trace_headline_spec(auc_max=fracs[-1] - fracs[0], estimator=curves).record()
                    for curves in headline_order
                ),
                *(
                    cluster_headline_spec(
                        estimator_key(f"cluster_{probe}", curves), "problem", "problems"
                    ).record()
                    for curves in headline_order
                    for probe in ("visible", "masked")
                ),
            ],
            **contrast,
            **({"paper_configuration": paper_configuration} if paper_configuration else {}),
        },
    )
