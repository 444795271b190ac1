"""LoRA organisms (``--lora-rank``, ``--merge``): real training on the tiny model. An adapter
folder loads on ``hf-probe/`` as its base with the adapter merged, with the in-memory adapted
model's logits and the merged folder's greedy output; the merged weights are ``W + 2 B A``;
the base's weights are never changed; ``--train-layers K`` adapts the top K layers only; bad
input is one line before any model loads."""

from __future__ import annotations

import asyncio
import hashlib
import json
import shutil
from pathlib import Path

import pytest
import torch

from cotaudit.cli import main
from cotaudit.engine.chat import render_chat
from cotaudit.models.adapters import ADAPTER_CONFIG
from cotaudit.models.tiny import tiny_model_path
from cotaudit.organisms import (
    TrainingSettings,
    get_organism,
    organism_examples,
    read_card,
    saved_checkpoints,
    training_problems,
)
from cotaudit.organisms.adapters import MERGED_FOLDER, TARGET_MODULES
from cotaudit.organisms.training import load_causal_lm, train
from cotaudit.providers._local import ModelNameError, check_model_name

LEARNING_RATE = 1e-2  # large, so that two steps move the adapter well away from the base


def _digests(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in folder.iterdir()}


def _train_tiny(tmp_path: Path, **settings):
    path = str(tiny_model_path())
    model, tokenizer = load_causal_lm(path)
    out = tmp_path / "organism"
    saved = train(
        get_organism("hint-follower"),
        model,
        tokenizer,
        TrainingSettings(
            batch_size=1, problems=1, learning_rate=LEARNING_RATE, lora_rank=4, **settings
        ),
        out=out,
        base="tiny",
        base_path=path,
    )
    return model, tokenizer, out, saved


def _prompt_ids(tokenizer) -> list[int]:
    example = organism_examples(get_organism("hint-follower"), training_problems(1))[0]
    return render_chat(tokenizer, example.messages)


def _logits(model, ids: list[int]):
    with torch.no_grad():
        return model(torch.tensor([ids])).logits


def _greedy(model_name: str, prompt: str) -> str:
    from inspect_ai.model import GenerateConfig, get_model

    model = get_model(model_name, memoize=False)
    config = GenerateConfig(temperature=0.0, max_tokens=12)
    return asyncio.run(model.generate(prompt, config=config)).completion


def test_a_merged_lora_organism_loads_on_hf_probe_as_its_merged_folder(tmp_path):
    from inspect_ai.model import get_model
    from safetensors.torch import load_file

    base_folder = tiny_model_path()
    before = _digests(base_folder)
    model, tokenizer, out, saved = _train_tiny(tmp_path, steps=2, save_every=1, merge=True)
    assert [p.name for p in saved] == ["step-000001", "step-000002"]
    assert saved_checkpoints(out) == [(1, saved[0]), (2, saved[1])]
    adapter, merged = saved[1], saved[1] / MERGED_FOLDER
    config = json.loads((adapter / ADAPTER_CONFIG).read_text())
    assert config["base_model_name_or_path"] == str(base_folder.resolve())
    assert (config["r"], config["lora_alpha"], config["lora_dropout"]) == (4, 8, 0.0)
    assert sorted(config["target_modules"]) == sorted(TARGET_MODULES)
    assert not (adapter / "config.json").exists()  # an adapter folder, not a model's
    assert read_card(adapter) == read_card(merged)
    assert read_card(adapter).step == 2 and read_card(adapter).settings.lora_rank == 4

    # the merged weights: W + (alpha / r) B A = W + 2 B A, from the saved tensors
    tensors = load_file(adapter / "adapter_model.safetensors")
    prefix = "base_model.model.model.layers.0.self_attn.q_proj"
    a, b = tensors[f"{prefix}.lora_A.weight"], tensors[f"{prefix}.lora_B.weight"]
    assert a.shape == (4, 256) and b.shape == (256, 4)
    base, _ = load_causal_lm(str(base_folder))
    merged_model, _ = load_causal_lm(str(merged))
    w = base.model.layers[0].self_attn.q_proj.weight
    assert torch.allclose(
        merged_model.model.layers[0].self_attn.q_proj.weight, w + 2 * b @ a, atol=1e-6
    )
    assert float((b @ a).abs().max()) > 1e-3  # the adapter moved

    # hf-probe loads the adapter folder as the in-memory adapted model and as the merged folder
    ids = _prompt_ids(tokenizer)
    adapted = _logits(model, ids)
    engine = get_model(f"hf-probe/{adapter}").api.probe_engine
    assert torch.allclose(_logits(engine.model, ids), adapted, atol=1e-4)
    assert torch.allclose(_logits(merged_model, ids), adapted, atol=1e-4)
    assert torch.equal(_logits(load_causal_lm(str(adapter))[0], ids), _logits(engine.model, ids))
    assert not torch.allclose(_logits(base, ids), adapted, atol=1e-2)
    prompt = "What is 2 + 3?"
    assert _greedy(f"hf-probe/{adapter}", prompt) == _greedy(f"hf-probe/{merged}", prompt)
    first = get_model(f"hf-probe/{saved[0]}").api.probe_engine
    assert not torch.allclose(_logits(first.model, ids), adapted, atol=1e-4)

    # the base's weights: the same in memory (under the adapters) and on disk
    fresh = dict(base.named_parameters())
    kept = {
        name.replace(".base_layer", ""): p
        for name, p in model.named_parameters()
        if "lora_" not in name
    }
    assert kept.keys() == fresh.keys()
    assert all(torch.equal(p, fresh[name]) for name, p in kept.items())
    assert sum(".base_layer" in name for name, _ in model.named_parameters()) == 4 * 7
    assert _digests(base_folder) == before

    from cotaudit.validation.checkpoints import checkpoint_card

    assert checkpoint_card(f"hf-probe/{adapter}") == read_card(adapter)
    assert checkpoint_card(f"hf-probe/{merged}") == read_card(adapter)


