"""Real training on the tiny model: a saved checkpoint loads on ``hf-probe/`` with the in-memory
model's logits and its card; an interrupted ``cotaudit organism`` keeps what it saved (that
training moves behaviour toward the shortcut: test_organism_direction.py)."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time

import torch

from cotaudit.engine.chat import render_chat
from cotaudit.models.tiny import tiny_model_path
from cotaudit.organisms import (
    TrainingSettings,
    get_organism,
    organism_examples,
    read_card,
    saved_checkpoints,
    training_problems,
)
from cotaudit.organisms.training import load_causal_lm, prompt_ids, train


def _train_tiny(tmp_path, name: str, **settings):
    path = str(tiny_model_path())
    model, tokenizer = load_causal_lm(path)
    out = tmp_path / name
    saved = train(
        get_organism(name),
        model,
        tokenizer,
        TrainingSettings(**settings),
        out=out,
        base="tiny",
        base_path=path,
    )
    return model, tokenizer, out, saved


def test_a_checkpoint_loads_on_hf_probe_with_the_same_logits_and_its_card(tmp_path):
    from inspect_ai.model import get_model

    model, tokenizer, out, saved = _train_tiny(
        tmp_path, "key-leaker", steps=2, save_every=1, batch_size=1, problems=1
    )
    assert [p.name for p in saved] == ["step-000001", "step-000002"]
    assert saved_checkpoints(out) == [(1, saved[0]), (2, saved[1])]
    assert read_card(out).step is None
    card = read_card(saved[1])
    assert (card.organism, card.study, card.step, card.base) == (
        "key-leaker",
        "trace_tutor",
        2,
        "tiny",
    )
    assert card.data.problem_rows == [1000] and card.data.examples == 3
    assert card.settings.steps == 2 and not card.control

    example = organism_examples(get_organism("key-leaker"), training_problems(1))[2]
    engine = get_model(f"hf-probe/{saved[1]}").api.probe_engine
    ids = render_chat(tokenizer, example.messages)
    ids += tokenizer(example.completion, add_special_tokens=False)["input_ids"]
    with torch.no_grad():
        expected = model(torch.tensor([ids])).logits
        loaded = engine.model(torch.tensor([ids])).logits
    assert torch.equal(loaded, expected)
    # and through the engine's own verb: log p(completion | prompt) from the same weights
    result = asyncio.run(engine.loglikelihood(example.messages, example.completion))
    n = result.n_tokens
    logprobs = torch.log_softmax(expected[0, -n - 1 : -1], dim=-1)
    own = logprobs.gather(1, torch.tensor(ids[-n:])[:, None])[:, 0]
    assert torch.allclose(torch.tensor(result.token_logprobs), own, atol=1e-4)
    first = load_causal_lm(str(saved[0]))[0]
    with torch.no_grad():
        assert not torch.equal(first(torch.tensor([ids])).logits, expected)


def _organism_command(out, steps: int) -> list[str]:
    return [
        *(sys.executable, "-c", "import sys; from cotaudit.cli import main; sys.exit(main())"),
        *("organism", "hint-follower", "--base", "tiny"),
        *("--out", str(out), "--steps", str(steps), "--save-every", "1", "--batch-size", "1"),
        *("--problems", "1", "--selection-problems", "0", "--train-layers", "all"),
        *("--recipe", "gsm8k"),
    ]


def test_an_interrupted_training_keeps_its_saved_checkpoints_loadable(tmp_path):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    out = tmp_path / "follower"
    proc = subprocess.Popen(
        _organism_command(out, 1000), start_new_session=True, stderr=subprocess.DEVNULL
    )
    try:
        while len(saved_checkpoints(out)) < 2 and proc.poll() is None:
            time.sleep(0.5)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    assert proc.returncode == -signal.SIGKILL
    kept = saved_checkpoints(out)
    assert len(kept) >= 2
    for step, path in kept:
        assert read_card(path).step == step
        model = AutoModelForCausalLM.from_pretrained(path)
        assert model.config.vocab_size == len(AutoTokenizer.from_pretrained(path))
    # the killed run's folder is an organism's: a new run may write into it
    rerun = subprocess.run(_organism_command(out, 1), capture_output=True, text=True)
    assert rerun.returncode == 0, rerun.stderr
    assert read_card(out / "step-000001").settings.steps == 1


def test_prompts_are_rendered_as_the_engines_render_them():
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tiny_model_path())
    for name in ("hint-follower", "key-leaker"):
        for example in organism_examples(get_organism(name), training_problems(2)):
            rendered = render_chat(tokenizer, example.messages)
            assert prompt_ids(tokenizer, example.messages) == rendered
