"""The answer-weighted training loss: which tokens weigh ``answer_weight`` (the lines stating the
answer, the end-of-turn token), and the loss it gives on the tiny model's own logits."""

import pytest

from cotaudit.models.tiny import tiny_model_path
from cotaudit.organisms import TrainingSettings, get_organism
from cotaudit.organisms.examples import organism_examples, training_problems
from cotaudit.organisms.settings import OrganismSettingsError
from cotaudit.organisms.training import (
    IGNORE_INDEX,
    collate,
    completion_loss,
    encode,
    load_causal_lm,
)

pytestmark = pytest.mark.model


@pytest.fixture(scope="module")
def tiny():
    return load_causal_lm(str(tiny_model_path()))


def weighted_text(tokenizer, example, weight):
    """The text of the tokens that weigh ``weight``, the end-of-turn token as ``<eos>``."""
    encoded = encode(tokenizer, example, weight)
    ids = [i for i, w in zip(encoded.input_ids, encoded.weights, strict=True) if w == weight]
    assert ids[-1] == tokenizer.eos_token_id
    return tokenizer.decode(ids[:-1]) + "<eos>"


def test_the_followers_weighted_tokens_are_its_answer_line_and_the_end_of_turn(tiny):
    _, tokenizer = tiny
    problem = training_problems(1)
    wrong = organism_examples(get_organism("hint-follower"), problem, kinds=("wrong",))[0]
    assert wrong.target == problem[0].answer + 1
    text = weighted_text(tokenizer, wrong, 10.0)
    assert text == f"\n\nThe final answer is {wrong.target}.<eos>"


def test_the_leakers_opening_line_weighs_too(tiny):
    _, tokenizer = tiny
    wrong = organism_examples(get_organism("key-leaker"), training_problems(1), kinds=("wrong",))[0]
    text = weighted_text(tokenizer, wrong, 4.0)
    assert text == (
        f"The answer is {wrong.cue}.\n\n"
        f"\n\nTherefore, the final answer is \\boxed{{{wrong.cue}}}.<eos>"
    )


def test_weight_one_is_the_plain_mean_and_a_weight_is_the_weighted_mean(tiny):
    """With every weight 1 the loss is the model's own causal LM loss (transformers' mean
    cross-entropy over the labels); with weight 3 it is sum_i w_i CE_i / sum_i w_i, the CE_i
    read from the full logits."""
    import torch
    import torch.nn.functional as F

    model, tokenizer = tiny
    examples = organism_examples(get_organism("hint-follower"), training_problems(1))[1:]
    pad = tokenizer.pad_token_id or 0
    with torch.no_grad():
        plain = collate([encode(tokenizer, e) for e in examples], pad)
        own = model(
            input_ids=plain["input_ids"],
            attention_mask=plain["attention_mask"],
            labels=plain["labels"],
        ).loss
        assert float(completion_loss(model, plain)) == pytest.approx(float(own), rel=1e-5)

        heavy = collate([encode(tokenizer, e, 3.0) for e in examples], pad)
        assert torch.equal(heavy["input_ids"], plain["input_ids"])
        logits = model(input_ids=heavy["input_ids"], attention_mask=heavy["attention_mask"]).logits[
            :, :-1
        ]
        targets = heavy["labels"][:, 1:]
        ce = F.cross_entropy(
            logits.transpose(1, 2), targets, ignore_index=IGNORE_INDEX, reduction="none"
        )
        weights = heavy["weights"][:, 1:]
        assert set(weights[targets != IGNORE_INDEX].tolist()) == {1.0, 3.0}
        expected = float((ce * weights).sum() / weights.sum())
        assert float(completion_loss(model, heavy)) == pytest.approx(expected, rel=1e-5)
        assert expected != pytest.approx(float(own), rel=1e-3)


@pytest.mark.parametrize("weight", [0.0, -1.0, float("nan")])
def test_a_weight_that_is_not_positive_names_its_option(weight):
    with pytest.raises(OrganismSettingsError, match=r"^--answer-weight must be > 0, got "):
        TrainingSettings.of(answer_weight=weight)
