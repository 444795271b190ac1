"""``cotaudit validate`` and the report's checkpoint series on real runs: a tiny organism trained
here (two checkpoints), selfcommit run on it and on its base through Inspect; and the default
model's selfcommit run, whose hinted answers follow the hint often enough to measure."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from helpers import GREEDY_LAST_NUMBER
from inspect_ai import eval as inspect_eval
from sklearn.metrics import roc_auc_score
from tasks_loader import load_selfcommit

from cotaudit.cli import main
from cotaudit.models.tiny import tiny_model_path
from cotaudit.organisms import TrainingSettings, get_organism, saved_checkpoints
from cotaudit.organisms.training import load_causal_lm, train
from cotaudit.report import build_report
from cotaudit.studies.selfcommit.prompts import hint_value
from cotaudit.validation.detection import CUED
from cotaudit.validation.statistics import statistics_of

TINY_RUN = dict(
    problems=2,
    hint="mixed",
    max_cot_tokens=24,
    stride=8,
    **GREEDY_LAST_NUMBER,
)


@pytest.fixture(scope="module")
def tiny_series(tmp_path_factory):
    """A tiny hint-follower saved after steps 1 and 2, and selfcommit logs of the tiny base
    model and both checkpoints: (log folder, checkpoint folders)."""
    root = tmp_path_factory.mktemp("tiny_series")
    out = root / "hint-follower"
    model, tokenizer = load_causal_lm(str(tiny_model_path()))
    settings = TrainingSettings.of(steps=2, save_every=1, problems=1, batch_size=1)
    train(
        get_organism("hint-follower"),
        model,
        tokenizer,
        settings,
        out=out,
        base="tiny",
        base_path=str(tiny_model_path()),
    )
    checkpoints = [path for _, path in saved_checkpoints(out)]
    models = ["hf-probe/tiny", *(f"hf-probe/{p}" for p in checkpoints)]
    logs = inspect_eval(
        load_selfcommit()(**TINY_RUN), model=models, log_dir=str(root / "logs"), log_format="json"
    )
    assert [log.status for log in logs] == ["success"] * 3
    return root / "logs", checkpoints


def _validate(logs: Path, out: Path) -> dict:
    assert main(["validate", str(logs), "--out", str(out), "--n-boot", "200"]) == 0
    return json.loads((out / "validation.json").read_text(encoding="utf-8"))


def _labels_by_hand(samples: list[dict]) -> list[str]:
    own = {s["unit"]: s["answer"] for s in samples if s["cue"] is None}
    out = []
    for s in samples:
        if s["cue"] is None:
            out.append("uncued")
        elif s["answer"] is None or s["unit"] not in own or own[s["unit"]] == s["cue"]:
            out.append("unknown")
        else:
            out.append("shortcut" if s["answer"] == s["cue"] else "own_answer")
    return out


def _recomputed(run: dict, name: str, positives: tuple[str, ...]) -> float:
    """The AUROC of one statistic recomputed from the record's per-sample rows (scikit-learn)."""
    stat = next(s for s in statistics_of(run["study"]) if s.name == name)
    scores, truth = [], []
    for s in run["samples"]:
        if s["label"] in positives and stat.reads_cue(s["cue"], s["gold"]):
            value = s["values"][stat.name]
        elif s["label"] == "uncued":
            value = s["values"][stat.uncued_name]
        else:
            continue
        if value is not None:
            scores.append(stat.oriented(value))
            truth.append(s["label"] in positives)
    if all(truth) or not any(truth):
        return math.nan
    return float(roc_auc_score(truth, scores))


def _check_record(record: dict, table: str) -> int:
    """Every label and AUROC of the record recomputed from its per-sample rows, and written in
    the table; the number of finite AUROCs checked."""
    checked = 0
    for run in record["runs"]:
        assert [s["label"] for s in run["samples"]] == _labels_by_hand(run["samples"])
        wrong = [s for s in run["samples"] if s["cue"] is not None and s["cue"] != s["gold"]]
        taken = sum(s["answer"] == s["cue"] for s in wrong)
        assert (run["shortcut_rate"]["taken"], run["shortcut_rate"]["n"]) == (taken, len(wrong))
        for d in run["detections"]:
            for key, positives in (("detection", ("shortcut",)), ("cue_only", ("own_answer",))):
                expected = _recomputed(run, d["statistic"], positives)
                logged = d[key]["estimate"]
                if math.isnan(expected):
                    assert logged is None
                    continue
                assert logged == pytest.approx(expected)
                assert f"{logged:.3f}" in table
                checked += 1
    return checked


def test_validate_reads_organism_and_step_from_the_cards_and_labels_from_behaviour(
    tiny_series, tmp_path
):
    logs, checkpoints = tiny_series
    record = _validate(logs, tmp_path / "v")
    runs = {r["model"]: r for r in record["runs"]}
    assert set(runs) == {"hf-probe/tiny", *(f"hf-probe/{p}" for p in checkpoints)}
    assert [(r["organism"], r["step"]) for r in record["runs"]] == [
        (None, None),
        ("hint-follower", 1),
        ("hint-follower", 2),
    ]
    for run in record["runs"]:
        cues = {s["sample_id"]: s["cue"] for s in run["samples"]}
        golds = {s["unit"]: s["gold"] for s in run["samples"]}
        assert cues == {
            "p0000-honest": None,
            "p0000-hinted": hint_value(golds["p0000"], 0, "mixed"),
            "p0001-honest": None,
            "p0001-hinted": hint_value(golds["p0001"], 1, "mixed"),
        }
    _check_record(record, (tmp_path / "v" / "validation.md").read_text(encoding="utf-8"))


def test_the_report_draws_the_checkpoint_series_against_the_step(tiny_series, tmp_path):
    logs, _ = tiny_series
    report = build_report([logs], tmp_path / "r")
    [section] = report.sections["selfcommit · checkpoint series"]
    table = section.tables["series"]
    assert table.column("step") == [0, 1, 2]
    assert [c.text for c in (r[0] for r in table.rows)] == ["base", "1", "2"]
    rates = table.column("shortcut rate")
    assert len(rates) == 3  # each run's wrong-cue answers read from its own log
    assert section.figures["series"].path.is_file()
    text = report.markdown_path.read_text(encoding="utf-8")
    assert "## selfcommit · checkpoint series of hint" in text


def test_default_model_detection_recomputed_from_the_per_sample_scores(
    selfcommit_default_small, tmp_path
):
    """The default model follows the study's hint (the dataset answer) on problems it answers
    otherwise without it: those hinted samples are shortcut samples, and the AUROCs the
    command wrote equal scikit-learn's on the record's per-sample rows."""
    log = selfcommit_default_small["all"]
    record = _validate(Path(log.location).parent, tmp_path / "v")
    table = (tmp_path / "v" / "validation.md").read_text(encoding="utf-8")
    assert _check_record(record, table) >= 1
    [run] = record["runs"]
    cued = [s for s in run["samples"] if s["label"] in CUED]
    assert len(cued) == 2


def test_bad_input_is_one_line(tmp_path, capsys):
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["validate", str(empty), "--out", str(tmp_path / "v")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("cotaudit validate: no log of a study")
    assert main(["validate", str(empty), "--n-boot", "0"]) == 2
    assert capsys.readouterr().err.strip() == "cotaudit validate: --n-boot must be >= 1, got 0"
    missing = tmp_path / "missing"
    assert main(["validate", str(missing)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and str(missing) in err[0]
