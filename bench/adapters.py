"""N checkpoints of a LoRA organism served by vLLM's CPU build: as N adapters of one server
against N merged folders on N servers; their load time and resident memory side by side.

    python bench/adapters.py --base default --n 3 --out /tmp/adapters-bench
    python bench/adapters.py --series /tmp/adapters-bench/organism     # checkpoints already saved

Trains (unless ``--series``) a rank ``--rank`` LoRA hint-follower from ``--base`` for ``--n``
steps, one checkpoint a step, each with its merged folder (``cotaudit organism --lora-rank R
--merge``; a few steps on one problem: the weights' values do not matter here). Then:

- **adapters**: one server of the base with the N adapter folders (``--enable-lora``,
  ``scripts/vllm_cpu_server.py``'s ``lora``).
- **merged**: N servers, one per merged folder, started one after another (each alone on the
  CPU while it starts), all kept running until the last is up.

Each server has the same ``--max-model-len`` and KV cache (``--kv-cache-gib``). Load time: from
the server's launch to its ``/health`` answering 200 (summed over the merged servers), then one
first request per checkpoint (one token of greedy chat; an adapter's weights are read on its
first request), then a greedy completion of 64 tokens per checkpoint (decode speed: vLLM's CPU
build turns graph compilation off when LoRA is enabled, ``vllm/platforms/cpu.py``, so an
adapter server starts without compiling and decodes eagerly). Resident memory, once every
server of a column is up and has answered: the sum over the servers' processes (the API
server, its engine-core child) of PSS (proportional set size: shared pages split among the
processes sharing them, so sums do not double count) and of RSS. A server without LoRA compiles
its model graph at every start on this build (vllm-cpu 0.32.0 with torch 2.13.0: reading the
compiled graph back from ``~/.cache/vllm`` fails, "'function' object has no attribute
'finalize_loading'", and it compiles again: about a minute on two cores).
Times depend on the machine's load: say how loaded it was when quoting them.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import psutil

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

import vllm_cpu_server  # noqa: E402 - scripts/, put on the path above

from cotaudit.organisms import TrainingSettings, get_organism, read_card, saved_checkpoints  # noqa: E402
from cotaudit.organisms.adapters import MERGED_FOLDER  # noqa: E402
from cotaudit.providers._local import alias_path  # noqa: E402

GIB = 1024**3
DECODE_TOKENS = 64
"""The greedy completion timed after the first request (a column's decode speed)."""


def train_series(base: str, out: Path, n: int, rank: int) -> None:
    """``n`` checkpoints of a rank-``rank`` LoRA hint-follower with merged folders."""
    from cotaudit.organisms.training import load_causal_lm, train

    path = alias_path(base)
    model, tokenizer = load_causal_lm(path)
    settings = TrainingSettings(
        steps=n, save_every=1, batch_size=1, problems=1, lora_rank=rank, merge=True
    )
    train(
        get_organism("hint-follower"),
        model,
        tokenizer,
        settings,
        out=out,
        base=base,
        base_path=path,
    )


def memory(servers: list[Any]) -> tuple[float, float]:
    """PSS and RSS in GiB, summed over the servers' processes and their children."""
    pss = rss = 0
    for server in servers:
        root = psutil.Process(server.process.pid)
        for proc in [root, *root.children(recursive=True)]:
            try:
                info = proc.memory_full_info()
            except psutil.NoSuchProcess:
                continue
            pss += info.pss
            rss += info.rss
    return pss / GIB, rss / GIB


def first_request(url: str, model: str, tokens: int = 1) -> float:
    """Seconds for one greedy chat completion of ``model`` of exactly ``tokens`` tokens."""
    body = {
        "model": model,
        "messages": [{"role": "user", "content": "What is 2 + 3?"}],
        "max_tokens": tokens,
        "temperature": 0,
        "ignore_eos": True,
    }
    start = time.perf_counter()
    response = httpx.post(f"{url}/chat/completions", json=body, timeout=600)
    response.raise_for_status()
    return time.perf_counter() - start


def start(model: str, args: argparse.Namespace, lora: list[Path] | None = None) -> Any:
    server = vllm_cpu_server.launch(
        model, max_model_len=args.max_model_len, kv_cache_gib=args.kv_cache_gib, lora=lora or ()
    )
    return server.wait()


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--base", default="default", help="with --out: the base trained from")
    parser.add_argument("--n", type=int, default=3, help="checkpoints")
    parser.add_argument("--rank", type=int, default=8, help="LoRA rank")
    parser.add_argument("--out", type=Path, help="train the series into OUT/organism")
    parser.add_argument("--series", type=Path, help="an organism folder with --merge checkpoints")
    parser.add_argument("--max-model-len", type=int, default=1024)
    parser.add_argument("--kv-cache-gib", type=int, default=1)
    args = parser.parse_args()
    if (args.out is None) == (args.series is None):
        parser.error("give --out (train a series) or --series (one already trained)")
    folder = args.series
    if args.out is not None:
        folder = args.out / "organism"
        start_train = time.perf_counter()
        train_series(args.base, folder, args.n, args.rank)
        print(f"trained {args.n} checkpoints in {time.perf_counter() - start_train:.0f} s")
    checkpoints = [path for _, path in saved_checkpoints(folder)][: args.n]
    merged = [path / MERGED_FOLDER for path in checkpoints]
    if missing := [str(m) for m in merged if not m.is_dir()]:
        parser.error(f"no merged folder (train with --merge): {', '.join(missing)}")
    base = read_card(checkpoints[0]).base_path
    n = len(checkpoints)
    print(f"base {base}; {n} checkpoints of {folder}; load {psutil.getloadavg()}")

    server = start(base, args, checkpoints)
    try:
        adapter_start = server.startup_s
        adapter_first = [first_request(server.url, str(c.resolve())) for c in checkpoints]
        adapter_decode = [
            first_request(server.url, str(c.resolve()), DECODE_TOKENS) for c in checkpoints
        ]
        adapter_mem = memory([server])
    finally:
        server.stop()

    servers: list[Any] = []
    try:
        for m in merged:
            servers.append(start(str(m), args))
        merged_start = [s.startup_s for s in servers]
        merged_first = [first_request(s.url, s.model) for s in servers]
        merged_decode = [first_request(s.url, s.model, DECODE_TOKENS) for s in servers]
        merged_mem = memory(servers)
    finally:
        for s in servers:
            s.stop()

    def row(name: str, left: str, right: str) -> None:
        print(f"{name:<30} {left:>28} {right:>28}")

    row("", f"{n} adapters, 1 server", f"{n} merged, {n} servers")
    row("start-up to healthy (s)", f"{adapter_start:.1f}", f"{sum(merged_start):.1f}")
    row("  per server (s)", f"{adapter_start:.1f}", " ".join(f"{t:.1f}" for t in merged_start))
    row(
        "first request, each (s)",
        " ".join(f"{t:.2f}" for t in adapter_first),
        " ".join(f"{t:.2f}" for t in merged_first),
    )
    row(
        f"{DECODE_TOKENS} tokens, each (s)",
        " ".join(f"{t:.2f}" for t in adapter_decode),
        " ".join(f"{t:.2f}" for t in merged_decode),
    )
    row("resident PSS (GiB)", f"{adapter_mem[0]:.2f}", f"{merged_mem[0]:.2f}")
    row("resident RSS (GiB)", f"{adapter_mem[1]:.2f}", f"{merged_mem[1]:.2f}")
    print(f"load after: {psutil.getloadavg()}")


if __name__ == "__main__":
    main()
