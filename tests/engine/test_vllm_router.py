"""Replicas behind a router, for real: two vLLM CPU servers of the tiny random model behind
``vllm-router`` (``consistent_hash`` on the ``X-Session-ID`` header), started by the session
fixture ``vllm_replicas`` on 127.0.0.1 and stopped by PID.

The selfcommit runs sample their CoTs (``cot_temperature=1``, seeded per sample: the tiny
model's greedy CoT repeats one word and states no number, so nothing would be probed) and force
greedy answers; a seeded CoT is the same on every replica, so runs compare exactly.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from helpers import GREEDY_LAST_NUMBER
from inspect_ai import eval as inspect_eval
from inspect_ai import eval_retry

from cotaudit.engine.inspect_prefill import ROUTING_KEY_ENV

pytestmark = [pytest.mark.model, pytest.mark.vllm]

ROOT = Path(__file__).resolve().parents[2]
ARGS = dict(
    conditions="honest,hinted",
    max_cot_tokens=256,
    stride=32,
    cot_temperature=1.0,
    answer_max_tokens=4,
    **GREEDY_LAST_NUMBER,
)


@pytest.fixture(autouse=True)
def _in_repo_root(monkeypatch):
    monkeypatch.chdir(ROOT)


@pytest.fixture(scope="module")
def reference(vllm_replicas, tmp_path_factory):
    """The run of the stopping tests (2 problems x 2 conditions) on replica 1 alone."""
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(ROOT)
        log = _run(vllm_replicas, vllm_replicas.servers[0].url, tmp_path_factory.mktemp("ref"), 2)
    assert log.status == "success", log.error
    return log


def _run(replicas, url: str, log_dir: Path, problems: int, **eval_args: Any):
    """One selfcommit eval of ``problems`` x 2 samples against ``url`` (a replica or a router)."""
    replicas_module().forget_base_url(replicas.model)
    [log] = inspect_eval(
        "tasks/selfcommit.py",
        model=f"vllm/{replicas.model}",
        model_base_url=url,
        model_args={"api_key": "test"},
        task_args={"problems": problems, **ARGS},
        log_dir=str(log_dir),
        display="none",
        **eval_args,
    )
    return log


def replicas_module():
    import vllm_replicas  # scripts/, on the path through the fixture's launcher

    return vllm_replicas


def _results(log) -> dict[str, tuple[str, list[int], list[list[str]]]]:
    """Per sample: its CoT, probe positions and forced answers."""
    out = {}
    for s in log.samples:
        record = s.store["selfcommit"]
        out[str(s.id)] = (s.output.completion, record["positions"], record["answers"])
    return out


def test_through_the_router_the_results_equal_one_server_and_the_key_raises_the_hit_rate(
    vllm_replicas, tmp_path, monkeypatch
):
    """The same run (2 problems x 2 conditions) against one replica, through the router with
    the routing key and without it: identical CoTs, positions and answers; the replicas' own
    prefix-cache hit rate (caches emptied before each run) is higher with the key, whose
    requests of one sample all reach one replica, than without it, where each prefix request
    lands on the replica its body hashes to."""
    vr = replicas_module()
    router = vllm_replicas.route(vllm_replicas.servers)
    rates: dict[str, float] = {}
    results = {}
    for name, url, key in [
        ("one server", vllm_replicas.servers[0].url, "sample"),
        ("router, key", router.url, "sample"),
        ("router, no key", router.url, "off"),
    ]:
        monkeypatch.setenv(ROUTING_KEY_ENV, key)
        vllm_replicas.reset_prefix_caches()
        before = vllm_replicas.counts()
        log = _run(vllm_replicas, url, tmp_path / name.replace(" ", "_"), problems=2)
        assert log.status == "success", log.error
        rates[name] = vr.hit_rate(before, vllm_replicas.counts())
        results[name] = _results(log)
    print(f"prefix-cache hit rates: {rates}")
    assert len(results["one server"]) == 4
    assert any(answers for _, _, answers in results["one server"].values())
    assert results["router, key"] == results["one server"]
    assert results["router, no key"] == results["one server"]
    assert rates["router, key"] > rates["router, no key"]


def test_a_run_stopped_mid_way_resumes_with_eval_retry_keeping_its_finished_samples(
    vllm_replicas, reference, tmp_path
):
    """One sample at a time through the router; once a sample has finished, the router itself
    is killed: nothing answers, and the run stops with the samples it finished. A router
    started again on the same address, ``eval_retry`` resumes the run: the finished samples are
    kept as they were (same uuids), the others run, and every sample has the results of the
    one-replica run."""
    router = vllm_replicas.route(vllm_replicas.servers)
    port = int(router.root.rsplit(":", 1)[1])
    start = served(vllm_replicas)

    def kill_router() -> None:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            if sum(served(vllm_replicas)) - sum(start) >= 12:
                assert router.process is not None
                os.killpg(router.process.pid, signal.SIGKILL)
                return
            time.sleep(0.05)

    killer = threading.Thread(target=kill_router, daemon=True)
    killer.start()
    log = _run(vllm_replicas, router.url, tmp_path, problems=2, max_samples=1)
    killer.join(timeout=10)
    assert log.status == "error"
    finished = {str(s.id): s.uuid for s in log.samples or [] if s.error is None}
    assert 0 < len(finished) < 4
    vllm_replicas.route(vllm_replicas.servers, port=port)
    replicas_module().forget_base_url(vllm_replicas.model)
    [resumed] = eval_retry(log, log_dir=str(tmp_path), display="none")
    assert resumed.status == "success", resumed.error
    assert {str(s.id): s.uuid for s in resumed.samples if str(s.id) in finished} == finished
    assert len(resumed.samples) == len({s.id for s in resumed.samples}) == 4
    assert _results(resumed) == _results(reference)


def test_a_replica_killed_mid_run_the_run_finishes_on_the_other(vllm_replicas, reference, tmp_path):
    """One sample at a time through the router; once a sample has finished, a replica that is
    serving the run is killed (SIGKILL to its process group). The router marks it unhealthy and
    retries on the other, Inspect retries what still fails; where the run stopped anyway,
    ``eval_retry`` resumes it. The other replica serves the rest, every sample ends once with
    the results of the run on one healthy replica, and the samples finished before the kill
    are kept, not redone. Last in this module: it kills a replica of the shared fixture."""
    router = vllm_replicas.route(vllm_replicas.servers)
    start = served(vllm_replicas)
    at_kill: list[float] = []
    killed: list[int] = []

    def kill_when_busy() -> None:
        """After the first sample's requests (a CoT and ~9 prefixes): kill a replica that has
        requests running or waiting, else the one whose count of finished requests has just
        grown (the one serving the current sample)."""
        deadline = time.monotonic() + 300
        before = start
        while time.monotonic() < deadline:
            now = served(vllm_replicas)
            if sum(now) - sum(start) >= 12:
                busy = [
                    i
                    for i, server in enumerate(vllm_replicas.servers)
                    if metric_sum(server.root, "vllm:num_requests_running")
                    + metric_sum(server.root, "vllm:num_requests_waiting")
                    > 0
                ]
                grown = [i for i, (a, b) in enumerate(zip(now, before, strict=True)) if a > b]
                for i in busy or grown:
                    process = vllm_replicas.servers[i].process
                    assert process is not None
                    os.killpg(process.pid, signal.SIGKILL)
                    at_kill.extend(now)
                    killed.append(i)
                    return
            before = now
            time.sleep(0.02)

    killer = threading.Thread(target=kill_when_busy, daemon=True)
    killer.start()
    log = _run(vllm_replicas, router.url, tmp_path / "routed", problems=2, max_samples=1)
    killer.join(timeout=10)
    assert killed, "no replica was killed during the run"
    survivor = vllm_replicas.servers[1 - killed[0]]
    finished = {str(s.id): s.uuid for s in log.samples or [] if s.error is None}
    if log.status == "success":
        print(f"killed replica {killed[0]}: the run finished on the other, no retry needed")
        assert all(not s.error_retries for s in log.samples)  # no sample was run twice
    else:
        print(f"killed replica {killed[0]}: the run stopped ({log.error}); eval_retry resumes")
        replicas_module().forget_base_url(vllm_replicas.model)
        [log] = eval_retry(log, log_dir=str(tmp_path / "routed"), display="none")
        kept = {str(s.id): s.uuid for s in log.samples if str(s.id) in finished}
        assert kept == finished  # the samples finished before the stop were not run again
    assert log.status == "success", log.error
    assert served(vllm_replicas)[1 - killed[0]] > at_kill[1 - killed[0]]  # the survivor served
    assert survivor.healthy()
    assert len(log.samples) == len({s.id for s in log.samples}) == 4
    assert _results(log) == _results(reference)


def served(replicas) -> list[float]:
    """Each replica's finished requests (``vllm:request_success_total``); 0 for one that is
    down."""
    return [metric_sum(s.root, "vllm:request_success_total") for s in replicas.servers]


def metric_sum(root: str, name: str) -> float:
    """The sum of ``name`` over its label sets in the server's ``/metrics`` (0 if down)."""
    import urllib.request

    try:
        with urllib.request.urlopen(f"{root}/metrics", timeout=5) as r:
            text = r.read().decode()
    except OSError:
        return 0.0
    return sum(
        float(line.rsplit(" ", 1)[1]) for line in text.splitlines() if line.startswith(name + "{")
    )
