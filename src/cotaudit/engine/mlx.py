"""In-process MLX backend of the probe engine (``mlx-lm``), with prompt-cache reuse.

Prefix sweep: the prompt and the whole CoT are prefilled once into an mlx-lm prompt cache
(one ``KVCache`` per layer); for each cut position t the cache is copied up to
``len(prompt) + t`` (trimmed: a slice of each layer's keys and values, broadcast to k rows),
the forced-answer tag is fed, and the k answers are decoded together. The source cache is never
modified: the first write into a copy concatenates into fresh arrays. Models whose caches are
not plain ``KVCache`` (sliding-window or state-space layers) fall back to re-prefilling
``prompt ++ cot[:t] ++ tag`` per prefix, which is correct for any architecture.

Exact answer scores (``score_answers``): prompt + CoT are prefilled once (one row); then, for
all prefixes together (chunks of at most ``PREFILL_CHUNK`` suffix tokens), one forward pass
feeds every prefix's suffix, the tag and the answer-tree nodes whose logits are read, as one
token per batch row. Each row's rotary position is its own: mlx-lm rotates by the cache's
``offset``, which may be one position per batch row but not one per token of a row, so tokens
go in rows, and tree nodes of equal depth share a position (len(prompt) + t + len(tag) - 1 +
depth). A :class:`cotaudit.engine.mlx_batch.TreeLayerCache` per layer hands the rows' keys to
:func:`cotaudit.engine.mlx_batch.tree_attention` (through the patched attention function):
each row attends to the shared prefix cache up to its cut (a view of the one-row cache, no
re-prefill and no copy per row) and, within its prefix's suffix, to the tag before it and its
own ancestors (a tree mask). This is the same computation as the HF engine's one row per
prefix with a tree mask; feeding the tree depth level by depth level would instead take one
forward pass per depth. Log-probabilities are log_softmax(logits / T). Models that do not
batch (see :mod:`cotaudit.engine.mlx_batch`) re-prefill prompt + cot[:t] + tag + path per
read node (:meth:`MLXEngine.naive_score_answers_sync`).

Decoding mirrors :mod:`cotaudit.engine.hf`: greedy at temperature 0, otherwise plain
temperature sampling (``softmax(logits / T)``, no top-k or top-p) from an MLX PRNG key seeded
per prefix with ``seed_for(seed, t)``. ``loglikelihood`` reads log-softmax of the logits of a
forward pass over the context and the continuation.

All MLX work runs on one long-lived daemon worker thread per process
(:class:`cotaudit.engine.batcher.Scheduler`), so the event loop is never blocked and MLX state
stays on one thread. CoT generations and the prefixes of prefix sweeps (one job of k rows per
prefix) of concurrently running samples are decode jobs that join and leave one running batch
(at most ``max_batch_rows`` rows; :mod:`cotaudit.engine.mlx_batch`); scoring runs exclusively
between decode steps. A daemon thread, not a ``ThreadPoolExecutor``: MLX aborts the process at exit
("terminate called without an active exception", about one run in three here) when a thread
that ran MLX work exits before the interpreter does, or when the interpreter exits while MLX
still finishes work in the background; so the thread never exits, and an ``atexit`` hook runs
``mx.synchronize()`` on it first (0 aborts in 40 runs after, 6 in 15 before).

Speed on Linux CPU: the optional OpenBLAS preload (``COTAUDIT_MLX_OPENBLAS=1`` or
``-M openblas=true``) is :mod:`cotaudit.engine.openblas`; ``python -m cotaudit.engine.mlx``
prints its state.
"""

from __future__ import annotations

import atexit
import functools
import logging
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cotaudit.engine.base import AnswerScoreRequest, AnswerScores, PrefixRequest
from cotaudit.engine.batcher import (
    DEFAULT_MAX_BATCH_ROWS,
    Scheduler,
    on_worker,
    warn_rows_dependent,
)
from cotaudit.engine.in_process import InProcessEngine
from cotaudit.engine.openblas import openblas_status, openblas_wanted, preload_openblas

if TYPE_CHECKING:
    from cotaudit.engine.mlx_batch import MLXStepper

logger = logging.getLogger(__name__)

PREFILL_CHUNK = 512
"""Tokens per forward pass while prefilling (bounds the logits kept in memory)."""


# --- model loading -----------------------------------------------------------------------------


