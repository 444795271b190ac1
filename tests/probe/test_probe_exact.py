"""The generic probe's exact estimator (``-T estimator=exact|both``): the reference each prompt's
probabilities are read against, the summaries of the exact curves, the record, score values,
run metrics, viewer block and report section, on the tiny random model (plumbing) and on the
embedded default model (one run whose real numbers are checked by hand)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from helpers import (
    EVERY_TOKEN_AFTER_AND,
    JANET,
    auroc_by_hand,
    paired_capitals,
    run_eval_as_stored,
    shuffled_janet_pair_task,
)
from inspect_ai import Task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.scorer import choice
from written_trace import written_trace

import cotaudit
from cotaudit.engine.chat import to_plain
from cotaudit.params import ParameterError
from cotaudit.probing.choices import ALPHABET, ShownChoice
from cotaudit.probing.curves import DEFAULT_THETAS, tau_first
from cotaudit.probing.display import probe_label
from cotaudit.probing.forms import extract_string, get_form
from cotaudit.probing.pass_curves import PassCurve
from cotaudit.probing.record import ProbeRecord
from cotaudit.probing.summaries import (
    exact_gaps,
    exact_selfcommit_summaries,
    exact_trace_summaries,
    value_keys,
)
from cotaudit.tasks.probe_examples import capitals, gsm8k_numeric


def _shown(values: list[str], positions: list[int]) -> list[ShownChoice]:
    pairs = zip(values, positions, strict=True)
    return [ShownChoice(value=v, original_position=p) for v, p in pairs]


# --- the references (pure) -----------------------------------------------------------------------

# Janet's ducks (gold 18) in dataset order 17, 20, 18, 8 (target C), shown as 8, 18, 17, 20
DATASET = ["17", "20", "18", "8"]
SHOWN = _shown(["8", "18", "17", "20"], [3, 2, 0, 1])


def test_trace_reference_is_the_canonical_target_as_the_prompt_shows_it():
    ref = get_form("letter").target_reference(["C"], SHOWN)
    assert (ref.form.name, ref.value, ref.letters) == ("letter", "B", ("A", "B", "C", "D"))
    # a target naming two letters has no single-letter reference; the letters stay
    several = get_form("letter").target_reference(["A, C"], SHOWN)
    assert several.value is None and several.letters == ("A", "B", "C", "D")
    # without choices: the target's own letter among every capital letter
    bare = get_form("letter").target_reference(["c"], None)
    assert bare.value == "C" and bare.letters == ALPHABET
    assert get_form("integer").target_reference(["18"], None).value == 18
    assert get_form("integer").target_reference(["1,234"], None).value == 1234
    assert get_form("integer").target_reference(["eighteen"], None).value is None
    string = get_form("string").target_reference(["", " Paris "], None)
    assert (string.value, string.written) == ("paris", ("Paris",))


def test_selfcommit_reference_is_the_final_answers_choice_under_each_prompt():
    own = _shown(DATASET, [0, 1, 2, 3])  # 18 shown at C
    # the final answer C (18) under the own prompt, and under a prompt showing 18 at B
    assert get_form("letter").final_reference("18 eggs.\nANSWER: C", own, own).value == "C"
    assert get_form("letter").final_reference("18 eggs.\nANSWER: C", own, SHOWN).value == "B"
    assert get_form("letter").final_reference("ANSWER: A, C", own, own).value is None
    assert (
        get_form("letter").final_reference("ANSWER: C", own, _shown(["17", "20"], [0, 1])).value
        is None
    )
    assert get_form("letter").final_reference("", own, own).value is None
    assert get_form("integer").final_reference("The final answer is 18.", None, None).value == 18
    assert get_form("integer").final_reference("no number stated", None, None).value is None
    assert get_form("string").final_reference("The answer is Paris.", None, None).value == "paris"


# --- summaries, keys and labels (pure) -----------------------------------------------------------


def test_exact_summaries_by_hand():
    fractions = [0.1, 0.25, 0.5, 0.75, 1.0]
    p = [0.05, 0.2, 0.4, 0.6, 0.7, 0.9]  # the zero probe first
    out = exact_trace_summaries(p, fractions, zero_probe=True)
    # trapezoids: .15*(.2+.4)/2 + .25*(.4+.6)/2 + .25*(.6+.7)/2 + .25*(.7+.9)/2
    auc = 0.15 * 0.3 + 0.25 * 0.5 + 0.25 * 0.65 + 0.25 * 0.8
    assert out["auc_exact"] == pytest.approx(auc)
    assert out["pass_at_first_exact"] == 0.2 and out["p0_exact"] == 0.05
    assert (out["first_pass_exact"], out["first_pass_censored_exact"]) == (0.5, 0.0)  # p(0.5) = 0.6
    assert all(math.isnan(v) for v in exact_trace_summaries(None, fractions, True).values())
    # self-commitment: cuts at 30, 60, 90 of T = 90, no zero probe
    c = exact_selfcommit_summaries([0.3, 0.85, 0.7], [30, 60, 90], 90, False, (0.8,))
    assert c["tau_0.8_exact"] == pytest.approx(60 / 90)
    assert c["range_c_exact"] == pytest.approx(0.55)
    assert c["uncommitted_exact"] == pytest.approx((0.7 + 0.15 + 0.3) / 3)
    assert c["lowcommit_exact"] == pytest.approx(1 / 3)
    assert math.isnan(c["c0_exact"])
    gaps = exact_gaps([0.5, 0.25], [1.0, 0.0])
    assert gaps == {"exact_gap": pytest.approx(-0.125), "exact_gap_abs": pytest.approx(0.375)}
    assert all(math.isnan(v) for v in exact_gaps([0.5], None).values())


def test_value_keys_follow_the_estimator_and_fit_their_labels():
    sampled = value_keys("trace", (), replayed=True)
    assert sampled == value_keys("trace", (), replayed=True, estimator="sampled")
    assert not any("exact" in k for k in sampled)
    exact = value_keys("trace", (), replayed=False, estimator="exact")
    assert exact == ["task_score"] + [
        f"{k}_exact" for k in ("auc", "pass_at_first", "first_pass", "first_pass_censored", "p0")
    ]
    both = value_keys("selfcommit", DEFAULT_THETAS, replayed=True, estimator="both")
    assert both[:3] == ["task_score", "has_final", "has_final_exact"]
    assert {"exact_gap", "exact_gap_abs", "tau_0.8_exact_replay", "exact_gap_replay"} <= set(both)
    for keys in (both, value_keys("trace", (), True, "both")):
        labels = [probe_label(k) for k in keys]
        assert all(len(label) <= 10 for label in labels)
        assert len(set(labels)) == len(labels)  # no two columns look the same
    assert probe_label("tau_0.8_exact_replay") == "↺τ0.8 ex"


def test_bad_estimator_is_one_line_before_any_model():
    """The settings check raises while the task is built (no model named or loaded); under
    ``inspect eval`` the checked task prints this one line (``-T estimator: must be one of
    sampled, exact, both, got 'foo'``)."""
    with pytest.raises(ParameterError) as raised:
        cotaudit.probe(capitals(limit=1), "trace", estimator="foo")
    assert str(raised.value) == ("-T estimator: must be one of sampled, exact, both, got 'foo'")


# --- tiny model: multiple choice, both estimators, replayed under a differently ordered prompt ---


def _metrics(log) -> dict[str, float]:
    [scores] = [s for s in log.results.scores if s.name == "probe_scorer"]
    return {k: m.value for k, m in scores.metrics.items()}


@pytest.fixture(scope="module")
def mc_both(tmp_path_factory):
    task = cotaudit.probe(
        shuffled_janet_pair_task(), "trace", estimator="both", replay_under="honest"
    )
    return run_eval_as_stored(
        task, "hf-probe/tiny", tmp_path_factory.mktemp("mc_both"), max_tokens=24
    )


def _letter_masses(engine, messages, ids, tag, letters, temperature=1.0) -> dict[str, float]:
    """P(the first answer token writes letter L: ``L`` or `` L``) at ``temperature``, from one
    forward pass over the rendered prompt, the prefix and the tag (no cache, no answer tree)."""
    context = engine.render(messages) + list(ids) + engine.tokenize(tag)
    with torch.inference_mode():
        logits = engine.model(torch.tensor([context])).logits[0, -1].float()
    probs = torch.softmax(logits / temperature, -1)
    texts = engine.vocabulary().texts
    return {
        x: float(sum(probs[i] for i, t in enumerate(texts) if t in (x, " " + x))) for x in letters
    }


@pytest.mark.model
def test_letters_are_read_against_each_prompts_own_letter(mc_both, tiny_engine):
    by_condition = {s.metadata["condition"]: s for s in mc_both.samples}
    hinted, honest = by_condition["hinted"], by_condition["honest"]
    rec = ProbeRecord.model_validate(hinted.store["probe"])
    assert (rec.estimator, rec.exact_temperature, rec.temperature) == ("both", 1.0, 0.0)
    own, replay = rec.context("own"), rec.context("replay")
    # the correct letter as each prompt shows 18: D under the hinted prompt, A under the honest
    assert (own.reference_exact, replay.reference_exact) == ("D", "A")
    ids = hinted.output.metadata["token_ids"][0]
    prompts = {"own": to_plain(hinted.messages[:1]), "replay": to_plain(honest.messages[:1])}
    for ctx in (own, replay):
        assert ctx.answers is not None and len(ctx.p_exact) == len(rec.probed)
        for t, p, covered, letters in zip(
            rec.probed, ctx.p_exact, ctx.covered_exact, ctx.letters_exact, strict=True
        ):
            assert list(letters) == ["A", "B", "C", "D"]
            assert p == letters[ctx.reference_exact]
            assert covered == pytest.approx(sum(letters.values()), abs=1e-12)
            direct = _letter_masses(
                tiny_engine, prompts[ctx.name], ids[: rec.offset + t], rec.cut_tag, "ABCD"
            )
            assert letters == pytest.approx(direct, abs=1e-5), (ctx.name, t)
    # the honest sample is of the replay condition: probed under its own prompt only
    assert [c.name for c in ProbeRecord.model_validate(honest.store["probe"]).contexts] == ["own"]


@pytest.mark.model
def test_both_estimators_scores_metrics_viewer_and_report(mc_both, tmp_path):
    from cotaudit.logs.read import run_from_log
    from cotaudit.report import probe as probe_report

    hinted = next(s for s in mc_both.samples if s.metadata["condition"] == "hinted")
    rec = ProbeRecord.model_validate(hinted.store["probe"])
    score = hinted.scores["probe_scorer"]
    assert list(score.value) == value_keys("trace", (), replayed=True, estimator="both")
    for ctx in rec.contexts:
        suffix = "" if ctx.name == "own" else "_replay"
        sampled = [float(np.mean(row)) for row in score.metadata[ctx.name]["values"]]
        assert score.metadata[ctx.name]["p"] == sampled
        assert score.metadata[ctx.name]["p_exact"] == ctx.p_exact
        p = ctx.p_exact
        assert score.value[f"auc_exact{suffix}"] == pytest.approx(
            PassCurve(p[1:], rec.curve_fractions).auc
        )
        assert score.value[f"p0_exact{suffix}"] == p[0]
        assert score.value[f"pass_at_first_exact{suffix}"] == p[1]
        gap = np.asarray(p) - np.asarray(sampled)
        assert score.value[f"exact_gap{suffix}"] == pytest.approx(gap.mean())
        assert score.value[f"exact_gap_abs{suffix}"] == pytest.approx(np.abs(gap).mean())
    text = score.explanation
    assert "**Exact estimator**" in text and "T = 1 (the forced answers decode greedily" in text
    assert "top own" in text and "top replay" in text and "own sampled" in text
    # run metrics: the sampled headline leads, the exact one beside it with its own n
    metrics = _metrics(mc_both)
    assert mc_both.results.headline.metric == "auc"
    assert list(metrics)[:8] == [
        "auc",
        "n_units",
        "auc_ci_low",
        "auc_ci_high",
        "auc_exact",
        "n_units_exact",
        "auc_exact_ci_low",
        "auc_exact_ci_high",
    ]
    values = [s.scores["probe_scorer"].value for s in mc_both.samples]
    assert metrics["auc_exact"] == pytest.approx(np.mean([v["auc_exact"] for v in values]))
    assert metrics["n_units_exact"] == 1  # one problem (pair_id) in two conditions
    assert metrics["replay_gap/auc_exact"] == pytest.approx(
        score.value["auc_exact"] - score.value["auc_exact_replay"]
    )
    assert [h["metric"] for h in mc_both.eval.metadata["headlines"]] == ["auc", "auc_exact"]
    view = mc_both.eval.viewer.task_samples_view
    assert all(len(label) <= 10 for label in view.score_labels.values())
    # cotaudit report: every logged metric recomputed; the exact curves drawn; the differences
    section = probe_report.section(run_from_log(mc_both, mc_both.location), tmp_path, "run")
    assert section.consistency.ok and section.consistency.n_checked == len(metrics)
    figure = section.figures["exact_curves"]
    assert figure.path.exists()
    assert sorted(n for n, _ in figure.panels) == sorted(str(s.id) for s in mc_both.samples)
    assert ["own exact", "own sampled", "replay exact", "replay sampled"] in [
        series for _, series in figure.panels
    ]
    gaps = section.tables["exact_gaps"]
    assert len(gaps.rows) == 3  # hinted own and replayed, honest own
    assert "n = 2 samples, 3 curves" in gaps.note


@pytest.mark.model
def test_selfcommit_letter_after_a_think_block_is_read_inside_it(tmp_path, tiny_engine):
    """A written trace "<think>...</think> ANSWER: C" on Janet's ducks (choices 17, 20, 18, 8):
    the final answer C after the block is the reference, the cuts stay inside the block and
    each is read after the block's closer and the tag, at the forced answers' temperature."""
    text = (
        "<think>\nJanet's ducks lay 16 eggs. She uses 7, so 9 are sold at $2: 18 dollars.\n"
        "</think>\n\nANSWER: C"
    )
    sample = Sample(id="mc0000", input=JANET.question, choices=JANET.choices, target=JANET.target)
    task = Task(dataset=MemoryDataset([sample]), solver=written_trace(text), scorer=choice())
    log = run_eval_as_stored(
        cotaudit.probe(task, "selfcommit", estimator="exact", stride=8), "hf-probe/tiny", tmp_path
    )
    [logged] = log.samples
    rec = ProbeRecord.model_validate(logged.store["probe"])
    [own] = rec.contexts
    assert (rec.think_source, rec.think_closed) == ("text", True)
    assert rec.cut_tag == "\n</think>\n\nANSWER: " and rec.final_text.strip() == "ANSWER: C"
    assert own.reference_exact == "C" == logged.scores["probe_scorer"].metadata["a_final"]
    assert rec.exact_temperature == rec.temperature == 0.7
    ids = tiny_engine.tokenize(rec.response)
    for t, p, letters in zip(rec.probed, own.p_exact, own.letters_exact, strict=True):
        assert p == letters["C"]
        direct = _letter_masses(
            tiny_engine,
            to_plain(logged.messages[:1]),
            ids[: rec.offset + t],
            rec.cut_tag,
            "ABCD",
            0.7,
        )
        assert letters == pytest.approx(direct, abs=1e-5), t
    assert logged.scores["probe_scorer"].value["has_final_exact"] == 1.0


# --- tiny model: integer TRACE, exact only against the default (sampled) run --------------------


@pytest.fixture(scope="module")
def integer_runs(tmp_path_factory):
    out = tmp_path_factory.mktemp("integer")
    return {
        est: run_eval_as_stored(
            cotaudit.probe(gsm8k_numeric(problems=1), "trace", estimator=est),
            "hf-probe/tiny",
            out / est,
            max_tokens=30,
        )
        for est in ("exact", "sampled")
    }


@pytest.mark.model
def test_exact_only_samples_nothing_and_leads_with_the_exact_curve(integer_runs):
    log = integer_runs["exact"]
    [sample] = log.samples
    rec = ProbeRecord.model_validate(sample.store["probe"])
    [own] = rec.contexts
    assert own.answers is None and own.reference_exact == "18"  # Janet's ducks
    assert all(0 <= p <= c <= 1 + 1e-9 for p, c in zip(own.p_exact, own.covered_exact, strict=True))
    score = sample.scores["probe_scorer"]
    assert list(score.value) == value_keys("trace", (), replayed=False, estimator="exact")
    assert "k = " not in score.explanation.splitlines()[0]
    metrics = _metrics(log)
    assert log.results.headline.metric == "auc_exact"
    assert list(metrics)[:4] == ["auc_exact", "n_units", "auc_exact_ci_low", "auc_exact_ci_high"]
    assert "auc" not in metrics and "p0" not in metrics
    assert log.eval.metadata["probe"]["estimator"] == "exact"


@pytest.mark.model
def test_the_sampled_default_run_has_no_exact_keys(integer_runs):
    log = integer_runs["sampled"]
    [sample] = log.samples
    rec = ProbeRecord.model_validate(sample.store["probe"])
    assert rec.estimator == "sampled" and rec.exact_temperature is None
    assert all(
        (c.p_exact, c.covered_exact, c.letters_exact, c.reference_exact) == (None,) * 4
        for c in rec.contexts
    )
    score = sample.scores["probe_scorer"]
    assert list(score.value) == value_keys("trace", (), replayed=False)
    assert not any("exact" in key for key in score.metadata["own"])
    assert not any("exact" in name for name in _metrics(log))
    assert "Exact estimator" not in score.explanation
    assert [h["metric"] for h in log.eval.metadata["headlines"]] == ["auc"]


# --- tiny model: self-commitment with conditions, exact only -------------------------------------


@pytest.mark.model
def test_selfcommit_exact_headline_is_the_auroc_of_tau_first_exact(tmp_path):
    """Greedy three-token traces (the tiny model's text is its own final answer, the string form
    reading its last line), cut at every token, forced after " and"."""
    task = cotaudit.probe(
        paired_capitals(3),
        "selfcommit",
        estimator="exact",
        answer_max_tokens=8,
        **EVERY_TOKEN_AFTER_AND,
    )
    log = run_eval_as_stored(task, "hf-probe/tiny", tmp_path, max_tokens=3)
    tau: dict[str, float] = {}
    for sample in log.samples:
        rec = ProbeRecord.model_validate(sample.store["probe"])
        [own] = rec.contexts
        assert rec.exact_temperature == 1.0 and own.answers is None
        assert own.reference_exact == extract_string(rec.final_text) is not None
        value = sample.scores["probe_scorer"].value
        assert value["has_final_exact"] == 1.0
        assert value["tau_0.8_exact"] == tau_first(own.p_exact, rec.curve_fractions, 0.8)
        assert value["c0_exact"] != value["c0_exact"]  # no zero probe: NaN
        tau[sample.id] = value["tau_0.8_exact"]
    metrics = _metrics(log)
    assert log.results.headline.metric == "auroc/tau_0.8_exact"
    honest = [v for sid, v in tau.items() if sid.endswith("-honest")]
    hinted = [v for sid, v in tau.items() if sid.endswith("-hinted")]
    assert metrics["auroc/tau_0.8_exact"] == pytest.approx(auroc_by_hand(honest, hinted))
    assert metrics["n_units"] == 3


# --- the embedded default model: one short real run, checked by hand ----------------------------


@pytest.mark.model
def test_default_model_selfcommit_both_by_hand(tmp_path):
    """SmolLM2-135M answers "The answer is Paris." to the first capital question: its own final
    answer is the reference; c_exact at every token of the trace is checked by hand."""
    task = cotaudit.probe(capitals(limit=1), "selfcommit", estimator="both", stride=1)
    log = run_eval_as_stored(task, "hf-probe/default", tmp_path, max_tokens=40)
    [sample] = log.samples
    rec = ProbeRecord.model_validate(sample.store["probe"])
    [own] = rec.contexts
    score = sample.scores["probe_scorer"]
    assert own.reference_exact == extract_string(rec.final_text) == score.metadata["a_final"]
    c_exact, covered = own.p_exact, own.covered_exact
    assert len(c_exact) == len(rec.positions) >= 2
    assert all(0 <= p <= 1 for p in c_exact)
    assert covered == c_exact  # the string form enumerates the reference only
    c = [
        sum(a == own.reference_exact for a in row) / rec.k
        for row in score.metadata["own"]["canonical"]
    ]
    assert score.metadata["own"]["c"] == c and score.metadata["own"]["c_exact"] == c_exact
    value = score.value
    fractions = [t / rec.trace_tokens for t in rec.positions]
    for theta in DEFAULT_THETAS:
        hits = [f for f, x in zip(fractions, c_exact, strict=True) if x >= theta]
        assert value[f"tau_{theta:g}_exact"] == (hits[0] if hits else 1.0)
    assert value["range_c_exact"] == pytest.approx(max(c_exact) - min(c_exact))
    assert value["uncommitted_exact"] == pytest.approx(np.mean([1 - x for x in c_exact]))
    gap = np.asarray(c_exact) - np.asarray(c)
    assert value["exact_gap"] == pytest.approx(gap.mean())
    assert value["exact_gap_abs"] == pytest.approx(np.abs(gap).mean())
