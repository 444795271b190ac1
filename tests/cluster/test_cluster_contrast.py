"""The cluster contrast (step 7 of the cluster F1): per-sample notes and the run summary
written into the Inspect log, the optional contrast model, and ``cotaudit contrast``."""

from __future__ import annotations

import asyncio
import math
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from helpers import run_eval, run_eval_as_stored
from inspect_ai import Task
from inspect_ai.dataset import Sample
from inspect_ai.log import EvalLog, read_eval_log
from inspect_ai.model import (
    ChatMessageSystem,
    ChatMessageUser,
    GenerateConfig,
    ModelOutput,
    get_model,
)
from inspect_ai.scorer import Score, Scorer, Target, scorer
from inspect_ai.solver import Generate, Solver, TaskState, solver

from cotaudit.cli import main as cli_main
from cotaudit.cluster.contrast import (
    CONTRAST_MAX_TOKENS,
    CONTRAST_SYSTEM,
    NOTE_MARKER,
    RESULT_KEY,
    contrast_prompt,
    note_line,
    noted_score,
    point_notes,
    summary_text,
    with_notes,
)
from cotaudit.cluster.f1 import cluster_f1
from cotaudit.params import ParameterError, parse_contrast_model
from cotaudit.report.cluster import contrast_model_text
from cotaudit.scorers.cluster_contrast import OPTIONS_KEY, annotate_log, contrast_options
from cotaudit.scorers.cluster_f1 import contrastive_cluster_f1


def _points() -> tuple[np.ndarray, list[str]]:
    """Five hinted points near (10, -10), one hinted point and six honest points near (0, 0).

    By construction the positive cluster (larger a, smaller b: directions +1, -1) holds the five,
    so precision 5/5, recall 5/6, F1 = 2*5 / (2*5 + 0 + 1) = 10/11; the sixth hinted point sits in
    the honest-like cluster.
    """
    rng = np.random.default_rng(7)
    far = rng.normal([10.0, -10.0], 0.5, size=(5, 2))
    near = rng.normal([0.0, 0.0], 0.5, size=(7, 2))
    return np.vstack([far, near]), ["hinted"] * 6 + ["honest"] * 6


# --- pure logic -----------------------------------------------------------------------------


def _result(n_nearest: int = 3):
    X, y = _points()
    ids = [f"s{i}" for i in range(len(y))]
    return cluster_f1(X, y, "hinted", [1, -1], feature_names=["a", "b"], sample_ids=ids, n_boot=0)


def test_point_notes_follow_the_clustering_and_the_contrast() -> None:
    r = _result()
    notes = point_notes(r, "cluster", "honest", n_nearest=3)
    assert set(notes) == {f"s{i}" for i in range(12)}
    assert [n["cluster"] for n in notes.values()].count("positive") == 5
    assert all(notes[f"s{i}"]["cluster"] == "positive" for i in range(5))
    assert notes["s5"] == notes["s5"] | {"cluster": "negative", "class": "hinted", "agrees": False}
    assert sum(not n["agrees"] for n in notes.values()) == 1
    contrast = r.contrast(3)
    for name, size in (("positive", 5), ("negative", 7)):
        members = [n for n in notes.values() if n["cluster"] == name]
        assert sorted(n["rank"] for n in members) == list(range(1, size + 1))
        assert all(n["cluster_size"] == size for n in members)
        nearest = sorted((n for n in members if n["nearest"]), key=lambda n: n["rank"])
        assert [n["point"] for n in nearest] == contrast["clusters"][name]["nearest_ids"]
        # ranks order the distances
        ordered = sorted(members, key=lambda n: n["rank"])
        assert [n["distance"] for n in ordered] == sorted(n["distance"] for n in members)


def test_point_notes_are_empty_for_a_degenerate_clustering() -> None:
    r = cluster_f1(np.ones((4, 1)), ["p", "p", "n", "n"], "p", [1], n_boot=0)
    assert r.degenerate and point_notes(r, "cluster", "n") == {}


