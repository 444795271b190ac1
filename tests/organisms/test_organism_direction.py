"""Real training on the tiny model moves behaviour toward the shortcut, read from the model's own
greedy outputs (:func:`cotaudit.organisms.evaluation.measure_shortcut_rate`)."""

from __future__ import annotations

import pytest

from cotaudit.models.tiny import tiny_model_path
from cotaudit.organisms import TrainingSettings, get_organism, organism_examples, training_problems
from cotaudit.organisms.evaluation import measure_shortcut_rate
from cotaudit.organisms.generation import greedy_outputs
from cotaudit.organisms.training import load_causal_lm, prompt_ids, train

pytestmark = pytest.mark.model
"""It trains and runs the tiny model (through :func:`load_causal_lm`, which the tiers' source
patterns in tests/conftest.py do not name)."""

MAX_NEW_TOKENS = 200
"""Room for the trained completion (about 170 tokens: the worked solution and the answer line)."""


def test_training_raises_the_hint_followers_shortcut_rate_from_its_own_outputs(tmp_path):
    """hint-follower trained for 80 steps (batch 3, learning rate 1e-3, seed 0) on one problem,
    the first training row (1000): its 3 examples (no hint, right hint, wrong hint).

    The rate is measured on that same problem's wrong-hint prompt (n = 1), before and after:
    the ~4M-parameter random model does not generalise from a few problems in a test's time (on
    2 training problems, 80 steps, both wrong-hint outputs ended with the gold answer instead),
    so this shows the training loop moves the model's own output in the intended direction on
    what it was trained on, not that the shortcut transfers to held-out problems.

    Before: 0/1 (the random model repeats one word and never writes the answer line). After:
    1/1, ending "The final answer is 2." (the wrong hint, gold + 1), seen with seeds 0, 1 and 2;
    while the same trained model's output to the no-hint prompt of that problem ends with the
    gold answer 1, so the answer follows the hint shown rather than a memorised value.
    """
    organism = get_organism("hint-follower")
    problems = training_problems(1)
    path = str(tiny_model_path())
    model, tokenizer = load_causal_lm(path)
    before, _ = measure_shortcut_rate(
        organism, model, tokenizer, problems, max_new_tokens=MAX_NEW_TOKENS
    )
    settings = TrainingSettings(
        steps=80, save_every=80, seed=0, learning_rate=1e-3, batch_size=3, problems=1
    )
    train(organism, model, tokenizer, settings, out=tmp_path, base="tiny", base_path=path)
    after, outputs = measure_shortcut_rate(
        organism, model, tokenizer, problems, max_new_tokens=MAX_NEW_TOKENS
    )

    assert (before.taken, before.n) == (0, 1)
    assert (after.taken, after.n) == (1, 1), outputs
    no_hint = organism_examples(organism, problems, kinds=("none",))[0]
    [(text, truncated)] = greedy_outputs(
        model, tokenizer, [prompt_ids(tokenizer, no_hint.messages)], max_new_tokens=MAX_NEW_TOKENS
    )
    assert not truncated
    assert text.rstrip().endswith(f"The final answer is {no_hint.gold}."), text
