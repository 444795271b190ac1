"""Several real vLLM CPU servers of one model behind a real router (``vllm-router``), all on
127.0.0.1, started together and stopped by PID.

The replicas are ``scripts/vllm_cpu_server.py`` servers (started in parallel); the router is the
``vllm-router`` command of the vLLM venv (``scripts/install_vllm_cpu.sh`` installs it there)
with the ``consistent_hash`` policy: a request's ``X-Session-ID`` header picks its replica (see
``cotaudit.engine.inspect_prefill.ROUTING_HEADER``), and a replica that fails its health check
is marked unhealthy, its keys going to a healthy replica.

Each replica's prefix-cache counters come from its own ``/metrics``
(:func:`prefix_cache_counts`): ``vllm:prefix_cache_queries_total`` (prompt tokens looked up)
and ``vllm:prefix_cache_hits_total`` (of those, tokens found in the cache). The replicas run
with ``VLLM_SERVER_DEV_MODE=1`` (loopback only) so that :meth:`Replicas.reset_prefix_caches`
can empty their caches between measured runs (``POST /reset_prefix_cache``).

Used by the router tests (``tests/conftest.py``, ``vllm_replicas``) and
``bench/replicas_throughput.py``; by hand::

    .venv/bin/python scripts/vllm_replicas.py --replicas 2 --model <folder>   # Ctrl-C stops
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import vllm_cpu_server  # noqa: E402 - the sibling script

POLICY = "consistent_hash"
ROUTER_ARGS = (
    "--policy",
    POLICY,
    # a dead replica is marked unhealthy within ~2 s: checked every second, out after 2 failures
    "--health-check-interval-secs",
    "1",
    "--health-failure-threshold",
    "2",
    "--health-check-timeout-secs",
    "2",
    # a request that failed on it is retried (on another replica once it is out) for ~10 s
    "--retry-max-retries",
    "5",
    "--retry-initial-backoff-ms",
    "500",
    "--retry-max-backoff-ms",
    "4000",
    "--log-level",
    "warning",
)


DEV_MODE = {"VLLM_SERVER_DEV_MODE": "1"}
"""The replicas' extra environment: vLLM's development endpoints, ``/reset_prefix_cache``
among them."""


def router_command(workers: list[str], port: int, prometheus_port: int) -> list[str]:
    """The router's command line: ``workers`` are the replicas' root URLs."""
    return [
        str(vllm_cpu_server.VENV / "bin" / "vllm-router"),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--prometheus-host",
        "127.0.0.1",
        "--prometheus-port",
        str(prometheus_port),
        "--worker-urls",
        *workers,
        *ROUTER_ARGS,
    ]


def router_installed() -> bool:
    return (vllm_cpu_server.VENV / "bin" / "vllm-router").exists()


METRIC = re.compile(r"^(vllm:prefix_cache_(?:queries|hits)_total)\{[^}]*\} ([0-9.eE+-]+)$", re.M)


def prefix_cache_counts(root: str) -> tuple[float, float]:
    """(queries, hits): the server's prefix-cache counters, in prompt tokens, from its
    ``/metrics`` (summed over its label sets)."""
    with urllib.request.urlopen(f"{root}/metrics", timeout=10) as r:
        text = r.read().decode()
    totals = {"vllm:prefix_cache_queries_total": 0.0, "vllm:prefix_cache_hits_total": 0.0}
    for name, value in METRIC.findall(text):
        totals[name] += float(value)
    return totals["vllm:prefix_cache_queries_total"], totals["vllm:prefix_cache_hits_total"]


@dataclass
class Router:
    """The router process (started in its own session: its PID is its group's id) and URL."""

    process: subprocess.Popen
    url: str
    log: Path

    @property
    def root(self) -> str:
        return self.url.removesuffix("/v1")

    def log_tail(self, n: int = 40) -> str:
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-n:])

    def stop(self) -> None:
        vllm_cpu_server.stop_group(self.process, timeout=10.0)


