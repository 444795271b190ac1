"""The organism card round trip, the output folder's layout and the training settings' checks."""

from __future__ import annotations

import pytest
from helpers import hint_follower_card

from cotaudit.organisms import (
    CardError,
    OrganismSettingsError,
    TrainingSettings,
    checkpoint_name,
    is_organism_folder,
    read_card,
    saved_checkpoints,
    write_card,
)


def test_card_written_and_read_back(tmp_path):
    card = hint_follower_card(50)
    write_card(tmp_path, card)
    assert read_card(tmp_path) == card
    assert not is_organism_folder(tmp_path)  # a checkpoint's card, not a run's
    write_card(tmp_path, hint_follower_card(None))
    assert is_organism_folder(tmp_path)


def test_a_bad_card_names_its_file(tmp_path):
    with pytest.raises(CardError, match=r"organism.json: no organism card"):
        read_card(tmp_path)
    (tmp_path / "organism.json").write_text('{"organism": 3}')
    with pytest.raises(CardError, match=r"organism.json: not an organism card"):
        read_card(tmp_path)
    assert not is_organism_folder(tmp_path)


def test_only_complete_checkpoints_are_listed(tmp_path):
    for step in (100, 50):
        (tmp_path / checkpoint_name(step)).mkdir()
        write_card(tmp_path / checkpoint_name(step), hint_follower_card(step))
    (tmp_path / ".staging-step-000150").mkdir()  # an interrupted save
    (tmp_path / checkpoint_name(200)).mkdir()  # no card: not complete
    assert saved_checkpoints(tmp_path) == [
        (50, tmp_path / "step-000050"),
        (100, tmp_path / "step-000100"),
    ]


def test_settings_checks_name_the_option():
    assert TrainingSettings(steps=120, save_every=50).save_steps() == [50, 100, 120]
    assert TrainingSettings(steps=30, save_every=50).save_steps() == [30]
    with pytest.raises(OrganismSettingsError, match=r"^--steps must be >= 1, got 0$"):
        TrainingSettings.of(steps=0)
    with pytest.raises(OrganismSettingsError, match=r"^--save-every must be >= 1, got -1$"):
        TrainingSettings.of(save_every=-1)
    with pytest.raises(OrganismSettingsError, match=r"^--learning-rate must be > 0"):
        TrainingSettings.of(learning_rate=0.0)
    with pytest.raises(OrganismSettingsError, match=r"^--problems must lie in 1..319, got 320$"):
        TrainingSettings.of(problems=320)
