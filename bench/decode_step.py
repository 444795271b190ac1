"""One decode step of the transformers engine, taken apart and set against this machine's floor.

    python bench/decode_step.py                    # default model, 1, 4, 16 and 64 rows
    python bench/decode_step.py --rows 16 --context 400 --steps 20

The step (:meth:`cotaudit.engine.hf_batch.HFStepper.step`) runs over ``R`` one-row CoT jobs
(:class:`~cotaudit.engine.hf_batch.GenerateJob`, different prompts, each with about
``--context`` tokens cached), as in a selfcommit run whose samples decode their CoTs together.
``step`` is the whole call plus each job's sampling (:meth:`RowDecoder.advance`), min over
``--steps`` steps; ``SDPA per job`` the same step with the decode attention kernel off
(:mod:`cotaudit.engine.hf_kernel`: each job's attention through torch's SDPA);
``transformers forward`` the same step through the model's own modules
(:func:`~cotaudit.engine.hf_batch.jobs_attention`, same jobs and caches), the baseline of the
written-out step (:mod:`cotaudit.engine.hf_step`). Its parts are timed alone, on the same
weights, rows and caches:

- ``proj+MLP``: the four matrix products of every layer (q/k/v, o, gate/up, down) at the
  step's padded row count (the step's ``row_multiple``: 1 over oneDNN's packed weights, 16
  over MKL, :mod:`cotaudit.engine.hf_step`);
- ``LM head``: the logits product;
- ``attention``: every job's attention over its own cache, every layer: one kernel call per
  layer (which also writes the new keys and values), or the per-job loop without it;
- ``cache``: every job's write of its new keys and values, every layer (without the kernel);
- ``norm+rope``: the RMS norms, the rotary embedding and the residual/activation arithmetic;
- ``sampling``: every job's pick of its next token;
- ``overhead`` = step - the sum of the parts (Python, dispatch, views, framework).

The floor, from this machine's own rates measured in the same run (``gemm``: GFLOP/s of a
1024^3 matrix product in the weights' dtype, the faster of torch's ``a @ b`` (MKL) and
oneDNN's inner product over a packed weight, the step's own product where it packs;
``bandwidth``: GB/s of a sum over a 512 MB array):

    FLOPs      = 2 * (matrix parameters) * rows + 4 * layers * H * d * sum_j L_j
    bytes      = weight bytes + 2 * layers * Hkv * d * (bytes per value) * sum_j L_j
    floor      = max(FLOPs / gemm, bytes / bandwidth)

(H query heads, Hkv key/value heads of size d, L_j the tokens job j has cached.)

and each part's own floor the same way over its own FLOPs and bytes. The table prints each time
and its ratio to the floor (``x``). No test asserts a time.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from typing import Any

import torch
from _common import bench_parser

from cotaudit.engine.hf import HFEngine
from cotaudit.engine.hf_batch import ROW_MULTIPLE, GenerateJob, RowDecoder, padded_rows
from cotaudit.engine.hf_step import DecoderStep, pack, packed_product, packs
from cotaudit.models.default import default_model_path
from cotaudit.studies.selfcommit.prompts import selfcommit_messages

F = torch.nn.functional


DEVICE = torch.device("cpu")


def sync() -> None:
    """Wait for the device's queued work (a no-op on the CPU)."""
    if DEVICE.type == "cuda":
        torch.cuda.synchronize()


def best(fn: Callable[[], Any], repeats: int) -> float:
    """Minimum wall seconds of ``fn()`` over ``repeats`` calls (after one warm-up call)."""
    fn()
    sync()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        sync()
        times.append(time.perf_counter() - start)
    return min(times)


def machine_rates(dtype: torch.dtype) -> tuple[float, float]:
    """(GEMM GFLOP/s in ``dtype``, memory read GB/s) of this machine, as torch sees it."""
    n = 1024 if DEVICE.type == "cpu" else 8192
    a = torch.randn(n, n, device=DEVICE, dtype=dtype)
    b = torch.randn(n, n, device=DEVICE, dtype=dtype)
    seconds = best(lambda: a @ b, 10)
    if packs(b):
        packed = pack(b.t().contiguous())  # a @ b = a (b^T)^T
        seconds = min(seconds, best(lambda: packed_product(a, packed), 10))
    gemm = 2 * n**3 / seconds / 1e9
    big = torch.randn(128 * 1024 * 1024, device=DEVICE)  # 512 MB, written: every page real
    bandwidth = big.numel() * 4 / best(big.sum, 5) / 1e9
    return gemm, bandwidth


def make_jobs(engine: HFEngine, rows: int, context: int) -> list[GenerateJob]:
    """``rows`` one-row greedy CoT jobs, started and decoded alone to ``context`` cached tokens."""
    jobs = []
    for i in range(rows):
        question = f"A shop sells {i + 3} pens a day for {i + 2} dollars each. " * 4
        job = GenerateJob(
            engine._stepper, selfcommit_messages(question, "honest", 0), 10**6, 0.0, i, 1
        )
        job.start()
        jobs.append(job)
    grow = max(0, context - jobs[0].cache.get_seq_length())
    for _ in range(grow):  # all together (row-independent), to reach the context quickly
        for job, logits in zip(jobs, engine._stepper.step(jobs), strict=True):
            job.decoder.picked = 0  # never done: the length is what is wanted here
            job.advance(logits)
    return jobs