def rope_overrides(config: dict[str, Any]) -> dict[str, Any]:
    """Top-level ``rope_theta`` (and ``rope_scaling``) for a config that only has
    transformers 5's ``rope_parameters``.

    mlx-lm 0.32's Llama/Qwen2 readers take ``rope_theta`` from the top level and silently
    default to 10000 otherwise; a folder saved by transformers >= 5 (the embedded default model,
    SmolLM2-135M with theta 100000, is one) then loads with the wrong rotary base and a
    different model comes out (its greedy CoT differed from the HF backend's from the first
    token). Returns ``{}`` when nothing needs overriding.
    """
    params = config.get("rope_parameters")
    if not isinstance(params, dict) or "rope_theta" not in params or "rope_theta" in config:
        return {}
    out: dict[str, Any] = {"rope_theta": params["rope_theta"]}
    if params.get("rope_type", "default") != "default" and not config.get("rope_scaling"):
        out["rope_scaling"] = dict(params)
    return out


# --- the MLX worker thread ----------------------------------------------------------------------


_WORKER: Scheduler | None = None
_WORKER_LOCK = threading.Lock()


def mlx_worker() -> Scheduler:
    """The process's MLX worker thread (started on first use): runs submitted callables in order
    and batches decode jobs."""
    global _WORKER
    with _WORKER_LOCK:
        if _WORKER is None:
            _WORKER = Scheduler("cotaudit-mlx")
            atexit.register(_synchronize_at_exit)
        return _WORKER


def _synchronize_at_exit() -> None:
    """Let MLX finish its background work before the interpreter tears it down."""
    if _WORKER is None or "mlx.core" not in sys.modules:
        return
    import mlx.core as mx

    try:
        _WORKER.submit(mx.synchronize).result(timeout=10)
    except Exception:  # noqa: BLE001, S110 - best effort at exit
        pass


# --- the engine -------------------------------------------------------------------------------


