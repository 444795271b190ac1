"""One decode step of the mlx/ engine, part by part, against this machine's floor.

    python bench/decode_step_mlx.py                          # MLX's bundled BLAS
    COTAUDIT_MLX_OPENBLAS=1 python bench/decode_step_mlx.py  # Debian's OpenBLAS (Linux CPU)
    python bench/decode_step_mlx.py --rows 1,4,16 --context 300 --repeats 5
    python bench/decode_step_mlx.py --attention grouped      # the engine's attention only

The step is :meth:`cotaudit.engine.mlx_batch.MLXStepper.step` over ``rows`` CoT jobs
(:class:`cotaudit.engine.mlx_batch.GenerateJob`, one row each), followed by each job's own
sampling (``job.advance``), exactly as the engine's worker runs it, on the default model
(SmolLM2-135M-Instruct, fp32; any mlx-lm Llama-type model with ``--model``). Each job's cache
holds ``context`` positions (random keys and values: the step's cost does not depend on them)
laid out as after a prefill, so every job attends over ``context`` + 1 keys.

Definitions (times are min and median over ``repeats`` steps per row count; MLX is lazy, so
every timed part ends with ``mx.eval`` of its outputs or a ``tolist()``):

- **step**: the engine's step plus sampling, as the worker runs it (one ``mx.eval``).
- The parts come from a second, instrumented step that runs the same modules of the same model
  one part at a time (each evaluated before the next; its logits equal the engine step's,
  checked at the start):
  **projections** q, k, v and o; **MLP** gate, up and down; **LM head** (the tied embedding as a
  linear layer); **attention**: the patched per-job attention (one mlx-lm
  ``scaled_dot_product_attention`` per job per layer over that job's cache, or on the CPU
  :func:`cotaudit.engine.mlx_batch.grouped_jobs_attention`); **cache**: every
  job's ``KVCache.update_and_fetch`` (the new key and value written, the views fetched);
  **sampling**: each job's ``advance`` (argmax or categorical, and the ``tolist()`` that reads
  the token ids); **small ops**: embedding lookup, RMS norms, rotary embedding, residual adds,
  SwiGLU (also shown alone), reshapes (timed, listed for information).
- **rest** = step - (projections + MLP + LM head + attention + cache + sampling): the small ops
  and the Python and framework overhead of a step evaluated as one graph.
- **GEMM rate**: GFLOP/s of an ``n x n`` matmul in the model's activation dtype (fp32 for the
  default model; ``--gemm-size``; also 2n and 4n while one product takes under 50 ms), the
  best of 5 at each size.
- **read bandwidth**: GB/s, the best of three reads of a 512 MB fp32 array (MLX ``sum``, NumPy
  ``sum``, and an MLX matrix-vector product, which the BLAS may run on several threads).
- **FLOP floor** of a part or a step: 2 x matmul weights x rows / GEMM rate, and for attention
  4 x layers x heads x head_dim x keys x rows / GEMM rate.
- **memory floor**: bytes the step must read once / read bandwidth: every matmul weight (for a
  quantized model its packed words, scales and biases), and every job's keys and values
  (2 x layers x kv_heads x head_dim x keys x itemsize per row).
- **floor** = max(FLOP floor, memory floor); the tables print time / floor.

``--attention grouped,per-job`` (the default) profiles both attentions of a batched step,
alternating step by step in one run: ``grouped`` (the engine's on the CPU) and ``per-job``
(mlx-lm's function for each job's rows, the engine's on a GPU); their logits are compared bit
for bit at the start.

Timings on a shared machine are noisy: the ratios are what to compare, and the script prints
the load average at the start and the end.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from cotaudit.engine.openblas import openblas_status, openblas_wanted, preload_openblas

PARTS = ("projections", "MLP", "LM head", "attention", "cache", "sampling")
MB = 1e6


@dataclass
class Weights:
    """A group of matmul weights: how many, and the bytes a step reads to use them."""

    count: int
    nbytes: int


@dataclass
class Shapes:
    """What the floor needs to know about the model."""

    layers: int
    heads: int
    kv_heads: int
    head_dim: int
    itemsize: int
    """Bytes per activation, key and value element."""
    proj: Weights
    """q, k, v and o, all layers."""
    mlp: Weights
    """gate, up and down, all layers."""
    head: Weights
    """The LM head (vocab x hidden)."""


@dataclass
class Machine:
    """This machine's measured rates."""

    gemm_flops: float
    """FLOP/s of a large matmul in the model's activation dtype."""
    bandwidth: float
    """Bytes/s read."""
    bandwidth_by: dict[str, float] = field(default_factory=dict)