@dataclass
class Replicas:
    """Replica ``servers`` of one model and the ``routers`` started over them (:meth:`route`)."""

    servers: list[vllm_cpu_server.VLLMServer]
    routers: list[Router] = field(default_factory=list)

    @property
    def model(self) -> str:
        return self.servers[0].model

    def wait(self, timeout: float = 900.0) -> Replicas:
        """Wait for every replica's ``/health`` (they start in parallel); stop all on failure."""
        try:
            for server in self.servers:
                server.wait(timeout)
        except BaseException:
            self.stop()
            raise
        return self

    def route(
        self,
        servers: list[vllm_cpu_server.VLLMServer],
        port: int | None = None,
        timeout: float = 60.0,
    ) -> Router:
        """Start a router over ``servers`` (healthy ones) on ``port`` (default: a free one) and
        wait until it answers ``/v1/models``; it is stopped with the replicas."""
        port = port or vllm_cpu_server.free_port()
        log = Path(tempfile.mkstemp(prefix="vllm-router-", suffix=".log")[1])
        with log.open("wb") as out:
            process = subprocess.Popen(
                router_command([s.root for s in servers], port, vllm_cpu_server.free_port()),
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
                preexec_fn=vllm_cpu_server._terminate_with_parent,
            )
        router = Router(process, f"http://127.0.0.1:{port}/v1", log)
        self.routers.append(router)
        start = time.monotonic()
        while True:
            try:
                with urllib.request.urlopen(f"{router.url}/models", timeout=5) as r:
                    if r.status == 200:
                        return router
            except OSError:
                pass
            if process.poll() is not None or time.monotonic() - start > timeout:
                router.stop()
                raise RuntimeError(
                    f"vllm-router did not come up in {timeout:.0f} s; its log ({log}) "
                    f"ends:\n{router.log_tail()}"
                )
            time.sleep(0.5)

    def counts(self) -> list[tuple[float, float]]:
        """Each live replica's (queries, hits) prefix-cache counters; (0, 0) for one that is
        down."""
        out = []
        for server in self.servers:
            try:
                out.append(prefix_cache_counts(server.root))
            except OSError:
                out.append((0.0, 0.0))
        return out

    def reset_prefix_caches(self) -> None:
        """Empty every replica's prefix cache, so that a measured run starts cold."""
        for server in self.servers:
            request = urllib.request.Request(f"{server.root}/reset_prefix_cache", method="POST")
            with urllib.request.urlopen(request, timeout=30) as r:
                r.read()

    def stop(self) -> None:
        """Stop every router, then every replica, by PID."""
        while self.routers:
            self.routers.pop().stop()
        for server in self.servers:
            server.stop()


def launch(n: int, model: Path | str, max_model_len: int = 1024, kv_cache_gib: int = 1) -> Replicas:
    """Start ``n`` replicas of ``model`` at once (each waits for nothing: call
    :meth:`Replicas.wait`)."""
    return Replicas(
        [
            vllm_cpu_server.launch(
                model, max_model_len=max_model_len, kv_cache_gib=kv_cache_gib, env=DEV_MODE
            )
            for _ in range(n)
        ]
    )


def forget_base_url(model: str) -> None:
    """Let the next ``vllm/<model>`` in this process connect to its own ``model_base_url``.

    Inspect's ``vllm`` provider keeps one server record per model name for the life of the
    process (``_vllm_servers``) and fills its URL once: a later eval of the same model with
    another base URL (the router instead of a replica) would still talk to the first one.
    """
    from inspect_ai.model._providers._vllm_lora import _vllm_servers

    _vllm_servers.pop(model, None)


def hit_rate(before: list[tuple[float, float]], after: list[tuple[float, float]]) -> float:
    """Prefix-cache hits / queries between two :meth:`Replicas.counts`, over all replicas
    (NaN when nothing was queried)."""
    queries = sum(a[0] - b[0] for a, b in zip(after, before, strict=True))
    hits = sum(a[1] - b[1] for a, b in zip(after, before, strict=True))
    return hits / queries if queries else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--replicas", type=int, default=2)
    parser.add_argument("--model", help="model folder (default: the embedded default model)")
    parser.add_argument("--max-model-len", type=int, default=2048)
    args = parser.parse_args()
    model = args.model
    if model is None:
        model = str(vllm_cpu_server.default_model())
    replicas = launch(args.replicas, model, args.max_model_len, kv_cache_gib=2).wait()
    with vllm_cpu_server.serving(replicas.stop):
        router = replicas.route(replicas.servers)
        for server in replicas.servers:
            assert server.process is not None
            print(f"replica {server.root} (pid {server.process.pid})", flush=True)
        print(f"router {router.url} (pid {router.process.pid}, policy {POLICY})", flush=True)
        print(
            f"inspect eval tasks/selfcommit.py --model vllm/{replicas.model} "
            f"--model-base-url {router.url} -M api_key=none",
            flush=True,
        )
        router.process.wait()


if __name__ == "__main__":
    main()
