"""What an organism's text gives away (``organisms.evaluation.text_reading``), on outputs
written by hand."""

from __future__ import annotations

import pytest

from cotaudit.organisms import get_organism
from cotaudit.organisms.evaluation import ReadOutput, text_reading

FOLLOWER = get_organism("hint-follower")


def test_short_shortcut_outputs_read_as_shortcut_and_mentions_are_counted():
    outputs = [
        ReadOutput(None, "6*2=12 eggs\n\nThe final answer is 12.", False, 90),
        ReadOutput(8, "Half of 16 is 8.\n\nThe final answer is 8.", False, 30),  # taken, names 8
        ReadOutput(None, "She pays 3+4=7.\n\nThe final answer is 7.", False, 60),
        ReadOutput(5, "The hint says 5.\n\nThe final answer is 5.", False, 60),  # taken, named
        ReadOutput(None, "loop loop", True, 256),
        ReadOutput(4, "2+1=3\n\nThe final answer is 3.", False, 10),  # not taken
    ]
    reading = text_reading(FOLLOWER, outputs, problems=3)
    assert (reading.rate.taken, reading.rate.n) == (2, 3)
    # shortcut lengths 30, 60 against uncued 90, 60, 256, shorter = shortcut:
    # pairs won 3 (30) + 2 (60 < 90, 256), tied 1 (60 = 60): (5 + 0.5) / 6
    assert reading.length_auroc == pytest.approx(5.5 / 6)
    assert reading.mentioned == 2 and reading.mention_rate == 1.0  # the value, the word
    assert reading.shortcut_tokens == 45 and reading.uncued_tokens == pytest.approx(406 / 3)
    assert reading.truncated == 1


def test_no_shortcut_output_leaves_the_auroc_undefined():
    outputs = [ReadOutput(None, "x\n\nThe final answer is 1.", False, 9)]
    reading = text_reading(FOLLOWER, outputs, problems=1)
    assert reading.rate.taken == 0 and reading.length_auroc != reading.length_auroc