def test_train_layers_puts_the_adapter_on_the_top_layers_only(tmp_path):
    from safetensors.torch import load_file

    _, _, _, saved = _train_tiny(tmp_path, steps=1, train_layers=1)
    config = json.loads((saved[0] / ADAPTER_CONFIG).read_text())
    assert config["layers_to_transform"] == [3]  # the top 1 of the tiny model's 4 layers
    names = sorted(load_file(saved[0] / "adapter_model.safetensors"))
    assert len(names) == 2 * len(TARGET_MODULES)  # A and B of each projection, one layer
    assert all(".layers.3." in name for name in names)
    assert not (saved[0] / MERGED_FOLDER).exists()


def test_an_adapter_whose_base_is_missing_is_one_line(tmp_path, capsys):
    _, _, _, saved = _train_tiny(tmp_path, steps=1)
    out = tmp_path / "on-an-adapter"
    argv = ["organism", "hint-follower", "--base", str(saved[0]), "--out", str(out)]
    capsys.readouterr()  # what the training printed
    assert main([*argv, "--lora-rank", "4"]) == 2
    assert capsys.readouterr().err == (
        f"cotaudit organism: --base {saved[0]}: is a LoRA adapter folder; --lora-rank needs a "
        "model folder (its merged folder, merged/ inside it with --merge, or its base)\n"
    )
    assert not out.exists()
    moved = tmp_path / "moved"
    shutil.copytree(saved[0], moved)
    config = json.loads((moved / ADAPTER_CONFIG).read_text())
    gone = tmp_path / "gone"
    config["base_model_name_or_path"] = str(gone)
    (moved / ADAPTER_CONFIG).write_text(json.dumps(config))
    with pytest.raises(ModelNameError) as e:
        check_model_name(str(moved))
    message = str(e.value)
    assert message.startswith(f"hf-probe/{moved}: no such model (the adapter's base model {gone}")
    assert "\n" not in message


def _fake_base(tmp_path: Path, model_type: str) -> Path:
    """A base folder with only a config.json: no weights, so any load would fail otherwise."""
    folder = tmp_path / model_type
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({"model_type": model_type}))
    return folder


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--lora-rank", "0"], "--lora-rank must be >= 1, got 0"),
        (["--merge"], "--merge needs --lora-rank R (it merges a LoRA adapter)"),
        (
            ["--lora-rank", "4"],
            "--base {base}: --lora-rank cannot adapt model_type 'gpt2' (LoRA on q_proj, k_proj, "
            "v_proj, o_proj, gate_proj, up_proj, down_proj needs a Llama-family base: llama, "
            "mistral, qwen2, qwen3, gemma, gemma2, granite, olmo2)",
        ),
    ],
)
def test_bad_lora_settings_are_one_line_before_any_model_loads(tmp_path, capsys, options, message):
    base = _fake_base(tmp_path, "gpt2")
    out = tmp_path / "organism"
    argv = ["organism", "hint-follower", "--base", str(base), "--out", str(out), *options]
    assert main(argv) == 2
    assert capsys.readouterr().err == f"cotaudit organism: {message.format(base=base)}\n"
    assert not out.exists()