def parts(
    step: DecoderStep, jobs: list[GenerateJob], multiple: int, repeats: int
) -> dict[str, float]:
    """Seconds of each part of one step over ``jobs`` (see the module docstring)."""
    product = step.product
    spans, start = [], 0
    for job in jobs:
        spans.append((start, start + job.rows))
        start += job.rows
    rows = padded_rows(start, multiple)
    hidden, d = step.embed.shape[1], step.head_dim
    dtype = step.embed.dtype
    x = torch.randn(rows, hidden, device=DEVICE, dtype=dtype)
    inter = step.layers[0].down.shape[1]
    act = torch.randn(rows, inter, device=DEVICE, dtype=dtype)
    attn_in = torch.randn(rows, step.heads * d, device=DEVICE, dtype=dtype)
    q = torch.randn(rows, step.heads, 1, d, device=DEVICE, dtype=dtype)
    kv = torch.randn(rows, step.kv_heads, 1, d, device=DEVICE, dtype=dtype)
    positions = torch.arange(rows, device=DEVICE)
    cos, sin = step.rotary(x, positions[:, None])

    def matmuls() -> None:
        for layer in step.layers:
            product(x, layer.qkv)
            product(attn_in, layer.o)
            product(x, layer.gate_up)
            product(act, layer.down)

    kernel_rows = spans[-1][1]
    q3, kv3 = q[:kernel_rows, :, 0].contiguous(), kv[:kernel_rows, :, 0].contiguous()

    def attention() -> None:
        for index, layer in enumerate(step.layers):
            if step.kernel is not None:  # one call for every job; it writes the new k, v too
                step.kernel(
                    q3,
                    kv3,
                    kv3,
                    [job.cache.keys[index] for job in jobs],
                    [job.cache.values[index] for job in jobs],
                    [job.cache.lengths[index] for job in jobs],  # the next free position
                    layer.scaling,
                )
                continue
            for job, (a, b) in zip(jobs, spans, strict=True):
                kv = job.cache.filled(index)
                job.attend(layer.module, q[a:b], kv.keys, kv.values, scaling=layer.scaling)

    def cache() -> None:
        if step.kernel is not None:
            return  # inside the kernel's call (attention)
        for index in range(len(step.layers)):
            for job, (a, b) in zip(jobs, spans, strict=True):
                n = job.cache.lengths[index]  # rewrites the next free position: no growth
                job.cache.keys[index][:, :, n : n + 1] = kv[a:b]
                job.cache.values[index][:, :, n : n + 1] = kv[a:b]

    half, nqk = d // 2, (step.heads + step.kv_heads) * d
    qkv_out = product(x, step.layers[0].qkv)
    gate_up_out = product(x, step.layers[0].gate_up)

    def elementwise() -> None:
        h = x
        for layer in step.layers:
            step.norm(h, layer.norm1)
            qk = qkv_out[:, :nqk].view(rows, step.heads + step.kv_heads, d)
            rotated = torch.cat([-qk[..., half:], qk[..., :half]], dim=-1)
            qk * cos + rotated * sin
            h = h + x
            step.norm(h, layer.norm2)
            gate, up = gate_up_out.chunk(2, -1)
            F.silu(gate) * up
            h = h + x
        step.norm(h, step.final_norm)

    logits = torch.randn(rows, step.lm_head.shape[0], device=DEVICE)

    def sampling() -> None:
        for a, b in spans:
            decoder = RowDecoder(b - a, 10**6, 0.0, [None], [0], logits.device)
            decoder.advance(logits[a:b])

    return {
        "proj+MLP": best(matmuls, repeats),
        "LM head": best(lambda: product(x, step.lm_head), repeats),
        "attention": best(attention, repeats),
        "cache": best(cache, repeats),
        "norm+rope": best(elementwise, repeats),
        "sampling": best(sampling, repeats),
    }


def floors(
    step: DecoderStep, jobs: list[GenerateJob], multiple: int, gemm: float, bandwidth: float
) -> dict[str, float]:
    """Seconds each part (and the step) cannot go below on this machine (at the step's padded
    row count)."""
    rows = padded_rows(sum(j.rows for j in jobs), multiple)
    size = step.lm_head.element_size()
    layer_params = sum(
        w.numel() for layer in step.layers for w in (layer.qkv, layer.o, layer.gate_up, layer.down)
    )
    head_params = step.lm_head.numel()
    cached = sum(job.cache.lengths[0] * job.rows for job in jobs)
    d, layers = step.head_dim, len(step.layers)
    attn_flops = 4 * step.heads * d * cached * layers
    kv_bytes = 2 * layers * step.kv_heads * d * size * cached

    def floor(flops: float, nbytes: float) -> float:
        return max(flops / (gemm * 1e9), nbytes / (bandwidth * 1e9))

    out = {
        "proj+MLP": floor(2 * layer_params * rows, layer_params * size),
        "LM head": floor(2 * head_params * rows, head_params * size),
        "attention": floor(attn_flops, kv_bytes),
    }
    out["step"] = floor(
        2 * (layer_params + head_params) * rows + attn_flops,
        (layer_params + head_params) * size + kv_bytes,
    )
    return out


