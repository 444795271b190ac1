"""Throughput of the selfcommit task vs Inspect's --max-connections, side by side in one run.

    python bench/concurrency.py --problems 2 --connections 1,4

Each setting runs the same samples (same seed) on a fresh log; prints samples per minute.
The in-process providers serialise model calls on one engine lock (one model, one process),
so on a CPU the batching happens inside a sample (all prefixes of a CoT decode together), not
across samples; this benchmark shows what concurrency adds on top of that.
"""

from __future__ import annotations

import argparse
import tempfile
import time

from inspect_ai import eval as inspect_eval


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--model", default="hf-probe/default")
    parser.add_argument("--problems", type=int, default=2)
    parser.add_argument("--max-cot-tokens", type=int, default=120)
    parser.add_argument("--connections", default="1,4")
    args = parser.parse_args()
    for connections in (int(c) for c in args.connections.split(",")):
        with tempfile.TemporaryDirectory() as log_dir:
            start = time.perf_counter()
            [log] = inspect_eval(
                "tasks/selfcommit.py",
                model=args.model,
                log_dir=log_dir,
                display="none",
                task_args={"problems": args.problems, "max_cot_tokens": args.max_cot_tokens},
                max_connections=connections,
                max_samples=max(connections, 1),
            )
            elapsed = time.perf_counter() - start
            n = len(log.samples or [])
        print(
            f"--max-connections {connections}: {n} samples in {elapsed:.1f} s "
            f"({60 * n / elapsed:.1f} samples/min)"
        )


if __name__ == "__main__":
    main()
