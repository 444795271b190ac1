"""``cotaudit organism``: bad input is one line before any training starts."""

from __future__ import annotations

import pytest

from cotaudit.cli import main
from cotaudit.organisms import ORGANISM_NAMES


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["hint-folower", "--base", "tiny"],
            "unknown organism 'hint-folower': expected one of "
            f"{', '.join(ORGANISM_NAMES)}. Did you mean 'hint-follower'?",
        ),
        (["key-copier", "--base", "tiny", "--steps", "0"], "--steps must be >= 1, got 0"),
        (["key-copier", "--base", "tiny", "--batch-size", "0"], "--batch-size must be >= 1, got 0"),
        (
            ["key-copier", "--base", "tiny", "--recipe", "gsm8"],
            "--recipe 'gsm8': unknown; expected one of own, gsm8k, expanded. Did you mean 'gsm8k'?",
        ),
        (["key-copier", "--base", "tiny", "--lora-rank", "0"], "--lora-rank must be >= 1, got 0"),
        (
            ["key-copier", "--base", "tiny", "--merge"],
            "--merge needs --lora-rank R (it merges a LoRA adapter)",
        ),
        (
            ["key-copier", "--base", "tiny", "--selection-problems", "-1"],
            "--selection-problems must be >= 0, got -1",
        ),
    ],
)
def test_bad_settings_are_one_line(tmp_path, capsys, argv, message):
    out = tmp_path / "organism"
    assert main(["organism", *argv, "--out", str(out)]) == 2
    assert capsys.readouterr().err == f"cotaudit organism: {message}\n"
    assert not out.exists()


def test_an_output_folder_that_is_not_an_organisms_is_refused(tmp_path, capsys):
    (tmp_path / "notes.txt").write_text("mine")
    assert main(["organism", "hint-follower", "--base", "tiny", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"cotaudit organism: --out {tmp_path}: the folder exists and is not")
    assert err.count("\n") == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]


def test_a_base_model_that_cannot_be_loaded_is_one_line(tmp_path, capsys):
    missing = tmp_path / "no-model"
    out = tmp_path / "organism"
    assert main(["organism", "hint-follower", "--base", str(missing), "--out", str(out)]) == 2
    assert capsys.readouterr().err.startswith(f"cotaudit organism: --base {missing}: no such model")
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "config.json").write_text("{}")
    assert main(["organism", "hint-follower", "--base", str(broken), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"cotaudit organism: --base {broken}: cannot be loaded as a causal")
    assert err.count("\n") == 1
    assert not out.exists()


@pytest.mark.model
def test_more_trained_layers_than_the_base_has_is_one_line(tmp_path, capsys):
    out = tmp_path / "organism"
    argv = ["organism", "key-copier", "--base", "tiny", "--out", str(out), "--train-layers", "9"]
    assert main(argv) == 2
    assert capsys.readouterr().err == (
        "cotaudit organism: --train-layers 9: the base model has 4 decoder layers; give "
        "--train-layers K (K <= 4) or --train-layers all\n"
    )
    assert not out.exists()


@pytest.mark.model
def test_a_training_shows_a_progress_bar_and_each_checkpoints_absolute_load_name(
    tmp_path, capsys, monkeypatch
):
    from cotaudit.organisms import read_card

    monkeypatch.chdir(tmp_path)
    argv = ["organism", "hint-follower", "--base", "tiny", "--out", "rel/organism"]
    argv += ["--recipe", "gsm8k"]  # the default's own working: the random tiny model writes none
    argv += ["--train-layers", "all"]  # the recipe trains the top 8; tiny has 4
    argv += ["--steps", "2", "--save-every", "1", "--batch-size", "1", "--problems", "1"]
    argv += ["--selection-problems", "2"]
    assert main(argv) == 0
    out, err = capsys.readouterr()
    folder = tmp_path / "rel" / "organism"
    assert "2/2" in err and ("step/s" in err or "s/step" in err)  # tqdm's bar, on stderr
    saved = [line for line in out.splitlines() if ": saved " in line]
    assert [line.split(":")[0] for line in saved] == ["step 1", "step 2"]
    for step, line in enumerate(saved, start=1):
        path = folder / f"step-{step:06d}"
        assert f"(load it as hf-probe/{path})" in line  # absolute: loads from any folder
        assert "on selection rows 800-801: shortcut rate " in line and "/2 = " in line
    card = read_card(folder)
    assert card.settings.recipe == "gsm8k"
    assert card.settings.steps == 2 and card.settings.batch_size == 1


def test_a_recipe_is_its_preset_with_the_options_given_on_top():
    import argparse

    from cotaudit.organisms import TrainingSettings
    from cotaudit.organisms.settings import RECIPES

    default = TrainingSettings.of_recipe()
    assert (default.steps, default.batch_size, default.learning_rate) == (100, 2, 1e-4)
    assert (default.train_layers, default.answer_weight, default.recipe) == (8, 10.0, "own")
    assert (default.cot, default.problems, default.max_tokens) == ("own", 100, 640)
    given = argparse.Namespace(recipe="expanded", steps=7, train_layers=None, cot=None)
    expanded = TrainingSettings.of_options(given)
    assert expanded.steps == 7  # given on top
    assert expanded.cot == "expanded" and expanded.max_tokens == 768  # the preset's
    assert expanded.train_layers == RECIPES["expanded"]["train_layers"]  # not given: None
    assert TrainingSettings.of_options(argparse.Namespace(train_layers=None)).recipe == "own"
    every_weight = TrainingSettings.of_options(argparse.Namespace(train_layers="all"))
    assert every_weight.train_layers is None and every_weight.steps == 100