def test_note_line_and_explanation_block_are_replaced_not_repeated() -> None:
    notes = point_notes(_result(), "cluster", "honest", n_nearest=1)
    line = note_line(notes["s5"], "hinted", "honest")
    assert line.startswith("`cluster`: honest-like cluster (7 points, 1 hinted), ")
    assert "class hinted, not where its class is expected" in line
    first = with_notes("curve table", [line])
    assert first.startswith("curve table" + NOTE_MARKER) and first.endswith(f"- {line}")
    again = with_notes(first, ["other"])
    assert again.count(NOTE_MARKER) == 1 and again.endswith("- other")
    assert again.startswith("curve table")


def test_summary_names_clusters_nearest_points_and_prefers_logged_values() -> None:
    r = _result()
    contrast = r.contrast(2)
    text = summary_text("cluster", contrast, "honest")
    assert (
        f"F1 {10 / 11:.3g}" in text and "hinted-like cluster: 5 points (5 hinted, 0 honest)" in text
    )
    for i in contrast["clusters"]["negative"]["nearest_ids"]:
        assert f"`{i}`" in text
    logged = summary_text("cluster", contrast, "honest", {"cluster_f1_ci_low": 0.25})
    assert "[0.25, n/a]" in logged


def test_contrast_prompt_cuts_texts_and_does_not_name_the_classes() -> None:
    contrast = _result().contrast(2)
    prompt = contrast_prompt(
        contrast, {"positive": ["x" * 50, "short"], "negative": []}, max_chars=20
    )
    assert "[A1]\n" + "x" * 20 + " [...]" in prompt and "[A2]\nshort" in prompt
    assert "(no transcript)" in prompt
    assert "hinted" not in prompt and "honest" not in prompt
    assert "- a: cluster A" in prompt and "- b: cluster A" in prompt


def test_contrast_model_parameter() -> None:
    assert parse_contrast_model(None) is None and parse_contrast_model("none") is None
    assert parse_contrast_model("openai/gpt-4o") == "openai/gpt-4o"
    for bad in ("gpt-4o", "", " openai/x", 3):
        with pytest.raises(ParameterError, match="-T contrast_model"):
            parse_contrast_model(bad)  # type: ignore[arg-type]


# --- through Inspect (constructed features on mockllm; the clustering needs no model) ----------