class MLXEngine(InProcessEngine):
    """The probe engine over an mlx-lm model and its (transformers) tokenizer."""

    _stepper: MLXStepper

    def __init__(
        self,
        model: Any,
        tokenizer: Any,
        scheduler: Scheduler | None = None,
        *,
        max_batch_rows: int = DEFAULT_MAX_BATCH_ROWS,
    ):
        """``max_batch_rows``: rows decoding together across samples (1: one job at a time)."""
        import mlx.core as mx
        from mlx_lm.models.cache import KVCache, make_prompt_cache

        from cotaudit.engine import mlx_batch

        if max_batch_rows < 1:
            raise ValueError(f"max_batch_rows must be >= 1, got {max_batch_rows}")
        self._mx = mx
        self._KVCache = KVCache
        self._make_prompt_cache = make_prompt_cache
        self.model = model
        self.tokenizer = tokenizer
        # mlx-lm wraps a transformers tokenizer; render and (de)tokenise with that one.
        self.hf_tokenizer = getattr(tokenizer, "_tokenizer", tokenizer)
        eos = set(getattr(tokenizer, "eos_token_ids", None) or [])
        if getattr(self.hf_tokenizer, "eos_token_id", None) is not None:
            eos.add(self.hf_tokenizer.eos_token_id)
        self.eos_ids = sorted(int(i) for i in eos)
        self._start_worker(scheduler or mlx_worker(), "cotaudit-mlx")
        self.forkable = all(type(c) is KVCache for c in make_prompt_cache(model))
        """True when every layer's cache is a plain ``KVCache`` (copy-and-trim prefix reuse);
        otherwise prefixes are re-prefilled."""
        batchable = self.forkable and mlx_batch.patch_attention(model)
        self._stepper = mlx_batch.MLXStepper(self, max_batch_rows, batchable)
        self._generate_job = mlx_batch.GenerateJob
        self.rows_independent = mlx_batch.rows_independent()
        """Whether MLX's matrix products give a row the same bits in any batch (see
        :mod:`cotaudit.engine.mlx_batch`); if not, batching can change the last float bits."""
        if batchable and max_batch_rows > 1 and not self.rows_independent:
            warn_rows_dependent(logger, "mlx", mx.default_device())

    context_length: int | None = None
    """Not read from mlx-lm models: their context is left to the model (no CoT is cut to fit)."""

    @classmethod
    def load(
        cls,
        path: str | Path,
        *,
        openblas: bool | None = None,
        max_batch_rows: int = DEFAULT_MAX_BATCH_ROWS,
    ) -> MLXEngine:
        """``mlx_lm.load`` a local folder (HF safetensors or MLX-converted) or hub id.

        ``openblas``: preload the system OpenBLAS first (Linux CPU speed-up); None reads
        ``COTAUDIT_MLX_OPENBLAS``.
        """
        if openblas_wanted(openblas):
            preload_openblas()
        worker = mlx_worker()

        def _load() -> tuple[Any, Any]:
            from mlx_lm import load

            overrides = None
            try:
                from mlx_lm.utils import _download, load_config

                overrides = rope_overrides(load_config(_download(str(path))))
            except (ImportError, AttributeError, OSError):  # mlx-lm internals moved: no fix
                pass
            if overrides:
                logger.info("cotaudit mlx: %s: using %s from rope_parameters", path, overrides)
            model, tokenizer = load(str(path), model_config=overrides or None)[:2]
            return model, tokenizer

        model, tokenizer = worker.submit(_load).result()
        engine = worker.submit(
            functools.partial(cls, model, tokenizer, worker, max_batch_rows=max_batch_rows)
        ).result()
        status = openblas_status()
        if status.applies and not status.loaded and status.available_path is not None:
            logger.warning("cotaudit mlx: %s", status.hint)
        return engine

    # --- cache mechanics (worker thread only) -------------------------------------------

    def new_cache(self) -> list[Any]:
        return self._make_prompt_cache(self.model)

    def prefill(self, token_ids: Sequence[int], cache: list[Any], rows: int = 1) -> Any:
        """Feed ``token_ids`` (the same ids in each of ``rows`` rows) into ``cache`` in chunks;
        returns the last position's logits, shape ``(rows, vocab)``."""
        mx = self._mx
        ids = list(token_ids)
        if not ids:
            raise ValueError("prefill needs at least one token")
        logits = None
        for start in range(0, len(ids), PREFILL_CHUNK):
            chunk = ids[start : start + PREFILL_CHUNK]
            out = self.model(mx.array([chunk] * rows), cache=cache)
            logits = out[:, -1, :]
            mx.eval(logits, [c.state for c in cache])
        return logits

    def fork_cache(self, cache: list[Any], length: int, rows: int) -> list[Any]:
        """A copy of ``cache`` trimmed to its first ``length`` positions, broadcast to ``rows``
        rows. Slices, not in-place trims: the source cache stays usable for other prefixes."""
        if not self.forkable:
            raise RuntimeError("this model's cache cannot be copied and trimmed")
        mx = self._mx
        forks = []
        for c in cache:
            if length > c.offset:
                raise ValueError(f"cannot fork {length} positions from a cache of {c.offset}")
            k = c.keys[:, :, :length, :]
            v = c.values[:, :, :length, :]
            f = self._KVCache()
            f.keys = mx.broadcast_to(k, (rows,) + tuple(k.shape[1:]))
            f.values = mx.broadcast_to(v, (rows,) + tuple(v.shape[1:]))
            f.offset = length
            forks.append(f)
        return forks

    # --- synchronous implementations ------------------------------------------------------

    def continue_prefixes_sync(self, request: PrefixRequest) -> list[list[str]]:
        """One job of k rows per prefix, all in the running batch. Forkable models prefill
        prompt + CoT once and fork it at each cut; others re-prefill each prefix."""
        from cotaudit.engine.mlx_batch import PrefixJob, Sweep

        sweep = Sweep(self, request)
        return self._scheduler.run([PrefixJob(self._stepper, sweep, t) for t in request.positions])

    def _greedy_answers(self, ids: list[int], max_tokens: int, k: int) -> list[str]:
        """mlx-lm's own ``generate_step`` over ``ids`` from an empty cache (one row)."""
        from mlx_lm.generate import generate_step

        eos = set(self.eos_ids)
        out: list[int] = []
        for tok, _ in generate_step(self._mx.array(ids), self.model, max_tokens=max_tokens):
            if int(tok) in eos:
                break
            out.append(int(tok))
        return [self.detokenize(out)] * k

    def _prefilled_context(self, ctx_ids: list[int]) -> tuple[Any, Any]:
        """(log-softmax after the context, a fresh cache prefilled with it)."""
        mx = self._mx
        cache = self.new_cache()
        last = self.prefill(ctx_ids, cache)[0].astype(mx.float32)
        return last - mx.logsumexp(last), cache

    def _later_logprobs(self, cache: Any, ctx_ids: list[int], cont: list[int]) -> list[float]:
        """One forward pass of cont[:-1] over a copy of the context's cache (forkable
        models) or a fresh prefill of the context."""
        mx = self._mx
        if self.forkable:
            cache = self.fork_cache(cache, len(ctx_ids), 1)
        else:
            cache = self.new_cache()
            self.prefill(ctx_ids, cache)
        logits = self.model(mx.array([cont[:-1]]), cache=cache)[0].astype(mx.float32)
        logp = logits - mx.logsumexp(logits, axis=-1, keepdims=True)
        picked = mx.take_along_axis(logp, mx.array(cont[1:])[:, None], axis=-1)[:, 0]
        return [float(v) for v in picked.tolist()]

    @on_worker
    def score_answers_sync(self, request: AnswerScoreRequest) -> list[AnswerScores]:
        """One prefill of prompt + CoT (up to the last position); then one forward pass per
        chunk of prefixes, one token per row (see the module docstring).

        Suffix of prefix t: the tag, then the tree nodes whose logits are read (a parent or a
        read; a leaf with no read needs no forward pass: its log-probability is read at its
        parent). Tag token j sits at position len(prompt) + t + j and sees the prefix up to
        len(prompt) + t and the tag before it; node i sits at len(prompt) + t + len(tag) - 1 +
        depth(i) and sees the prefix, the whole tag and its ancestors. Log-probabilities are
        log_softmax(logits / T) at the tag's end and at each fed node. Models that do not batch
        (caches other than ``KVCache``, or no module-level attention function) are scored by
        :meth:`naive_score_answers_sync`."""
        from cotaudit.engine.mlx_batch import TreeLayerCache

        mx = self._mx
        if not request.positions:
            return []
        if not self._stepper.batchable:
            return self.naive_score_answers_sync(request)
        prompt_ids, tag_ids = self._prompt_and_tag(request)
        tree, n_tag = request.tree, len(tag_ids)
        read_at = request.read_nodes
        fed = [node for node in read_at if node >= 0]
        visible, offsets = tree.suffix(n_tag, fed)
        size = len(offsets)
        row_of = {-1: n_tag - 1} | {node: n_tag + j for j, node in enumerate(fed)}
        suffix_mask = mx.array(visible)
        suffix_ids = tag_ids + [tree.tokens[node] for node in fed]
        width = len(prompt_ids) + max(request.positions)
        base = self.new_cache()
        self.prefill((prompt_ids + list(request.cot_token_ids))[:width], base)
        keep = mx.array([row_of[node] for node in read_at])
        where = {node: j for j, node in enumerate(read_at)}
        parent_cols = mx.array([where[p] for p in tree.parents])
        set_ids = [mx.array(sorted(s), dtype=mx.int32) for s in request.token_sets]
        chunk = max(1, PREFILL_CHUNK // size)
        scores: list[AnswerScores] = []
        for start in range(0, len(request.positions), chunk):
            ts = list(request.positions[start : start + chunk])
            blocks = len(ts)
            lengths = [len(prompt_ids) + t for t in ts]
            positions = mx.array([length + o for length in lengths for o in offsets])
            caches = [
                TreeLayerCache(c, width, mx.array(lengths), positions, suffix_mask) for c in base
            ]
            ids = mx.array(suffix_ids * blocks)[:, None]
            logits = self.model(ids, cache=caches)[:, 0, :].reshape(blocks, size, -1)
            logits = logits[:, keep, :].astype(mx.float32) / request.temperature
            logp = logits - mx.logsumexp(logits, axis=-1, keepdims=True)
            node_lp = logp[:, parent_cols, mx.array(tree.tokens)] if len(tree) else None
            masses = [
                mx.exp(logp[:, where[node], :][:, set_ids[s]]).sum(axis=-1)
                for node, s in request.reads
            ]
            mx.eval(node_lp, masses)
            node_rows = node_lp.tolist() if node_lp is not None else [[] for _ in ts]
            mass_cols = [m.tolist() for m in masses]
            for b in range(blocks):
                scores.append(AnswerScores(node_rows[b], [col[b] for col in mass_cols]))
        return scores

    @on_worker
    def naive_score_answers_sync(self, request: AnswerScoreRequest) -> list[AnswerScores]:
        """Reference implementation (and the path of models that do not batch): for every
        prefix and every node whose logits are read, ``prompt ++ cot[:t] ++ tag ++ path(node)``
        is prefilled from an empty cache and log_softmax(last logits / T) read."""
        mx = self._mx
        prefixes = self._prefixes(request)
        tree, read_at = request.tree, request.read_nodes
        scores: list[AnswerScores] = []
        for t in request.positions:
            logp: dict[int, Any] = {}
            for node in read_at:
                last = self.prefill(prefixes[t] + tree.path(node), self.new_cache())[0]
                last = last.astype(mx.float32) / request.temperature
                logp[node] = last - mx.logsumexp(last)
            node_lp = [
                float(logp[p][tok].item()) for p, tok in zip(tree.parents, tree.tokens, strict=True)
            ]
            masses = [
                float(
                    mx.exp(logp[node][mx.array(sorted(request.token_sets[s]), dtype=mx.int32)])
                    .sum()
                    .item()
                )
                for node, s in request.reads
            ]
            scores.append(AnswerScores(node_lp, masses))
        return scores


if __name__ == "__main__":  # python -m cotaudit.engine.mlx: report the OpenBLAS state
    from cotaudit.engine.openblas import main

    main()