def step_time(engine: HFEngine, jobs: list[GenerateJob], steps: int) -> tuple[float, float]:
    """(min, median) seconds of one step plus every job's sampling, over ``steps`` steps."""
    times: list[float] = []
    for _ in range(steps + 1):
        start = time.perf_counter()
        for job, logits in zip(jobs, engine._stepper.step(jobs), strict=True):
            job.decoder.picked = 0
            job.advance(logits)
        sync()
        times.append(time.perf_counter() - start)
    times = times[1:]
    return min(times), statistics.median(times)


def sdpa_step_time(engine: HFEngine, jobs: list[GenerateJob], steps: int) -> float:
    """Min seconds of the written-out step with each job's attention through torch's SDPA
    (the decode attention kernel off; same jobs and caches)."""
    step = engine._stepper.decoder_step
    assert step is not None
    kernel, step.kernel = step.kernel, None
    try:
        return step_time(engine, jobs, steps)[0]
    finally:
        step.kernel = kernel


def transformers_step_time(engine: HFEngine, jobs: list[GenerateJob], steps: int) -> float:
    """Min seconds of the same step through transformers' own forward pass (the model's
    modules, :func:`cotaudit.engine.hf_batch.jobs_attention`, rows padded to a multiple of
    :data:`cotaudit.engine.hf_batch.ROW_MULTIPLE`; same jobs and caches)."""
    stepper = engine._stepper
    written, multiple = stepper.decoder_step, stepper.row_multiple
    stepper.decoder_step, stepper.row_multiple = None, ROW_MULTIPLE
    try:
        return step_time(engine, jobs, steps)[0]
    finally:
        stepper.decoder_step, stepper.row_multiple = written, multiple


def main() -> None:
    parser = bench_parser(__doc__)
    parser.add_argument("--rows", default="1,4,16,64", help="comma-separated row counts")
    parser.add_argument("--context", type=int, default=300, help="cached tokens per job")
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=5, help="repeats of each part")
    parser.add_argument("--dtype", default="float32", help="float32 or bfloat16 weights")
    parser.add_argument("--device", default="cpu", help="cpu or cuda")
    args = parser.parse_args()
    global DEVICE
    DEVICE = torch.device(args.device)

    gemm, bandwidth = machine_rates(getattr(torch, args.dtype))
    print(
        f"machine: {args.dtype} GEMM {gemm:.0f} GFLOP/s, read bandwidth {bandwidth:.1f} GB/s, "
        f"torch {torch.__version__}, {torch.get_num_threads()} threads, {args.dtype} weights"
    )
    engine = HFEngine.load(default_model_path(), dtype=args.dtype, device=args.device)
    step = engine._stepper.decoder_step
    if step is None:
        raise SystemExit("the default model has no written-out decode step")
    names = ["proj+MLP", "LM head", "attention", "cache", "norm+rope", "sampling", "overhead"]
    print(
        "\n| rows | step (min) | step (median) | floor | step/floor | SDPA per job"
        " | transformers forward | "
        + " | ".join(names)
        + " |\n|---:|---:|---:|---:|---:|---:|---:|"
        + "---:|" * len(names)
    )
    with torch.inference_mode():
        for rows in [int(r) for r in args.rows.split(",")]:
            jobs = make_jobs(engine, rows, args.context)
            low, mid = step_time(engine, jobs, args.steps)
            sdpa = sdpa_step_time(engine, jobs, args.steps)
            theirs = transformers_step_time(engine, jobs, args.steps)
            multiple = engine._stepper.row_multiple
            part = parts(step, jobs, multiple, args.repeats)
            part["overhead"] = max(0.0, low - sum(part.values()))
            floor = floors(step, jobs, multiple, gemm, bandwidth)

            def cell(name: str, part: dict[str, float] = part, floor: dict[str, float] = floor):
                ms = f"{1e3 * part[name]:.1f}"
                return f"{ms} ({part[name] / floor[name]:.1f}x)" if name in floor else ms

            print(
                f"| {rows} | {1e3 * low:.1f} ms | {1e3 * mid:.1f} ms | {1e3 * floor['step']:.1f} ms"
                f" | **{low / floor['step']:.1f}x**"
                f" | {1e3 * sdpa:.1f} ms ({sdpa / low:.2f}x)"
                f" | {1e3 * theirs:.1f} ms ({theirs / low:.2f}x) | "
                + " | ".join(cell(n) for n in names)
                + " |",
                flush=True,
            )
    print(
        "\nparts in ms, (Nx) = the part's time over its own floor; overhead = step - parts;"
        "\nSDPA per job: the step with the attention kernel off; transformers forward: the same"
        "\nstep through the model's modules; (Nx) = their time / the step's."
    )


if __name__ == "__main__":
    main()