def blas_name() -> str:
    """Which BLAS MLX's CPU matmul runs on in this process."""
    status = openblas_status()
    if not status.applies:
        return "not applicable (not Linux: Metal/Accelerate)"
    if status.loaded:
        return f"OpenBLAS ({status.loaded_path})"
    return "MLX's bundled BLAS (the mlx-cpu wheel's)"


def load_average() -> str:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "?"


def best(fn: Callable[[], Any], repeats: int) -> float:
    """Min wall time of ``fn()`` over ``repeats`` calls."""
    out = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        out.append(time.perf_counter() - start)
    return min(out)


def measure_machine(gemm_size: int, dtype: Any) -> Machine:
    """GEMM rate (matmuls in ``dtype``) and read bandwidth, measured now (see the module
    docstring)."""
    import mlx.core as mx
    import numpy as np

    gemm = 0.0
    size = gemm_size
    while True:  # n, then 2n while one product takes under 50 ms (a fast BLAS)
        a = mx.random.normal((size, size)).astype(dtype)
        b = mx.random.normal((size, size)).astype(dtype)
        mx.eval(a, b)
        mx.eval(a @ b)
        seconds = best(lambda a=a, b=b: mx.eval(a @ b), 5)
        gemm = max(gemm, 2 * size**3 / seconds)
        if seconds > 0.05 or size >= 4 * gemm_size:
            break
        size *= 2
    n = 128 * 1024 * 1024  # 512 MB of fp32
    big = mx.random.normal((n,))
    mx.eval(big)
    by = {"mlx sum": 4 * n / best(lambda: mx.eval(big.sum()), 3)}
    mat = big.reshape(8192, n // 8192)
    vec = mx.random.normal((1, 8192))
    mx.eval(vec @ mat)
    by["mlx matrix-vector"] = 4 * n / best(lambda: mx.eval(vec @ mat), 3)
    arr = np.random.default_rng(0).standard_normal(n, dtype=np.float32)
    by["numpy sum"] = 4 * n / best(lambda: arr.sum(), 3)
    return Machine(gemm, max(by.values()), by)


def linear_weights(layer: Any) -> Weights:
    """Weights of an mlx-lm linear (or embedding used as one) layer: for a quantized layer,
    ``bits``-bit weights packed in 32-bit words, plus their scales and biases."""
    bits = getattr(layer, "bits", None)
    count = layer.weight.size * (32 // bits if bits else 1)
    extra = [getattr(layer, n, None) for n in ("scales", "biases")] if bits else []
    return Weights(count, layer.weight.nbytes + sum(a.nbytes for a in extra if a is not None))


def activation_dtype(model: Any) -> Any:
    """The dtype of the model's activations (a quantized layer's scales carry it)."""
    q_proj = model.model.layers[0].self_attn.q_proj
    return (q_proj.scales if getattr(q_proj, "bits", None) else q_proj.weight).dtype


def model_shapes(model: Any) -> Shapes:
    """Layer count, heads and matmul weights of an mlx-lm Llama-type model (fp or quantized)."""
    inner = model.model
    attn = inner.layers[0].self_attn

    def total(module: str, names: Sequence[str]) -> Weights:
        parts = [
            linear_weights(getattr(getattr(layer, module), n))
            for layer in inner.layers
            for n in names
        ]
        return Weights(sum(p.count for p in parts), sum(p.nbytes for p in parts))

    head = getattr(model, "lm_head", None)
    return Shapes(
        layers=len(inner.layers),
        heads=attn.n_heads,
        kv_heads=attn.n_kv_heads,
        head_dim=attn.q_proj.weight.shape[0] // attn.n_heads,  # packing is along the input
        itemsize=activation_dtype(model).size,
        proj=total("self_attn", ("q_proj", "k_proj", "v_proj", "o_proj")),
        mlp=total("mlp", ("gate_proj", "up_proj", "down_proj")),
        head=linear_weights(head if head is not None else inner.embed_tokens),
    )


def floors(shapes: Shapes, machine: Machine, rows: int, keys: int) -> dict[str, float]:
    """Floor (seconds) of each part with one, and of the whole step ("step")."""
    s, m = shapes, machine

    def matmul(weights: Weights) -> tuple[float, float]:
        return 2 * weights.count * rows / m.gemm_flops, weights.nbytes / m.bandwidth

    kv_bytes = 2 * s.layers * s.kv_heads * s.head_dim * keys * s.itemsize * rows
    attn_flops = 4 * s.layers * s.heads * s.head_dim * keys * rows
    parts = {
        "projections": matmul(s.proj),
        "MLP": matmul(s.mlp),
        "LM head": matmul(s.head),
        "attention": (attn_flops / m.gemm_flops, kv_bytes / m.bandwidth),
    }
    out = {name: max(f, b) for name, (f, b) in parts.items()}
    out["flop"] = sum(f for f, _ in parts.values())
    out["memory"] = sum(b for _, b in parts.values())
    out["step"] = max(out["flop"], out["memory"])
    return out


def make_jobs(engine: Any, rows: int, context: int, temperature: float) -> list[Any]:
    """``rows`` one-row CoT jobs, each with its own ``context``-position cache (random keys and
    values written as a prefill writes them) and a next token to feed."""
    import mlx.core as mx

    from cotaudit.engine.base import seed_for
    from cotaudit.engine.mlx_batch import GenerateJob, RowDecoder

    shapes = model_shapes(engine.model)
    dtype = activation_dtype(engine.model)
    key = mx.random.key(1)
    filler = []
    for _ in range(shapes.layers):
        key, k1, k2 = mx.random.split(key, 3)
        kv_shape = (1, shapes.kv_heads, context, shapes.head_dim)
        filler.append(
            (
                mx.random.normal(kv_shape, key=k1).astype(dtype),
                mx.random.normal(kv_shape, key=k2).astype(dtype),
            )
        )
    mx.eval(filler)
    messages = [{"role": "user", "content": "What is 6 times 7?"}]
    jobs = []
    for i in range(rows):
        job = GenerateJob(engine._stepper, messages, 1 << 20, temperature, i, 1)
        job.cache = engine.new_cache()
        for layer_cache, (k, v) in zip(job.cache, filler, strict=True):
            layer_cache.update_and_fetch(k, v)
        job.decoder = RowDecoder(1, 1 << 20, temperature, seed_for(i), [])
        job.decoder.next = mx.array([1000 + 37 * i])
        jobs.append(job)
        mx.eval([c.state[:2] for c in job.cache])
    return jobs


def engine_step(jobs: Sequence[Any]) -> Any:
    """The worker's step: one forward pass, then each job samples its own rows."""
    logits = jobs[0].stepper.step(jobs)
    for job, part in zip(jobs, logits, strict=True):
        job.advance(part)
    return logits


def instrumented_step(engine: Any, jobs: Sequence[Any]) -> tuple[dict[str, float], list[Any]]:
    """The engine step of an mlx-lm Llama-type model, one part at a time (each part's outputs
    evaluated before the next starts); returns the seconds per part and the logits per job."""
    import mlx.core as mx
    from mlx_lm.models.activations import swiglu

    from cotaudit.engine.mlx_batch import JobsLayerCache

    model = engine.model
    inner = model.model
    attention = sys.modules[type(model).__module__].scaled_dot_product_attention
    spent = dict.fromkeys((*PARTS, "small ops", "SwiGLU"), 0.0)

    def timed(part: str, fn: Callable[[], Any]) -> Any:
        start = time.perf_counter()
        out = fn()
        mx.eval([getattr(o, "parts", o) for o in out] if isinstance(out, tuple) else out)
        spent[part] += time.perf_counter() - start
        return out

    def setup() -> tuple[list[tuple[int, int]], list[Any], Any]:
        spans, start = [], 0
        for job in jobs:
            spans.append((start, start + job.rows))
            start += job.rows
        offsets = mx.array([job.cache[0].offset for job in jobs for _ in range(job.rows)])
        grouped = engine._stepper.grouped_attention
        caches = [
            JobsLayerCache(jobs, spans, i, offsets, grouped) for i in range(len(inner.layers))
        ]
        tokens = mx.concatenate([j.decoder.next for j in jobs])
        return spans, caches, inner.embed_tokens(tokens[:, None])

    spans, caches, h = timed("small ops", setup)
    rows = h.shape[0]
    for layer, cache in zip(inner.layers, caches, strict=True):
        attn, mlp = layer.self_attn, layer.mlp
        x = timed("small ops", lambda h=h, layer=layer: layer.input_layernorm(h))
        q, k, v = timed(
            "projections",
            lambda x=x, attn=attn: (attn.q_proj(x), attn.k_proj(x), attn.v_proj(x)),
        )

        def rope(q: Any = q, k: Any = k, v: Any = v, attn: Any = attn, cache: Any = cache) -> Any:
            q = q.reshape(rows, 1, attn.n_heads, -1).transpose(0, 2, 1, 3)
            k = k.reshape(rows, 1, attn.n_kv_heads, -1).transpose(0, 2, 1, 3)
            v = v.reshape(rows, 1, attn.n_kv_heads, -1).transpose(0, 2, 1, 3)
            return attn.rope(q, offset=cache.offset), attn.rope(k, offset=cache.offset), v

        q, k, v = timed("small ops", rope)
        keys, values = timed(
            "cache",
            lambda k=k, v=v, cache=cache: cache.update_and_fetch(k, v),
        )
        out = timed(
            "attention",
            lambda q=q, keys=keys, values=values, cache=cache, attn=attn: attention(
                q, keys, values, cache=cache, scale=attn.scale, mask=None
            ),
        )
        out = timed("small ops", lambda out=out: out.transpose(0, 2, 1, 3).reshape(rows, 1, -1))
        o = timed("projections", lambda out=out, attn=attn: attn.o_proj(out))
        h, x = timed(
            "small ops",
            lambda h=h, o=o, layer=layer: (h + o, layer.post_attention_layernorm(h + o)),
        )
        g, u = timed("MLP", lambda x=x, mlp=mlp: (mlp.gate_proj(x), mlp.up_proj(x)))
        a = timed("SwiGLU", lambda g=g, u=u: swiglu(g, u))
        d = timed("MLP", lambda a=a, mlp=mlp: mlp.down_proj(a))
        h = timed("small ops", lambda h=h, d=d: h + d)
    h = timed("small ops", lambda: inner.norm(h))
    head = getattr(model, "lm_head", None)
    logits = timed(
        "LM head",
        lambda: (head(h) if head is not None else inner.embed_tokens.as_linear(h))[:, -1, :],
    )
    parts = [logits[a:b] for a, b in spans]
    start = time.perf_counter()
    for job, part in zip(jobs, parts, strict=True):
        job.advance(part)
    spent["sampling"] += time.perf_counter() - start
    return spent, parts


def check_instrumented(engine: Any, context: int, temperature: float) -> tuple[bool, bool]:
    """Whether the instrumented step's logits equal the engine step's, and whether the grouped
    attention's equal the per-job attention's (4 jobs, same caches)."""
    import mlx.core as mx

    def equal(x: Sequence[Any], y: Sequence[Any]) -> bool:
        return all(mx.array_equal(a, b).item() for a, b in zip(x, y, strict=True))

    stepper = engine._stepper
    default = stepper.grouped_attention
    stepper.grouped_attention = True
    grouped = engine_step(make_jobs(engine, 4, context, temperature))
    _, parts = instrumented_step(engine, make_jobs(engine, 4, context, temperature))
    stepper.grouped_attention = False
    per_job = engine_step(make_jobs(engine, 4, context, temperature))
    stepper.grouped_attention = default
    return equal(grouped, parts), equal(grouped, per_job)


VARIANTS = {"grouped": True, "per-job": False}


def profile(
    engine: Any,
    rows: int,
    context: int,
    temperature: float,
    repeats: int,
    budget: float,
    variants: Sequence[str],
) -> dict[str, tuple[list[float], dict[str, list[float]]]]:
    """Per attention variant: engine steps and instrumented steps, interleaved (and the
    variants alternating step by step), after two warm-up steps of each."""
    stepper = engine._stepper
    default = stepper.grouped_attention
    jobs = {v: make_jobs(engine, rows, context, temperature) for v in variants}
    for v in variants:
        stepper.grouped_attention = VARIANTS[v]
        for _ in range(2):
            engine_step(jobs[v])
    out: dict[str, tuple[list[float], dict[str, list[float]]]] = {v: ([], {}) for v in variants}
    begin = time.perf_counter()
    for i in range(repeats):
        for v in variants:
            stepper.grouped_attention = VARIANTS[v]
            steps, parts = out[v]
            start = time.perf_counter()
            engine_step(jobs[v])
            steps.append(time.perf_counter() - start)
            spent, _ = instrumented_step(engine, jobs[v])
            for name, value in spent.items():
                parts.setdefault(name, []).append(value)
        if i >= 2 and time.perf_counter() - begin > budget * len(variants):
            break
    stepper.grouped_attention = default
    return out


def ms(seconds: float) -> str:
    return f"{seconds * 1e3:.1f}"


def report(
    label: str,
    rows: int,
    keys: int,
    steps: list[float],
    parts: dict[str, list[float]],
    floor: dict[str, float],
) -> str:
    step_min, step_med = min(steps), statistics.median(steps)
    lines = [
        f"\n{rows} rows ({rows} jobs), {keys} keys per job, {label} attention, {len(steps)} steps:",
        "| part | min | median | own floor | min / own floor | min / step floor |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    measured = 0.0
    for name in PARTS:
        lo, med = min(parts[name]), statistics.median(parts[name])
        measured += lo
        own = floor.get(name)
        own_text = f"{ms(own)} ms" if own else "-"
        ratio = f"{lo / own:.1f}x" if own else "-"
        lines.append(
            f"| {name} | {ms(lo)} ms | {ms(med)} ms | {own_text} | {ratio} | "
            f"{lo / floor['step']:.2f}x |"
        )
    rest = step_min - measured
    lines.append(f"| rest | {ms(rest)} ms | | - | - | {rest / floor['step']:.2f}x |")
    lines.append(
        f"| **step** | **{ms(step_min)} ms** | {ms(step_med)} ms | {ms(floor['step'])} ms | "
        f"**{step_min / floor['step']:.1f}x** | {step_min / floor['step']:.2f}x |"
    )
    small, swiglu = min(parts["small ops"]), min(parts["SwiGLU"])
    total = sum(min(v) for v in parts.values())
    lines.append(
        f"(small ops, timed in the instrumented step: {ms(small + swiglu)} ms, of which SwiGLU "
        f"{ms(swiglu)} ms; the instrumented step's parts sum to {ms(total)} ms)"
    )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", default="1,4,16,64", help="row counts, comma-separated")
    parser.add_argument("--context", type=int, default=300, help="positions in each job's cache")
    parser.add_argument("--repeats", type=int, default=7, help="steps timed per row count")
    parser.add_argument(
        "--budget", type=float, default=40.0, help="seconds per row count (at least 3 steps)"
    )
    parser.add_argument(
        "--attention", default="grouped,per-job", help="grouped, per-job or both (comma)"
    )
    parser.add_argument("--temperature", type=float, default=0.0, help="0: greedy (CoTs)")
    parser.add_argument("--gemm-size", type=int, default=1024)
    parser.add_argument("--model", default=None, help="an mlx-lm folder (default: default)")
    args = parser.parse_args()
    if openblas_wanted(None):
        preload_openblas()  # before MLX is imported
    row_counts = [int(r) for r in args.rows.split(",")]
    variants = [v.strip() for v in args.attention.split(",")]
    if not set(variants) <= set(VARIANTS):
        parser.error(f"--attention: one or more of {', '.join(VARIANTS)}")

    from cotaudit.engine.mlx import MLXEngine
    from cotaudit.models.default import default_model_path

    engine = MLXEngine.load(args.model or default_model_path(), max_batch_rows=max(row_counts))
    worker = engine._scheduler

    import mlx.core as mx

    print(f"load average at start: {load_average()}")
    print(f"MLX {mx.__version__}, device {mx.default_device()}; BLAS: {blas_name()}")
    print(
        f"rows_independent: {engine.rows_independent}; the engine's attention here: "
        f"{'grouped' if engine._stepper.grouped_attention else 'per-job'}"
    )
    dtype = activation_dtype(engine.model)
    machine = worker.submit(measure_machine, args.gemm_size, dtype).result()
    shapes = model_shapes(engine.model)
    print(
        f"GEMM rate: {machine.gemm_flops / 1e9:.1f} GFLOP/s (square {dtype} matmuls from "
        f"{args.gemm_size}); "
        f"read bandwidth: {machine.bandwidth / 1e9:.1f} GB/s ("
        + ", ".join(f"{k} {v / 1e9:.1f}" for k, v in machine.bandwidth_by.items())
        + ")"
    )
    groups = (shapes.proj, shapes.mlp, shapes.head)
    print(
        f"model: {shapes.layers} layers, {shapes.heads} heads ({shapes.kv_heads} kv) x "
        f"{shapes.head_dim}, {sum(g.count for g in groups) / 1e6:.1f}M matmul weights "
        f"({sum(g.nbytes for g in groups) / MB:.0f} MB read per step), "
        f"temperature {args.temperature}"
    )
    same, grouped_same = worker.submit(
        check_instrumented, engine, args.context, args.temperature
    ).result()
    print(f"instrumented step's logits equal the engine step's: {'yes' if same else 'NO'}")
    print(
        "grouped attention's logits equal per-job attention's: " + ("yes" if grouped_same else "no")
    )
    summary = [
        "| rows | attention | step min | step median | attention min | FLOP floor "
        "| memory floor | floor | step / floor | rows/s |",
        "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for rows in row_counts:
        results = worker.submit(
            profile,
            engine,
            rows,
            args.context,
            args.temperature,
            args.repeats,
            args.budget,
            variants,
        ).result()
        keys = args.context + 2 + len(variants) * args.repeats  # about the middle of the steps
        floor = floors(shapes, machine, rows, keys)
        for label, (steps, parts) in results.items():
            print(report(label, rows, keys, steps, parts, floor), flush=True)
            summary.append(
                f"| {rows} | {label} | {ms(min(steps))} ms | {ms(statistics.median(steps))} ms "
                f"| {ms(min(parts['attention']))} ms | {ms(floor['flop'])} ms "
                f"| {ms(floor['memory'])} ms | {ms(floor['step'])} ms "
                f"| {min(steps) / floor['step']:.1f}x | {rows / min(steps):.0f} |"
            )
    print(f"\nBLAS: {blas_name()}; context {args.context}; times: min over steps")
    print("\n".join(summary))
    print(f"load average at end: {load_average()}")


if __name__ == "__main__":
    main()
