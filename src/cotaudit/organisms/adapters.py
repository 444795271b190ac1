"""LoRA adapters for organisms (``cotaudit organism --lora-rank R``), with ``peft``.

**The adapter.** Every linear projection ``W`` (out x in) named in :data:`TARGET_MODULES` (a
Llama-family decoder layer's attention projections ``q_proj``, ``k_proj``, ``v_proj``,
``o_proj`` and MLP projections ``gate_proj``, ``up_proj``, ``down_proj``) computes

    h = W x + (alpha / r) * B A x

with ``A`` (r x in) and ``B`` (out x r) the only trained weights, ``r`` the rank (``--lora-rank``)
and ``alpha = ALPHA_PER_RANK * r`` (:func:`lora_alpha`), so the update's scale ``alpha / r`` is 2
at every rank. ``A`` starts at peft's Kaiming-uniform draw and ``B`` at 0, so the untrained
adapter is the base model exactly. No dropout on the adapter's input (:data:`DROPOUT` 0: a
training step is as deterministic as the full fine-tune's), no bias, and nothing else trained:
the embeddings, the norms (the final one included) and the output head stay the base's.
``--train-layers K`` puts the adapter on the top ``K`` decoder layers only (peft's
``layers_to_transform``: layer indices ``L-K .. L-1`` of ``L``); without it, on every layer.

**The folders.** A checkpoint is an adapter folder (``adapter_config.json``, whose
``base_model_name_or_path`` is the base's absolute folder, or its hub id;
``adapter_model.safetensors``; the tokenizer; the organism card), written through the same
staging folder and rename as a full checkpoint. With ``--merge`` it also holds
:data:`MERGED_FOLDER`: the base with ``W + (alpha / r) B A`` written into each targeted weight
(peft's ``merge_and_unload``), a plain Hugging Face folder with its own copy of the card.

Whether peft can wrap a base is decided from its ``config.json`` alone, before any weights load
(:func:`check_base`): its ``model_type`` must be one of :data:`LLAMA_FAMILY`, the architectures
whose decoder layers name their projections as :data:`TARGET_MODULES` and whose LoRA vLLM also
serves.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from cotaudit.models.adapters import (
    is_adapter_folder,
)
from cotaudit.organisms.settings import OrganismSettingsError

TARGET_MODULES = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")
"""The projections an adapter is put on, in every adapted decoder layer."""
ALPHA_PER_RANK = 2
"""``lora_alpha = ALPHA_PER_RANK * r``: the adapter's update is scaled by ``alpha / r`` = 2."""
DROPOUT = 0.0
"""Dropout on the adapter's input while training."""
LLAMA_FAMILY = ("llama", "mistral", "qwen2", "qwen3", "gemma", "gemma2", "granite", "olmo2")
"""Base ``model_type`` values whose decoder layers (``model.model.layers``) hold every module of
:data:`TARGET_MODULES` under those names."""
MERGED_FOLDER = "merged"
"""The merged model's folder inside a checkpoint's adapter folder (``--merge``)."""


def lora_alpha(rank: int) -> int:
    """``alpha`` of an adapter of rank ``rank``: ``ALPHA_PER_RANK * rank``."""
    return ALPHA_PER_RANK * rank


def base_config(base_path: str) -> dict[str, Any]:
    """The ``config.json`` of a base: read from its folder, or, for a hub id, from the hub
    (the local cache first); no weights are read."""
    folder = Path(base_path)
    if folder.is_dir():
        path = folder / "config.json"
    else:
        from huggingface_hub import hf_hub_download

        path = Path(hf_hub_download(base_path, "config.json"))
    loaded = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(loaded, dict):
        raise ValueError(f"{path}: not a JSON object")
    return loaded


def check_base(base: str, base_path: str) -> None:
    """Raise :class:`OrganismSettingsError` (one line naming ``--base``) unless peft can put
    :data:`TARGET_MODULES` adapters on the base, judged from its ``config.json`` only: its
    ``model_type`` is one of :data:`LLAMA_FAMILY`. An adapter folder is refused (an adapter is
    trained on a model, not on another adapter)."""
    if is_adapter_folder(base_path):
        raise OrganismSettingsError(
            f"--base {base}: is a LoRA adapter folder; --lora-rank needs a model folder (its "
            f"merged folder, {MERGED_FOLDER}/ inside it with --merge, or its base)"
        )
    try:
        config = base_config(base_path)
    except Exception as e:  # noqa: BLE001 - any failure to read it is the user's --base
        first = str(e).strip().splitlines()[0] if str(e).strip() else ""
        raise OrganismSettingsError(
            f"--base {base}: its config.json cannot be read for --lora-rank "
            f"({type(e).__name__}: {first})"
        ) from None
    model_type = config.get("model_type")
    if model_type not in LLAMA_FAMILY:
        raise OrganismSettingsError(
            f"--base {base}: --lora-rank cannot adapt model_type {model_type!r} (LoRA on "
            f"{', '.join(TARGET_MODULES)} needs a Llama-family base: {', '.join(LLAMA_FAMILY)})"
        )


def lora_config(rank: int, num_layers: int, train_layers: int | None) -> Any:
    """peft's ``LoraConfig`` of the module docstring: rank ``rank``, :func:`lora_alpha`, no
    dropout or bias, on :data:`TARGET_MODULES` of the top ``train_layers`` of ``num_layers``
    decoder layers (all when None)."""
    from peft import LoraConfig, TaskType

    layers = None if train_layers is None else list(range(num_layers - train_layers, num_layers))
    return LoraConfig(
        task_type=TaskType.CAUSAL_LM,
        r=rank,
        lora_alpha=lora_alpha(rank),
        lora_dropout=DROPOUT,
        bias="none",
        target_modules=list(TARGET_MODULES),
        layers_to_transform=layers,
    )


def wrap(model: Any, rank: int, train_layers: int | None) -> Any:
    """``model`` with LoRA adapters of :func:`lora_config` (peft's ``get_peft_model``: the
    adapters are put into ``model``'s own modules; only their weights require grad)."""
    from peft import get_peft_model

    layers = len(model.model.layers)
    if train_layers is not None and train_layers > layers:
        raise ValueError(f"--train-layers {train_layers}: the model has {layers} layers")
    return get_peft_model(model, lora_config(rank, layers, train_layers))


def is_peft_model(model: Any) -> bool:
    """Whether ``model`` is a peft model (adapters put on a base), without importing peft."""
    return type(model).__module__.split(".")[0] == "peft"


def base_reference(base_path: str) -> str:
    """What an adapter folder records as its base: the absolute folder, or the hub id."""
    path = Path(base_path)
    return str(path.resolve()) if path.is_dir() else base_path


def save_adapter(model: Any, folder: Path, base_path: str) -> None:
    """Write the adapter of a peft ``model`` into ``folder`` (``adapter_config.json`` with the
    base as :func:`base_reference`, ``adapter_model.safetensors``)."""
    config = model.peft_config["default"]
    config.base_model_name_or_path = base_reference(base_path)
    model.save_pretrained(folder)


def vllm_max_lora_rank(rank: int) -> int:
    """The smallest ``--max-lora-rank`` vLLM 0.32 accepts (one of 1, 8, 16, 32, 64, 128, 256,
    320, 512) that serves an adapter of rank ``rank``."""
    for allowed in (1, 8, 16, 32, 64, 128, 256, 320, 512):
        if rank <= allowed:
            return allowed
    raise ValueError(f"LoRA rank {rank}: vLLM serves ranks up to 512")
