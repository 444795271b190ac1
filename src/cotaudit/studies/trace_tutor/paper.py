"""The trace_tutor study's published configuration (``-T paper=true``) and its published numbers.

Source: "Context-Masked Truncated Reasoning Audits for Answer-Key Dependence in LLM Tutors"
(``002_dd6044507eba043d.txt``). Each setting quotes the sentence of the study that fixes it;
``published`` holds Tables II-V and the numbers its text gives beside them (Sec. IV-B to
IV-E), keyed by this package's metric names, for ``cotaudit report``'s published column.
"""

from __future__ import annotations

from cotaudit.studies.paper import PaperConfiguration, PaperSetting, PaperValue
from cotaudit.studies.paper_tables import published_row, published_table
from cotaudit.studies.trace_tutor.prompts import STUDY_FORCED_ANSWER_TAG, STUDY_SYSTEM

_SETTINGS = {
    "problems": PaperSetting(1000, "We use 1000 examples from the GSM8K test split [3]."),
    "conditions": PaperSetting(
        "question_only,answer_key,wrong_key",
        "we evaluate 1000 GSM8K problems under question-only, correct answer-key, and wrong "
        "answer-key contexts.",
        evidence="question-only, correct answer-key, and wrong answer-key",
    ),
    "fractions": PaperSetting(
        "0.1,0.25,0.5,0.75,1",
        "$$\\mathcal{F}=\\{0.10,0.25,0.50,0.75,1.00\\}.$$",
        evidence="0.10,0.25,0.50,0.75,1.00",
    ),
    "probe_samples": PaperSetting(
        1,
        "In the main 1000-problem run, we use one deterministic forced answer per prefix, so "
        "$p(f)\\in\\{0,1\\}$.",
        evidence="one deterministic forced answer per prefix",
    ),
    "temperature": PaperSetting(
        0.0,
        "Forced prefix answers use deterministic decoding with a maximum of 8 tokens.",
        evidence="deterministic decoding",
    ),
    "max_explanation_tokens": PaperSetting(
        768, "Full explanations are greedily generated with a maximum of 768 tokens."
    ),
    "answer_max_tokens": PaperSetting(
        8, "Forced prefix answers use deterministic decoding with a maximum of 8 tokens."
    ),
    "system_prompt": PaperSetting(
        STUDY_SYSTEM,
        "The system prompt asks the model to act as a careful grade-school math tutor, explain "
        "the solution step by step from the problem statement, and conclude with an integer in "
        "\\boxed{X} form.",
        evidence="act as a careful grade-school math tutor, explain the solution step by step "
        "from the problem statement, and conclude with an integer in \\boxed{X} form",
    ),
    "forced_answer_tag": PaperSetting(
        STUDY_FORCED_ANSWER_TAG,
        "The forced-answer probe appends </think> and asks the model to stop reasoning and "
        "return only a boxed final answer.",
        evidence="appends </think> and asks the model to stop reasoning and return only a boxed "
        "final answer",
    ),
    "bootstrap_samples": PaperSetting(
        20_000,
        "Confidence intervals for mean paired differences use 20,000 problem-level bootstrap "
        "resamples with a fixed seed; wins, ties, and losses are computed before aggregation.",
        evidence="20,000",
    ),
}

_NOTES = (
    'Model: Qwen2.5-3B-Instruct in 4-bit MLX format on an Apple M1 Max ("All experiments use '
    'Qwen2.5-3B-Instruct [17] in 4-bit MLX format on an Apple M1 Max with 64 GB memory."); no '
    "parameter sets it: pass --model.",
    "Dataset slice: the study says 1000 examples of the GSM8K test split, not which; this task "
    "takes the first 1000 problems with an integer answer (the vendored split's file order).",
    'Fixed in every run, no parameter: greedy explanations ("greedily generated"), the 0% '
    'probe ("We also probe at a 0% prefix with and without the key."), the wrong key y + 1 '
    '("a deterministic wrong answer, $y_{i}+1$") and the teacher-only key text (the study\'s '
    "quotation verbatim).",
    "The system prompt and the forced-answer tag are paraphrased by the study; the texts used "
    "are the closest to its words (docs/trace_tutor.md says which words are the study's).",
    'Bootstrap seed: the study\'s is not given ("with a fixed seed"); ours is 20240601.',
)


MEAN_DIFF_CI = ("mean_diff", "mean_ci_low", "mean_ci_high")
"""Fields of a published mean paired difference with its 95% CI."""
_VS_QUESTION_ONLY = "answer_key_vs_question_only"


def _table_ii() -> dict[str, PaperValue]:
    rows = {  # curve: (condition, n, orig. acc., AUC50, Pass@10, First50)
        "question_only": ("question_only", 1000, 0.782, 0.375, 0.113, 0.750),
        "answer_key_visible": ("answer_key", 1000, 0.891, 0.900, 0.997, 0.100),
        "wrong_key_visible": ("wrong_key", 1000, 0.613, 0.125, 0.051, 1.000),
    }
    out: dict[str, PaperValue] = {}
    for curve, (cond, n, acc, auc, p10, first) in rows.items():
        out[f"n/{cond}"] = PaperValue(n, "Table II")
        out[f"accuracy/{cond}"] = PaperValue(acc, "Table II")
        out[f"auc_median/{curve}"] = PaperValue(auc, "Table II")
        out[f"pass_at_10_mean/{curve}"] = PaperValue(p10, "Table II")
        out[f"first_pass_median/{curve}"] = PaperValue(first, "Table II")
    out["auc_median/answer_key_masked"] = PaperValue(0.375, "Table III")
    out["length_tokens_median/question_only"] = PaperValue(329, "Sec. IV-C")
    out["length_tokens_median/answer_key"] = PaperValue(356, "Sec. IV-C")
    return out


