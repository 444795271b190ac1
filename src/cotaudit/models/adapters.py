"""Reading a LoRA adapter folder (``adapter_config.json`` beside the adapter's weights, as peft
saves it): whether a folder is one, the base it names, why it cannot load, and the base with the
adapter merged in (:func:`load_merged`), for every loader of a model folder (``hf-probe/``, the
organisms' training and measurement). Training adapters: :mod:`cotaudit.organisms.adapters`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

ADAPTER_CONFIG = "adapter_config.json"
"""The file that makes a folder an adapter folder (peft's)."""


def is_adapter_folder(path: str | Path) -> bool:
    """Whether ``path`` is a folder holding :data:`ADAPTER_CONFIG`."""
    return (Path(path) / ADAPTER_CONFIG).is_file()


def adapter_base(folder: str | Path) -> str:
    """The base an adapter folder names (``base_model_name_or_path``); ``ValueError`` naming
    the file when it is unreadable or names none."""
    path = Path(folder) / ADAPTER_CONFIG
    try:
        config = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as e:
        raise ValueError(f"{path} cannot be read ({type(e).__name__})") from None
    base = config.get("base_model_name_or_path") if isinstance(config, dict) else None
    if not isinstance(base, str) or not base:
        raise ValueError(f"{path} names no base_model_name_or_path")
    return base


def adapter_base_problem(folder: str | Path) -> str | None:
    """Why an adapter folder cannot load (None: its base is there): its config names no base,
    or names a path that is not a model folder (with ``config.json``). A base named as a hub
    id is left to the hub-id check."""
    try:
        base = adapter_base(folder)
    except ValueError as e:
        return str(e)
    path = Path(base).expanduser()
    if path.is_absolute() or path.exists():
        if not (path / "config.json").is_file():
            return f"the adapter's base model {base} ({ADAPTER_CONFIG}) is not a model folder"
    return None


def load_merged(folder: str | Path, dtype: Any = None) -> Any:
    """The base of an adapter folder (:func:`adapter_base`) with the adapter merged into its
    weights (peft's ``merge_and_unload``: a plain transformers model, as fast as the base),
    in eval mode; ``dtype`` a torch dtype (None: float32)."""
    import torch
    from peft import PeftModel
    from transformers import AutoModelForCausalLM

    base = AutoModelForCausalLM.from_pretrained(
        adapter_base(folder), dtype=torch.float32 if dtype is None else dtype
    )
    model = PeftModel.from_pretrained(base, str(folder)).merge_and_unload()
    model.eval()
    return model