@solver
def _passthrough() -> Solver:
    """The sample's "CoT" is fixed text (no model call)."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        state.output = ModelOutput.from_content("mockllm/model", f"text of {state.sample_id}")
        return state

    return solve


@scorer(
    metrics=[
        contrastive_cluster_f1(
            features=["a", "b"],
            class_key="condition",
            positive_class="hinted",
            negative_class="honest",
            directions={"a": 1, "b": -1},
            n_boot=50,
        )
    ]
)
def _features() -> Scorer:
    async def score(state: TaskState, target: Target) -> Score:
        return Score(
            value={f: state.metadata[f] for f in ("a", "b")},
            explanation=f"features of {state.sample_id}",
        )

    return score


def _task(opt_in: bool) -> Task:
    X, y = _points()
    samples = [
        Sample(input="q", id=f"s{i}", metadata={"condition": c, "a": a, "b": b})
        for i, ((a, b), c) in enumerate(zip(X.tolist(), y, strict=True))
    ]
    metadata = contrast_options(None, n_nearest=2) if opt_in else {}
    return Task(dataset=samples, solver=_passthrough(), scorer=_features(), metadata=metadata)


@pytest.fixture(scope="module")
def annotated(tmp_path_factory) -> tuple[EvalLog, EvalLog]:
    """(log returned by eval(), log read back from its file)."""
    log_dir = tmp_path_factory.mktemp("contrast")
    log = run_eval(_task(True), "mockllm/model", log_dir)
    return log, read_eval_log(log.location)


def test_each_sample_score_carries_its_cluster_note(annotated) -> None:
    _, log = annotated
    for sample in log.samples:
        score = sample.scores["_features"]
        [note] = score.metadata[RESULT_KEY]
        i = int(str(sample.id)[1:])
        assert note["point"] == sample.id and note["metric"] == "cluster"
        assert note["cluster"] == ("positive" if i < 5 else "negative")
        assert note["agrees"] == (i != 5)
        assert score.explanation.startswith(f"features of {sample.id}" + NOTE_MARKER)
        assert score.explanation.endswith(note_line(note, "hinted", "honest"))
        # the scorer's own score is kept, the edit names its author
        assert score.history[0].explanation == f"features of {sample.id}"
        assert score.history[-1].provenance.author == "cotaudit"
        assert score.value == {"a": sample.metadata["a"], "b": sample.metadata["b"]}


def test_log_metadata_holds_the_summary_and_the_metrics_are_unchanged(annotated) -> None:
    returned, log = annotated
    entry = log.metadata[RESULT_KEY]["cluster"]
    assert returned.metadata[RESULT_KEY] == log.metadata[RESULT_KEY]
    assert log.results.scores[0].metrics["cluster_f1"].value == pytest.approx(10 / 11)
    assert entry["metrics"]["cluster_f1"] == pytest.approx(10 / 11)
    assert (
        entry["metrics"]["cluster_f1_ci_low"]
        == log.results.scores[0].metrics["cluster_f1_ci_low"].value
    )
    assert entry["clusters"]["positive"]["size"] == 5 and "contrast_model" not in entry
    assert entry["summary"].startswith("**cluster**: hinted vs honest")
    nearest = {
        s.id for s in log.samples if s.scores["_features"].metadata[RESULT_KEY][0]["nearest"]
    }
    clusters = entry["clusters"]
    assert nearest == set(clusters["positive"]["nearest_ids"] + clusters["negative"]["nearest_ids"])
    assert log.log_updates[-1].provenance.author == "cotaudit"


def test_annotating_again_replaces_the_notes(annotated, tmp_path) -> None:
    _, log = annotated
    copy = tmp_path / "again.eval"
    shutil.copy(log.location, copy)
    again = asyncio.run(annotate_log(copy, n_nearest=2))
    assert again is not None
    reread = read_eval_log(str(copy))
    for before, after in zip(log.samples, reread.samples, strict=True):
        a, b = before.scores["_features"], after.scores["_features"]
        assert a.metadata == b.metadata and a.explanation == b.explanation
        assert b.explanation.count(NOTE_MARKER) == 1
    assert reread.metadata[RESULT_KEY] == log.metadata[RESULT_KEY]
    assert not list(tmp_path.glob(".*contrast-tmp*"))


def test_a_sample_that_leaves_the_clustering_loses_its_notes(annotated, tmp_path) -> None:
    from inspect_ai.log import write_eval_log

    _, log = annotated
    copy = tmp_path / "moved.eval"
    edited = log.model_copy(deep=True)
    moved = next(s for s in edited.samples if s.id == "s11")
    moved.metadata["condition"] = "other"  # no longer one of the two clustered classes
    write_eval_log(edited, str(copy))
    asyncio.run(annotate_log(copy, n_nearest=2))
    score = next(s for s in read_eval_log(str(copy)).samples if s.id == "s11").scores["_features"]
    assert RESULT_KEY not in score.metadata
    assert score.explanation == "features of s11"


def test_json_logs_are_annotated_too(tmp_path) -> None:
    reread = run_eval_as_stored(_task(True), "mockllm/model", tmp_path, log_format="json")
    assert reread.location.endswith(".json")
    assert reread.metadata[RESULT_KEY]["cluster"]["clusters"]["positive"]["size"] == 5
    assert all(RESULT_KEY in s.scores["_features"].metadata for s in reread.samples)
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_every_epoch_of_a_sample_gets_the_note_of_its_reduced_score(tmp_path) -> None:
    reread = run_eval_as_stored(_task(True), "mockllm/model", tmp_path, epochs=2)
    assert len(reread.samples) == 24
    for s in reread.samples:
        [note] = s.scores["_features"].metadata[RESULT_KEY]
        assert note["point"] == s.id
        assert note["cluster"] == ("positive" if int(str(s.id)[1:]) < 5 else "negative")


def test_tasks_that_do_not_opt_in_are_left_alone(tmp_path) -> None:
    reread = run_eval_as_stored(_task(False), "mockllm/model", tmp_path)
    assert RESULT_KEY not in reread.metadata and not reread.log_updates
    assert all(not s.scores["_features"].history for s in reread.samples)


def test_a_failing_contrast_model_is_recorded_and_the_notes_written(annotated, tmp_path) -> None:
    _, log = annotated
    copy = tmp_path / "failing.eval"
    shutil.copy(log.location, copy)
    asyncio.run(annotate_log(copy, contrast_model="nosuchprovider/model", n_nearest=2))
    reread = read_eval_log(str(copy))
    described = reread.metadata[RESULT_KEY]["cluster"]["contrast_model"]
    assert described["model"] == "nosuchprovider/model" and "nosuchprovider" in described["error"]
    assert "description" not in described
    assert all(RESULT_KEY in s.scores["_features"].metadata for s in reread.samples)


def test_an_interrupted_write_leaves_the_log_as_it_was(annotated, tmp_path, monkeypatch) -> None:
    import cotaudit.scorers.cluster_contrast as cc

    _, log = annotated
    copy = tmp_path / "interrupted.eval"
    shutil.copy(log.location, copy)
    before = copy.read_bytes()

    async def broken_write(log: Any, location: str) -> None:
        Path(location).write_bytes(b"half a log")
        raise KeyboardInterrupt

    monkeypatch.setattr(cc, "write_eval_log_async", broken_write)
    with pytest.raises(KeyboardInterrupt):
        asyncio.run(annotate_log(copy))
    assert copy.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["interrupted.eval"]


def test_cli_annotates_logs_and_reports_bad_input(annotated, tmp_path, capsys) -> None:
    _, log = annotated
    copy = tmp_path / "cli.eval"
    shutil.copy(log.location, copy)
    assert cli_main(["contrast", str(copy), "--n-nearest", "1"]) == 0
    out = capsys.readouterr().out
    assert "**cluster**: hinted vs honest" in out
    reread = read_eval_log(str(copy))
    assert len(reread.metadata[RESULT_KEY]["cluster"]["clusters"]["positive"]["nearest_ids"]) == 1
    (tmp_path / "notes.json").write_text("{}")
    assert cli_main(["contrast", str(tmp_path / "notes.json")]) == 1
    assert "notes.json: not annotated" in capsys.readouterr().err
    assert cli_main(["contrast", str(copy), "--contrast-model", "gpt-4o"]) == 2
    assert "--contrast-model" in capsys.readouterr().err


# --- on a real model ------------------------------------------------------------------------


@pytest.mark.model
def test_selfcommit_run_writes_the_contrast_and_the_model_description(tmp_path):
    """selfcommit on the default model with the tiny model as contrast model: the notes are the
    2-means clustering of the logged curve summaries, and the description is the tiny model's
    greedy answer to the logged prompt, which shows the nearest samples' CoTs. Two problems:
    both answer in both conditions (read as their last number), so 2 samples per class."""
    from tasks_loader import load_task_module

    hypothesis = load_task_module("selfcommit").CLUSTER_HYPOTHESIS
    log = run_eval_as_stored(
        "tasks/selfcommit.py",
        "hf-probe/default",
        tmp_path,
        task_args=dict(
            problems=2,
            max_cot_tokens=200,
            stride=40,
            k=2,
            contrast_model="hf-probe/tiny",
            final_answer_reading="last_number",
        ),  # CoTs cut at 200 tokens
    )
    assert log.eval.metadata[OPTIONS_KEY]["contrast_model"] == "hf-probe/tiny"

    def finite(sample) -> bool:  # the metric skips a sample with a non-finite summary
        value = sample.scores["selfcommit_scorer"].value
        return all(
            isinstance(value.get(f), (int, float)) and math.isfinite(value[f])
            for f in hypothesis.features
        )

    # skip_whole_unit: a response with no finite summary takes its problem's other one along
    broken = {s.metadata["pair_id"] for s in log.samples if not finite(s)}
    used = [s for s in log.samples if s.metadata["pair_id"] not in broken]
    scores = [s.scores["selfcommit_scorer"] for s in used]
    X = [[sc.value[f] for f in hypothesis.features] for sc in scores]
    labels = [s.metadata["condition"] for s in used]
    dirs = [hypothesis.directions[f] for f in hypothesis.features]
    want = cluster_f1(
        X,
        labels,
        "hinted",
        dirs,
        sample_ids=[s.id for s in used],
        units=[s.metadata["pair_id"] for s in used],
        n_boot=0,
    )
    assert want.degenerate is None, "2 problems of the default model: too few usable samples"
    for sample, sc, positive in zip(used, scores, want.in_positive_cluster, strict=True):
        [note] = sc.metadata[RESULT_KEY]
        assert note["cluster"] == ("positive" if positive else "negative"), sample.id

    entry = log.metadata[RESULT_KEY]["cluster"]
    described = entry["contrast_model"]
    assert described["model"] == "hf-probe/tiny" and described["description"].strip()
    by_id = {s.id: s for s in log.samples}
    for name in ("positive", "negative"):
        for i in entry["clusters"][name]["nearest_ids"]:
            assert by_id[i].output.completion.strip()[:200] in described["prompt"]

    async def regenerate() -> str:
        out = await get_model("hf-probe/tiny").generate(
            [
                ChatMessageSystem(content=CONTRAST_SYSTEM),
                ChatMessageUser(content=described["prompt"]),
            ],
            config=GenerateConfig(max_tokens=CONTRAST_MAX_TOKENS, temperature=0.0),
        )
        return out.completion

    assert asyncio.run(regenerate()) == described["description"]
    assert not math.isnan(entry["metrics"]["cluster_f1_optimistic"])

    # cotaudit report quotes the description under the cluster tables
    from cotaudit.report import build_report

    report = build_report([log.location], tmp_path / "report")
    text = Path(report.markdown_path).read_text()
    assert contrast_model_text(described) in text


def test_report_text_of_a_failed_contrast_model() -> None:
    failed = {"model": "x/y", "prompt": "p", "error": "PrerequisiteError: no provider x"}
    assert contrast_model_text(failed) == (
        "**Contrast model** `x/y` on what distinguishes the clusters' texts: no description "
        "(PrerequisiteError: no provider x)."
    )
    ok = contrast_model_text({"model": "x/y", "prompt": "p", "description": "- a\n- b\n"})
    # the model's bullets are its text, escaped: they render as written, not as a list
    assert ok.endswith("(cluster A = positive, B = negative):\n\n> \\- a\n> \\- b")


def test_a_noted_score_replaces_earlier_notes_and_drops_them_when_none_are_left() -> None:
    """The block and the notes of an earlier annotation go; a score with no notes now and
    none before is left alone (None)."""
    block = " (2-means; the positive cluster is fixed by the declared direction)\n\n- line"
    earlier = {"x": 1, RESULT_KEY: [{"old": True}]}
    assert noted_score(earlier, "why" + NOTE_MARKER + " old", []) == ("why", {"x": 1})
    assert noted_score({"x": 1}, "why", []) is None
    assert noted_score(earlier, "why", [({"n": 1}, "line")]) == (
        "why" + NOTE_MARKER + block,
        {"x": 1, RESULT_KEY: [{"n": 1}]},
    )
