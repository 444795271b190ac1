"""trace_tutor with ``-T resample``: continuations of the explanation from its sentence cuts
scored against the gold answer, beside the study's curves (embedded model)."""

from __future__ import annotations

import pytest
from helpers import run_eval

from cotaudit.answers import extract_final_answer
from cotaudit.engine.base import PrefixRequest
from cotaudit.params import ParameterError
from cotaudit.probing.positions import Schedule
from cotaudit.probing.resample_record import ResampleRecord
from cotaudit.probing.sentences import completed_sentences, sentence_ends
from cotaudit.providers.hf_probe import _load_engine, resolve_model_path
from cotaudit.studies.trace_tutor.prompts import TUTOR_FORCED_ANSWER_TAG, tutor_messages
from cotaudit.studies.trace_tutor.stats import PREFIX_FRACTIONS


def test_bad_resample_or_cuts_parameter_is_one_line():
    from cotaudit.tasks.trace_tutor import trace_tutor

    with pytest.raises(ParameterError, match=r"^-T resample_temperature: must be >= 0.0"):
        trace_tutor(resample=2, resample_temperature=-1.0)
    with pytest.raises(ParameterError, match="^-T cuts: must be one of fractions, sentences"):
        trace_tutor(cuts="tokens")


@pytest.mark.model
def test_greedy_resampling_against_the_gold_answer_and_sentence_cuts(tmp_path):
    """Greedy continuations reproduce the explanation, so each reaches the gold answer exactly
    when the explanation's own final answer is the gold one: r(t) is that indicator at every
    cut. With ``-T cuts=sentences`` the study's own probes cut each fraction's prefix at the end
    of its sentence: every forced answer is the engine's after that prefix."""
    log = run_eval(
        "tasks/trace_tutor.py",
        "hf-probe/default",
        tmp_path,
        task_args={
            "problems": 1,
            "conditions": "answer_key",
            "max_explanation_tokens": 192,
            "resample": 1,
            "resample_temperature": 0.0,
            "resample_max_cuts": 2,
            "cuts": "sentences",
        },
    )
    [sample] = log.samples
    score = sample.scores["trace_tutor_scorer"]
    record = ResampleRecord.model_validate(score.metadata["resample"])
    gold = int(sample.target)
    assert record.reference == gold
    own = extract_final_answer(sample.output.completion)
    reached = float(own == gold)
    assert record.resampled == [reached] * len(record.cuts) and 2 <= len(record.cuts) <= 3
    assert score.value["resample_r_mean"] == reached
    metrics = {name: m.value for s in log.results.scores for name, m in s.metrics.items()}
    assert metrics["resample_n_samples"] == 1 and metrics["resample_r_mean"] == reached

    from cotaudit.report import build_report

    [section] = build_report([log.location], tmp_path / "report").sections["trace_tutor"]
    assert section.consistency.ok

    # the study's probes at sentence ends: round(f * T) run on to the end of its sentence
    engine = _load_engine(resolve_model_path("default"), "float32", "cpu")
    probe = sample.store["trace_tutor"]
    ids, length = probe["token_ids"], probe["length_tokens"]
    ends = sentence_ends(ids, engine.detokenize)
    at_fractions = Schedule(kind="fractions", fractions=PREFIX_FRACTIONS, zero_probe=True)
    fraction_cuts = at_fractions.probed(length)
    assert probe["cuts"] == "sentences" and log.eval.metadata["cuts"] == "sentences"
    assert probe["positions"] == completed_sentences(fraction_cuts, ends)
    assert set(probe["positions"]) <= {0, *ends}
    assert probe["positions"] != fraction_cuts  # some fraction's cut fell inside a sentence
    cuts = sorted(set(probe["positions"]))
    for context, condition in (("visible", "answer_key"), ("masked", "question_only")):
        rows = engine.continue_prefixes_sync(
            PrefixRequest(
                messages=tutor_messages(sample.metadata["question"], condition, gold),
                cot_token_ids=ids,
                positions=cuts,
                tag=TUTOR_FORCED_ANSWER_TAG,
                k=1,
                max_tokens=8,
                temperature=0.0,
                seed=0,
            )
        )
        by_cut = dict(zip(cuts, rows, strict=True))
        answers = probe["probes"][context]["answers"]
        assert answers == [by_cut[t] for t in probe["positions"]], context