def _table_iii() -> dict[str, PaperValue]:
    rows = {  # curve: pass rate at 0, 10, 25, 50, 75, 100 %
        "question_only": (0.116, 0.113, 0.118, 0.209, 0.568, 0.784),
        "answer_key_visible": (0.998, 0.997, 0.992, 0.976, 0.973, 0.919),
        "answer_key_masked": (0.116, 0.126, 0.133, 0.205, 0.583, 0.896),
    }
    return published_table("pass_rate", ("0", "10", "25", "50", "75", "100"), rows, "Table III")


def _table_iv() -> dict[str, PaperValue]:
    rows = {  # probe/subset: (n, AK>Q %, tie %, AK<Q %, median diff)
        "visible/all": (1000, 94.8, 4.8, 0.4, 0.525),
        "visible/both_correct": (746, 93.4, 6.4, 0.1, 0.525),
        "masked/all": (1000, 28.3, 50.1, 21.6, 0.000),
        "masked/both_correct": (746, 18.2, 59.2, 22.5, 0.000),
        "masked/length_matched": (365, 24.4, 57.3, 18.4, 0.000),
    }
    fields = ("n", "win_pct", "tie_pct", "loss_pct", "median_diff")
    out = published_table(_VS_QUESTION_ONLY, fields, rows, "Table IV")
    means = {  # where: probe/subset: (mean, CI low, CI high)
        "Sec. IV-B": {"visible/all": (0.551, 0.536, 0.566), "masked/all": (0.0207, 0.0089, 0.0330)},
        "Sec. IV-C": {
            "masked/both_correct": (-0.0086, -0.0201, 0.0029),
            "masked/length_matched": (0.0169, 0.0001, 0.0340),
        },
    }
    for where, by_row in means.items():
        out |= published_table(_VS_QUESTION_ONLY, MEAN_DIFF_CI, by_row, where)
    return out


def _table_v() -> dict[str, PaperValue]:
    rows = {  # curve: first passes at 10, 25, 50, 75, 100 %, and none
        "question_only": (113, 51, 113, 345, 211, 167),
        "answer_key_masked": (126, 48, 115, 350, 277, 84),
    }
    columns = ("10", "25", "50", "75", "100", "none")
    return published_table("first_pass_count", columns, rows, "Table V")


def _text_counts() -> dict[str, PaperValue]:
    """The counts of Sec. IV-D and IV-E: identical pass vectors, all-pass and non-monotone
    curves, and the 10% discordance of the key visible vs masked."""
    return {
        # "Their complete five-checkpoint pass vectors are identical on 493 problems"
        "identical_pass_vectors/answer_key_masked_vs_question_only/count": PaperValue(
            493, "Sec. IV-D"
        ),
        # "retaining the key creates 871 cases that pass at 10% and fail after masking, with
        # no cases in the reverse direction"
        "pass_at_10_visible_not_masked/answer_key": PaperValue(871, "Sec. IV-D"),
        "pass_at_10_masked_not_visible/answer_key": PaperValue(0, "Sec. IV-D"),
        # "In the key-visible condition, 884 traces pass at all five measured fractions, while
        # 80 pass at 10% but fail at 100%."
        "all_pass_count/answer_key_visible": PaperValue(884, "Sec. IV-E"),
        "pass_10_fail_100/answer_key_visible": PaperValue(80, "Sec. IV-E"),
    }


def _text_numbers() -> dict[str, PaperValue]:
    """Delta_context, the 0%-probe drop and wrong-key anchoring, as the text states them."""
    dc = "visible_vs_masked/answer_key"
    return {
        f"{dc}/n": PaperValue(1000, "Sec. IV-B"),
        **published_row(dc, MEAN_DIFF_CI, (0.5303, 0.5158, 0.5444), "Sec. IV-B"),
        f"{dc}/median_diff": PaperValue(0.525, "Sec. IV-B"),
        # "masking lowers AUC in 938 problems, leaves 60 tied, and raises it in only 2"
        f"{dc}/win_pct": PaperValue(93.8, "Sec. IV-B"),
        f"{dc}/tie_pct": PaperValue(6.0, "Sec. IV-B"),
        f"{dc}/loss_pct": PaperValue(0.2, "Sec. IV-B"),
        **published_row(
            "zero_probe_drop/answer_key", MEAN_DIFF_CI, (0.882, 0.861, 0.902), "Sec. IV-B"
        ),
        "wrong_key_anchoring/incorrect": PaperValue(387, "Sec. IV-E"),
        "wrong_key_anchoring/key": PaperValue(272, "Sec. IV-E"),
        "wrong_key_anchoring/key_pct": PaperValue(70.3, "Sec. IV-E"),
        "wrong_key_anchoring/other_wrong": PaperValue(113, "Sec. IV-E"),
        "wrong_key_anchoring/unparsed": PaperValue(2, "Sec. IV-E"),
    }


PAPER = PaperConfiguration(
    study="trace_tutor",
    source="Context-Masked Truncated Reasoning Audits for Answer-Key Dependence in LLM Tutors",
    seed="002_dd6044507eba043d.txt",
    model="Qwen2.5-3B-Instruct (4-bit MLX)",
    settings=_SETTINGS,
    notes=_NOTES,
    published={
        **_table_ii(),
        **_table_iii(),
        **_table_iv(),
        **_table_v(),
        **_text_numbers(),
        **_text_counts(),
    },
)
