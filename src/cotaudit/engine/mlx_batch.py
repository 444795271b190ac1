"""Decode jobs of the MLX engine and the batched step that runs them together.

The MLX counterpart of :mod:`cotaudit.engine.hf_batch`. Every job keeps its own mlx-lm prompt
cache (one ``KVCache`` per layer). A batched step feeds one token per row of every active job
in one forward pass: each layer's cache is a :class:`JobsLayerCache` that hands every job's rows
of the new keys and values to that job's own cache, gives rotary embeddings per-row offsets,
and, through :func:`patch_attention`, computes each job's attention over that job's cache
alone (no mask, no padding, no other job's keys in any reduction): on a GPU with mlx-lm's own
``scaled_dot_product_attention`` (MLX's fused kernel; the call the job makes unbatched), on
the CPU with :func:`grouped_jobs_attention`, the same operations as MLX's CPU fallback for
that call with the per-row ones done once for all rows. mlx-lm's ``BatchKVCache`` (left
padding, a mask over the padded keys) is not used: padded keys enter every row's softmax
reduction.

Row independence of the merged matrix products: MLX's CPU matmul gives a row the same bits for
any row count (checked by :func:`rows_independent` at start). On Apple silicon the Metal
kernels change with the row count (matrix-vector at one row, tiled GEMM beyond, and quantized
``qmv``/``qmm`` for 4-bit models), so batched and unbatched runs can differ in the last float
bits there; ``max_batch_rows=1`` gives the unbatched computation.

The same patched attention function scores answer trees
(:meth:`cotaudit.engine.mlx.MLXEngine.score_answers_sync`):
with a :class:`TreeLayerCache` every batch row is one suffix token at its own rotary position,
attending to the shared prefix up to its prefix's cut and to its suffix's tree mask
(:func:`tree_attention`).

Models batch when every layer's cache is a plain ``KVCache`` and the model's module calls
``scaled_dot_product_attention`` by name (Llama, Qwen2, Mistral, ... in mlx-lm); others decode
each job alone.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast

import mlx.core as mx

from cotaudit.engine.base import GenerationJob, PrefixRequest, cut_and_feed, seed_for
from cotaudit.engine.batcher import DecodeJob, job_spans


def rows_independent(trials: int = 6) -> bool:
    """Whether ``x @ w.T`` gives every row the same bits for any row count (random rows)."""
    key = mx.random.key(0)
    k1, k2 = mx.random.split(key)
    w = mx.random.normal((256, 192), key=k1)
    x = mx.random.normal((72, 192), key=k2)
    ref = x @ w.T
    for rows in (1, 2, 3, 5, 12, 64)[:trials]:
        for offset in (0, 3):
            if not mx.array_equal(
                (x[offset : offset + rows] @ w.T), ref[offset : offset + rows]
            ).item():
                return False
    return True


class RowDecoder:
    """Token-by-token decoding of ``rows`` rows: greedy at temperature 0, otherwise
    softmax(logits / T) sampled with an MLX PRNG key seeded with ``seed`` (split once per
    step). A row stops at an EOS token (not kept); done when every row stopped or
    ``max_tokens`` tokens were picked."""

    def __init__(
        self, rows: int, max_tokens: int, temperature: float, seed: int, eos_ids: Sequence[int]
    ) -> None:
        self.max_tokens = max_tokens
        self.temperature = temperature
        self.key = mx.random.key(seed)
        self.eos = set(eos_ids)
        self.tokens: list[list[int]] = [[] for _ in range(rows)]
        self.finished = [False] * rows
        self.picked = 0
        self.next: Any = None

    @property
    def done(self) -> bool:
        return self.picked >= self.max_tokens or all(self.finished)

    @property
    def stopped(self) -> list[bool]:
        """Whether each row stopped at an EOS token."""
        return list(self.finished)

    def advance(self, logits: Any) -> bool:
        if self.temperature == 0:
            nxt = mx.argmax(logits, axis=-1)
        else:
            self.key, sub = mx.random.split(self.key)
            nxt = mx.random.categorical(logits.astype(mx.float32) / self.temperature, key=sub)
        picked = cast(list[int], nxt.tolist())  # one token id per row
        for i, tok in enumerate(picked):
            if self.finished[i]:
                continue
            if tok in self.eos:
                self.finished[i] = True
            else:
                self.tokens[i].append(tok)
        self.picked += 1
        self.next = nxt
        return self.done


@dataclass
class JobsKV:
    """Keys (or values) of one layer for every job of a step (each from the job's own cache)."""

    parts: list[Any]


class JobsLayerCache:
    """One layer's cache during a batched step: routes each job's rows to its own cache.

    ``grouped``: attention by :func:`grouped_jobs_attention` (else mlx-lm's function per job)."""

    def __init__(
        self,
        jobs: Sequence[Any],
        spans: list[tuple[int, int]],
        layer: int,
        offsets: Any,
        grouped: bool = False,
    ) -> None:
        self.jobs, self.spans, self.layer = jobs, spans, layer
        self.offset = offsets
        self.grouped = grouped

    def update_and_fetch(self, keys: Any, values: Any) -> tuple[JobsKV, JobsKV]:
        ks, vs = [], []
        for job, (a, b) in zip(self.jobs, self.spans, strict=True):
            k, v = job.cache[self.layer].update_and_fetch(keys[a:b], values[a:b])
            ks.append(k)
            vs.append(v)
        return JobsKV(ks), JobsKV(vs)


def grouped_jobs_attention(
    queries: Any, keys: JobsKV, values: JobsKV, cache: JobsLayerCache, scale: float
) -> Any:
    """Each job's attention over its own cache, for queries ``[R, H, 1, d]`` of all jobs (job
    j: rows ``cache.spans[j]``; its keys and values ``[B_j, Hkv, S_j, d]``):

        q      = queries * scale, as [R, Hkv, H / Hkv, d]   (query head h reads kv head
                                                              h // (H / Hkv); all rows at once)
        out_j  = softmax(q[a:b] @ K_j^T, last axis) @ V_j   (per job: one product per kv head)

    in the model's dtype, then ``[R, H, 1, d]``. These are the operations of MLX's CPU fallback
    for ``mx.fast.scaled_dot_product_attention`` (scale, a product per kv head, precise
    softmax, a product), with the scaling and the grouping of heads done once for all rows
    instead of once per job, so a job costs fewer operations. The H / Hkv query heads of a kv
    head are one product of H / Hkv rows, which gives the fallback's bits where MLX's matrix
    products are row-independent (:func:`rows_independent`)."""
    rows, heads, _, dim = queries.shape
    kv_heads = keys.parts[0].shape[1]
    q = (queries * mx.array(scale, dtype=queries.dtype)).reshape(
        rows, kv_heads, heads // kv_heads, dim
    )
    parts = [
        mx.softmax(q[a:b] @ k.swapaxes(-1, -2), axis=-1, precise=True) @ v
        for (a, b), k, v in zip(cache.spans, keys.parts, values.parts, strict=True)
    ]
    return mx.concatenate(parts, axis=0).reshape(rows, heads, 1, dim)


def patch_attention(model: Any) -> bool:
    """Route the model module's ``scaled_dot_product_attention`` through a dispatcher: per job
    for :class:`JobsLayerCache` (:func:`grouped_jobs_attention` when the cache says
    ``grouped`` and no attention sinks are given, else mlx-lm's function for each job's rows),
    :func:`tree_attention` for :class:`TreeLayerCache` (any other cache goes to mlx-lm's
    function unchanged).
    Returns False when the module has no such function (the model then decodes jobs alone)."""
    module = sys.modules.get(type(model).__module__)
    original = getattr(module, "scaled_dot_product_attention", None)
    if original is None:
        return False
    if getattr(original, "_cotaudit_jobs", False):
        return True

    def dispatch(
        queries: Any, keys: Any, values: Any, cache: Any, scale: float, mask: Any, **kwargs: Any
    ) -> Any:
        if isinstance(cache, TreeLayerCache):
            if kwargs.get("sinks") is not None:
                raise ValueError("answer-tree attention does not support attention sinks")
            return tree_attention(queries, keys, values, cache, scale)
        if not isinstance(cache, JobsLayerCache):
            return original(queries, keys, values, cache=cache, scale=scale, mask=mask, **kwargs)
        if cache.grouped and kwargs.get("sinks") is None:
            return grouped_jobs_attention(queries, keys, values, cache, scale)
        parts = [
            original(
                queries[a:b], k, v, cache=job.cache[cache.layer], scale=scale, mask=None, **kwargs
            )
            for job, (a, b), k, v in zip(
                cache.jobs, cache.spans, keys.parts, values.parts, strict=True
            )
        ]
        return mx.concatenate(parts, axis=0)

    dispatch._cotaudit_jobs = True  # type: ignore[attr-defined]
    module.scaled_dot_product_attention = dispatch  # type: ignore[union-attr]
    return True


class TreeLayerCache:
    """One layer's cache while scoring answer trees: ``R = B * S`` rows of one token each,
    block b (rows ``b*S .. b*S + S - 1``) holding one prefix's suffix (tag, then tree nodes).

    ``offset`` (read by the model's rotary embedding) is each row's own position; the prefix
    keys and values are the first ``width`` positions of ``source`` (one row, not copied), of
    which block b sees the first ``lengths[b]``; suffix row s of a block sees suffix rows s'
    of the same block where ``suffix_mask[s, s']``. The attention itself is
    :func:`tree_attention` (through :func:`patch_attention`)."""

    def __init__(
        self, source: Any, width: int, lengths: Any, offsets: Any, suffix_mask: Any
    ) -> None:
        self.prefix_keys = source.keys[:, :, :width, :]
        self.prefix_values = source.values[:, :, :width, :]
        self.lengths = lengths
        self.offset = offsets
        self.suffix_mask = suffix_mask

    def update_and_fetch(self, keys: Any, values: Any) -> tuple[Any, Any]:
        """The rows' own keys and values ``[R, Hkv, 1, d]`` (nothing is kept)."""
        return keys, values

    def make_mask(self, *args: Any, **kwargs: Any) -> None:
        """No mask array: :func:`tree_attention` masks by ``lengths`` and ``suffix_mask``."""
        return None


def tree_attention(
    queries: Any, keys: Any, values: Any, cache: TreeLayerCache, scale: float
) -> Any:
    """Attention of ``queries`` ``[R, H, 1, d]`` (R = B * S rows, see :class:`TreeLayerCache`)
    over the shared prefix and each block's own suffix, in float32:

        scores_r = [q_r . K_prefix[j] * scale  for j < lengths[b]]
                   ++ [q_r . K_suffix[b, s'] * scale  for suffix_mask[s, s']]
        out_r    = softmax(scores_r) . [V_prefix ; V_suffix[b]]

    for row r = b*S + s; query head h reads kv head ``h // (H / Hkv)``. The prefix term is one
    matrix product per kv head over all rows (the prefix is never broadcast to R rows)."""
    rows, heads, _, dim = queries.shape
    kv_heads, width = cache.prefix_keys.shape[1], cache.prefix_keys.shape[2]
    size = cache.suffix_mask.shape[0]
    blocks, group = rows // size, heads // kv_heads
    f32 = mx.float32
    q = queries.astype(f32).reshape(blocks, size, kv_heads, group, dim)
    # prefix: [Hkv, B*S*g, d] @ [Hkv, d, W]
    q_rows = q.transpose(2, 0, 1, 3, 4).reshape(kv_heads, blocks * size * group, dim)
    k_prefix = cache.prefix_keys[0].astype(f32)
    prefix_scores = (q_rows @ k_prefix.swapaxes(-1, -2)) * scale
    prefix_scores = prefix_scores.reshape(kv_heads, blocks, size * group, width).transpose(
        1, 0, 2, 3
    )
    visible = mx.arange(width)[None, :] < cache.lengths[:, None]
    prefix_scores = mx.where(visible[:, None, None, :], prefix_scores, -mx.inf)
    # suffix: per block, [B, Hkv, S*g, d] @ [B, Hkv, d, S]
    q_own = q.transpose(0, 2, 1, 3, 4).reshape(blocks, kv_heads, size * group, dim)
    k_own = keys.astype(f32).reshape(blocks, size, kv_heads, dim).transpose(0, 2, 1, 3)
    v_own = values.astype(f32).reshape(blocks, size, kv_heads, dim).transpose(0, 2, 1, 3)
    own_scores = (q_own @ k_own.swapaxes(-1, -2)) * scale
    own = mx.repeat(cache.suffix_mask, group, axis=0)  # query row s*g + i is suffix row s
    own_scores = mx.where(own, own_scores, -mx.inf)
    probs = mx.softmax(mx.concatenate([prefix_scores, own_scores], axis=-1), axis=-1)
    p_prefix = probs[..., :width].transpose(1, 0, 2, 3).reshape(kv_heads, -1, width)
    out_prefix = (p_prefix @ cache.prefix_values[0].astype(f32)).reshape(
        kv_heads, blocks, size * group, dim
    )
    out = out_prefix.transpose(1, 0, 2, 3) + probs[..., width:] @ v_own
    out = out.reshape(blocks, kv_heads, size, group, dim).transpose(0, 2, 1, 3, 4)
    return out.reshape(rows, heads, 1, dim).astype(queries.dtype)


class MLXStepper:
    """One decode step of the MLX engine for a list of jobs."""

    def __init__(self, engine: Any, max_rows: int, batchable: bool) -> None:
        # Any: the :class:`cotaudit.engine.mlx.MLXEngine`, whose module imports this one
        self.engine = engine
        self.batchable = batchable
        self.max_rows = max_rows if batchable else 1
        self.grouped_attention = mx.default_device() == mx.cpu
        """Attention by :func:`grouped_jobs_attention` (on the CPU, where MLX computes
        mlx-lm's call with the same unfused operations); on a GPU, mlx-lm's function per job
        (MLX's fused kernel)."""

    def step(self, jobs: Sequence[Any]) -> list[Any]:
        model = self.engine.model
        if not self.batchable:
            return [model(j.decoder.next[:, None], cache=j.cache)[:, -1, :] for j in jobs]
        spans, _ = job_spans(jobs)
        offsets = mx.array([job.cache[0].offset for job in jobs for _ in range(job.rows)])
        grouped = self.grouped_attention
        caches = [
            JobsLayerCache(jobs, spans, i, offsets, grouped) for i in range(len(jobs[0].cache))
        ]
        tokens = mx.concatenate([j.decoder.next for j in jobs])
        logits = model(tokens[:, None], cache=caches)[:, -1, :]
        mx.eval(logits)
        return [logits[a:b] for a, b in spans]


class GenerateJob(GenerationJob):
    """``n`` completions of a chat prompt: prefill once, broadcast to n rows, decode."""

    def start(self) -> bool:
        engine, (messages, max_tokens, temperature, seed) = self.engine, self.args
        prompt = engine.render(messages)
        n = self.rows
        cache = engine.new_cache()
        if n > 1 and engine.forkable:
            last = engine.prefill(prompt, cache)
            cache = engine.fork_cache(cache, len(prompt), n)
            logits = mx.broadcast_to(last, (n, last.shape[-1]))
        else:
            logits = engine.prefill(prompt, cache, rows=n)
        self.cache = cache
        self.decoder = RowDecoder(n, max_tokens, temperature, seed_for(seed), engine.eos_ids)
        return self.decoder.done or self.decoder.advance(logits)


class Sweep:
    """What the prefix jobs of one request share: prompt and tag ids, and (forkable models)
    the prompt + CoT cache, prefilled by the first job that starts."""

    def __init__(self, engine: Any, request: PrefixRequest) -> None:
        self.engine, self.request = engine, request
        self.prompt, self.tag = engine._prompt_and_tag(request)
        self.sequence = self.prompt + list(request.cot_token_ids)
        self._base: list[Any] | None = None

    def base(self) -> list[Any]:
        if self._base is None:
            self._base = self.engine.new_cache()
            self.engine.prefill(self.sequence, self._base)
        return self._base


class PrefixJob(DecodeJob):
    """The k forced answers after one prefix ``prompt ++ cot[:t] ++ tag`` (continuations of the
    CoT when the tag is empty)."""

    def __init__(self, stepper: MLXStepper, sweep: Sweep, t: int) -> None:
        super().__init__(stepper)
        self.sweep, self.t = sweep, t
        self.rows = sweep.request.k

    def start(self) -> bool:
        engine, sweep, request, t = self.engine, self.sweep, self.sweep.request, self.t
        n, fed = cut_and_feed(sweep.sequence, len(sweep.prompt), t, sweep.tag)
        if engine.forkable:
            self.cache = engine.fork_cache(sweep.base(), n, self.rows)
            logits = engine.prefill(fed, self.cache, rows=self.rows)
        else:
            self.cache = engine.new_cache()
            logits = engine.prefill(sweep.sequence[:n] + fed, self.cache, rows=self.rows)
        self.decoder = RowDecoder(
            self.rows,
            request.max_tokens,
            request.temperature,
            seed_for(request.seed, t),
            engine.eos_ids,
        )
        return self.decoder.advance(logits)

    def result(self) -> list[str]:
        return [self.engine.detokenize(r) for r in self.decoder.tokens]
