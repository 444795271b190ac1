"""Hugging Face transformers backend of the probe engine, with KV-cache reuse.

Prefix sweep: the prompt and the whole CoT are prefilled once (or, for a CoT this engine
generated from the same prompt, read from the cache that generated it:
:meth:`HFEngine.prefix_cache`). Every cut position t then sees the cache up to
``len(prompt) + t`` (a slice, no copy), expanded to k rows; the forced-answer tag is fed and the
k answers decoded. By default all prefixes decode in one batch (per-row attention masks and
position ids); the ``forked`` strategy does one prefix at a time. Decoding is ours, not
``model.generate``'s: greedy at temperature 0, otherwise plain temperature sampling
(softmax(logits / T), no top-k or top-p), from a torch.Generator seeded per prefix with
``(seed, t)``, so results do not depend on the order or batching of prefixes.

Exact answer scores (``score_answers``): the same prefill, then one forward pass of one row per
prefix holding the tag and the whole answer tree (each tree token sees the prefix up to its cut,
the tag and its own ancestors: a tree mask over the suffix, :mod:`cotaudit.engine.shared_prefix`),
logits only where a probability is read.

Across samples: one worker thread owns the model (:class:`cotaudit.engine.batcher.Scheduler`).
CoT generations and prefix sweeps of concurrently running samples are decode jobs that join and
leave one running batch (at most ``max_batch_rows`` rows; :mod:`cotaudit.engine.hf_batch`);
scoring runs exclusively between decode steps. Every ``*_sync`` method may be called from any
thread: its model work runs on the worker.
"""

from __future__ import annotations

import contextlib
import inspect
import logging
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, Literal

from cotaudit.engine.base import (
    AnswerScoreRequest,
    AnswerScores,
    PrefixRequest,
    cut_and_feed,
    seed_for,
)
from cotaudit.engine.batcher import (
    DEFAULT_MAX_BATCH_ROWS,
    Scheduler,
    on_worker,
    run_alone,
    warn_rows_dependent,
)
from cotaudit.engine.hf_batch import (
    DecodedCaches,
    GenerateJob,
    HFStepper,
    RowDecoder,
    SweepJob,
)
from cotaudit.engine.in_process import InProcessEngine

logger = logging.getLogger(__name__)


class HFEngine(InProcessEngine):
    """The probe engine over a transformers causal LM and its chat template."""

    _stepper: HFStepper
    _generate_job = GenerateJob

    def __init__(
        self,
        model: Any,
        tokenizer: Any,
        *,
        sweep: Literal["auto", "batched", "forked"] = "auto",
        context_cache_size: int = 8,
        max_batch_rows: int = DEFAULT_MAX_BATCH_ROWS,
        pad_rows: bool = True,
    ) -> None:
        """``sweep``: decode all prefixes together over one shared cache (``batched``) or one
        prefix at a time from a cache view (``forked``); ``auto`` picks batched unless the model
        uses sliding-window attention (which the shared-prefix attention does not implement).
        ``context_cache_size``: prefilled scoring contexts kept for reuse (0 disables).
        ``max_batch_rows``: rows decoding together across samples (1: one job at a time).
        ``pad_rows``: pad decode steps to a multiple of 4 rows, so results do not depend on the
        batch (:mod:`cotaudit.engine.hf_batch`); False decodes a lone job at its own rows."""
        import torch

        from cotaudit.engine import hf_batch, shared_prefix

        if max_batch_rows < 1:
            raise ValueError(f"max_batch_rows must be >= 1, got {max_batch_rows}")
        shared_prefix.register()
        hf_batch.register()
        if sweep == "auto":
            sliding = getattr(model.config, "sliding_window", None)
            sweep = "forked" if sliding else "batched"
        self.sweep = sweep
        self.context_cache_size = context_cache_size
        self._contexts: OrderedDict[tuple[int, ...], tuple[Any, Any]] = OrderedDict()

        self.model = model.eval()
        self.tokenizer = self.hf_tokenizer = tokenizer
        self.device = next(model.parameters()).device
        self._torch = torch
        self._start_worker(Scheduler("cotaudit-hf", torch.inference_mode), "cotaudit-hf")
        self._stepper = HFStepper(self, max_batch_rows, pad_rows)
        self.decoded = DecodedCaches()
        """Caches of finished generations, read by probes of the same text
        (:meth:`prefix_cache`)."""
        self.rows_independent = self._stepper.rows_independent()
        """Whether this device's matrix products give a row the same bits in any batch (see
        :mod:`cotaudit.engine.hf_batch`); if not, batching can change the last float bits."""
        if max_batch_rows > 1 and not self.rows_independent:
            warn_rows_dependent(logger, "hf-probe", self.device)
        eos = {tokenizer.eos_token_id}
        gen_eos = getattr(getattr(model, "generation_config", None), "eos_token_id", None)
        if isinstance(gen_eos, int):
            eos.add(gen_eos)
        elif isinstance(gen_eos, list):
            eos.update(gen_eos)
        self.eos_ids = sorted(i for i in eos if i is not None)
        # transformers >= 5.2x names the KV-cache argument ``cache``; older releases
        # ``past_key_values``.
        params = inspect.signature(model.forward).parameters
        self._cache_kwarg = "cache" if "cache" in params else "past_key_values"

    @classmethod
    def load(
        cls,
        path: str | Path,
        *,
        dtype: str = "float32",
        device: str = "cpu",
        max_batch_rows: int = DEFAULT_MAX_BATCH_ROWS,
        pad_rows: bool = True,
    ) -> HFEngine:
        """Load a local folder or hub id with ``from_pretrained``; a LoRA adapter folder (one
        with ``adapter_config.json``) as its base with the adapter merged into the weights
        (:func:`cotaudit.models.adapters.load_merged`), the tokenizer from the adapter
        folder."""
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        from cotaudit.models.adapters import is_adapter_folder, load_merged

        torch_dtype = getattr(torch, dtype) if dtype != "auto" else "auto"
        tokenizer = AutoTokenizer.from_pretrained(str(path))
        # Any: transformers types ``PreTrainedModel.to`` as an unbound wrapper, so mypy reads
        # the device as the model argument
        model: Any
        if is_adapter_folder(path):
            model = load_merged(path, torch_dtype)
        else:
            model = AutoModelForCausalLM.from_pretrained(str(path), dtype=torch_dtype)
        model = model.to(device)
        return cls(model, tokenizer, max_batch_rows=max_batch_rows, pad_rows=pad_rows)

    @property
    def context_length(self) -> int | None:
        """The model's maximum sequence length (``max_position_embeddings``), if known."""
        return getattr(self.model.config, "max_position_embeddings", None)

    # --- verbs ----------------------------------------------------------------------------

    def _locked(self, fn: Any, *args: Any) -> Any:
        """``fn(*args)`` on the worker thread, alone (decode jobs inside it run unbatched)."""
        return self._scheduler.call(fn, *args)

    def forward(
        self, input_ids: Any, cache: Any = None, *, last_only: bool = False
    ) -> tuple[Any, Any]:
        """One model call with the KV cache; returns (logits, cache). ``last_only`` computes
        logits for the last position only (``logits_to_keep=1``)."""
        kwargs: dict[str, Any] = {"input_ids": input_ids, "use_cache": True}
        if cache is not None:
            kwargs[self._cache_kwarg] = cache
        if last_only:
            kwargs["logits_to_keep"] = 1
        out = self.model(**kwargs)
        return out.logits, _cache_of(out)

    # --- synchronous implementations ------------------------------------------------------

    @on_worker
    def prefill(self, token_ids: Sequence[int]) -> Any:
        """Run the model over ``token_ids`` once; returns its KV cache."""
        torch = self._torch
        ids = torch.tensor([list(token_ids)], device=self.device)
        return self.forward(ids, last_only=True)[1]

    def prefix_cache(self, token_ids: Sequence[int]) -> Any:
        """A KV cache whose first positions hold ``token_ids``: the cache of the generation
        that wrote them when one is kept (:class:`DecodedCaches`: a probe reads the keys and
        values the model computed while writing its CoT, as vLLM's prefix cache serves them),
        else a fresh prefill. Callers read its first ``len(token_ids)`` positions only."""
        cached = self.decoded.get(token_ids)
        return cached if cached is not None else self.prefill(token_ids)

    def fork_cache(self, cache: Any, length: int, rows: int) -> Any:
        """A new cache viewing the first ``length`` positions of ``cache``, expanded to ``rows``
        rows. Views, not copies: feeding new tokens concatenates into fresh tensors, so the
        source cache is never modified."""
        from transformers import DynamicCache

        layers = []
        for layer in cache.layers:
            k = layer.keys[:, :, :length, :]
            v = layer.values[:, :, :length, :]
            layers.append((k.expand(rows, -1, -1, -1), v.expand(rows, -1, -1, -1)))
        return DynamicCache(layers)

    def continue_prefixes_sync(self, request: PrefixRequest) -> list[list[str]]:
        """The prefix sweep: a job in the running batch (``batched``), or alone (``forked``)."""
        if self.sweep == "forked":
            return self.forked_continue_prefixes_sync(request)
        return self._scheduler.run([SweepJob(self._stepper, request)])[0]

    @on_worker
    def forked_continue_prefixes_sync(self, request: PrefixRequest) -> list[list[str]]:
        """One prefill of prompt + CoT; then per prefix: a cache view cut at t, the tag, k rows."""
        torch = self._torch
        prompt_ids, tag_ids = self._prompt_and_tag(request)
        sequence = prompt_ids + list(request.cot_token_ids)
        cache = self.prefix_cache(sequence)
        answers: list[list[str]] = []
        for t in request.positions:
            n, fed = cut_and_feed(sequence, len(prompt_ids), t, tag_ids)
            fork = self.fork_cache(cache, n, request.k)
            tag = torch.tensor([fed] * request.k, device=self.device)
            logits, fork = self.forward(tag, fork, last_only=True)
            generator = torch.Generator(device="cpu").manual_seed(seed_for(request.seed, t))
            state = {"cache": fork}

            def step(nxt: Any, state: dict[str, Any] = state) -> Any:
                logits, state["cache"] = self.forward(nxt[:, None], state["cache"])
                return logits[:, -1, :]

            rows, _ = self._decode(
                logits[:, -1, :], request.max_tokens, request.temperature, [generator], step
            )
            answers.append([self.detokenize(r) for r in rows])
        return answers

    @on_worker
    def batched_continue_prefixes_sync(self, request: PrefixRequest) -> list[list[str]]:
        """One prefill of prompt + CoT; then all P prefixes x k rows decode together, alone
        (the job :meth:`continue_prefixes_sync` puts in the running batch).

        Row r of prefix t attends to the shared cache up to len(prompt) + t (one copy of it, see
        :mod:`cotaudit.engine.shared_prefix`), then to its own tag and answer tokens, fed at
        position ids len(prompt) + t, +1, ...
        """
        return run_alone(SweepJob(self._stepper, request))

    @on_worker
    def score_answers_sync(self, request: AnswerScoreRequest) -> list[AnswerScores]:
        """One prefill of prompt + CoT; then, over P rows (one per prefix) that share it, one
        forward pass of the tag and one of the tree's nodes.

        Row r reads the shared cache up to len(prompt) + t_r, then its own suffix: the tag
        (causal), then each tree node seeing the whole tag and its own ancestors (a tree mask),
        at position ids len(prompt) + t_r + j over the tag and + len(tag) - 1 + depth(node) per
        node. Log-probabilities are log_softmax(logits / T), read at the tag's end and at each
        node that has children or reads. A branch from the root whose first token has
        probability below ``request.prune_below`` at every prefix is not fed (its first token's
        log-probability is read; its deeper nodes read -inf and their reads 0)."""
        from cotaudit.engine.shared_prefix import ATTENTION_NAME as SHARED
        from cotaudit.engine.shared_prefix import SharedPrefixCache

        torch = self._torch
        if not request.positions:
            return []
        prompt_ids, tag_ids = self._prompt_and_tag(request)
        full = self.prefix_cache(prompt_ids + list(request.cot_token_ids))
        tree, n_tag, rows = request.tree, len(tag_ids), len(request.positions)
        lengths = torch.tensor([len(prompt_ids) + t for t in request.positions], device=self.device)
        width = len(prompt_ids) + len(request.cot_token_ids)
        cache = SharedPrefixCache(full, width, lengths)
        pos = lengths[:, None] + torch.arange(n_tag, device=self.device)[None, :]
        with self._attention(SHARED):
            out = self.model(
                input_ids=torch.tensor([tag_ids] * rows, device=self.device),
                position_ids=pos,
                use_cache=True,
                logits_to_keep=1,
                **{self._cache_kwarg: cache},
            )
        root = torch.log_softmax(out.logits[:, -1, :].float() / request.temperature, dim=-1)
        fed = _fed_nodes(tree, root, request.prune_below)
        logp: dict[int, Any] = {-1: root}  # node -> [rows, vocab] log-probs after it
        if fed:
            index = {node: j for j, node in enumerate(fed)}
            mask, offsets = tree.suffix(n_tag, fed)
            cache.suffix_mask = torch.tensor(mask, dtype=torch.bool, device=self.device)
            node_offsets = torch.tensor(offsets[n_tag:], device=self.device)
            wanted = set(request.read_nodes)
            read_at = [node for node in fed if node in wanted]
            with self._attention(SHARED):
                out = self.model(
                    input_ids=torch.tensor([[tree.tokens[i] for i in fed]] * rows),
                    position_ids=lengths[:, None] + node_offsets[None, :],
                    use_cache=True,
                    logits_to_keep=torch.tensor([index[n] for n in read_at]),
                    **{self._cache_kwarg: cache},
                )
            values = torch.log_softmax(out.logits.float() / request.temperature, dim=-1)
            logp.update({node: values[:, j, :] for j, node in enumerate(read_at)})
        vocab = root.shape[-1]
        node_lp = torch.full((rows, len(tree)), float("-inf"))
        for i, (tok, parent) in enumerate(zip(tree.tokens, tree.parents, strict=True)):
            if parent in logp:
                node_lp[:, i] = logp[parent][:, tok]
        masses = torch.zeros(rows, len(request.reads), dtype=torch.float64)
        for j, (node, set_index) in enumerate(request.reads):
            if node in logp:
                ids = [
                    i for i in request.token_sets[set_index] if i < vocab
                ]  # past the logits: p 0
                masses[:, j] = logp[node][:, ids].exp().sum(-1).double()
        return [AnswerScores(node_lp[r].tolist(), masses[r].tolist()) for r in range(rows)]

    @contextlib.contextmanager
    def _attention(self, name: str) -> Iterator[None]:
        """Use attention implementation ``name`` for the duration (under the engine lock)."""
        config = self.model.config
        previous = config._attn_implementation
        config._attn_implementation = name
        try:
            yield
        finally:
            config._attn_implementation = previous

    def _greedy_answers(self, ids: list[int], max_tokens: int, k: int) -> list[str]:
        """``model.generate`` over k rows of ``ids`` (greedy)."""
        torch = self._torch
        x = torch.tensor([ids] * k, device=self.device)
        out = self.model.generate(
            input_ids=x,
            attention_mask=torch.ones_like(x),
            max_new_tokens=max_tokens,
            do_sample=False,
            eos_token_id=self.eos_ids,
            pad_token_id=self.eos_ids[0],
        )
        return [self.detokenize(_until_eos(r[len(ids) :].tolist(), self.eos_ids)) for r in out]

    def _later_logprobs(self, cache: Any, ctx_ids: list[int], cont: list[int]) -> list[float]:
        """One forward pass of cont[:-1] over a view of the context's cache."""
        torch = self._torch
        fork = self.fork_cache(cache, len(ctx_ids), 1)
        x = torch.tensor([cont[:-1]], device=self.device)
        logits = self.forward(x, fork)[0][0]
        logp = torch.log_softmax(logits.float(), dim=-1)
        return logp[torch.arange(len(cont) - 1), torch.tensor(cont[1:])].tolist()

    def _prefilled_context(self, ctx_ids: list[int]) -> tuple[Any, Any]:
        """(log-softmax after the context, its KV cache), from a small LRU
        (``context_cache_size``: samples that share a transcript, fixture versions differing
        only in their reports, prefill it once) or a fresh prefill."""
        key = tuple(ctx_ids)
        if key in self._contexts:
            self._contexts.move_to_end(key)
            return self._contexts[key]
        torch = self._torch
        logits, cache = self.forward(torch.tensor([ctx_ids], device=self.device), last_only=True)
        entry = (torch.log_softmax(logits[0, -1, :].float(), dim=-1), cache)
        self._contexts[key] = entry
        while len(self._contexts) > self.context_cache_size:
            self._contexts.popitem(last=False)
        return entry

    def _decode(
        self,
        logits: Any,
        max_tokens: int,
        temperature: float,
        generators: list[Any],
        step: Callable[[Any], Any],
    ) -> tuple[list[list[int]], list[bool]]:
        """Decode up to ``max_tokens`` tokens for every row (:class:`RowDecoder`);
        ``step(next_tokens)`` feeds the tokens and returns the next logits.
        Returns the token rows and whether each row stopped at EOS."""
        decoder = RowDecoder(
            logits.shape[0], max_tokens, temperature, generators, self.eos_ids, self.device
        )
        done = decoder.done or decoder.advance(logits)
        while not done:
            done = decoder.advance(step(decoder.next))
        return decoder.tokens, decoder.stopped


def _fed_nodes(tree: Any, root: Any, prune_below: float) -> list[int]:
    """The tree's nodes to feed, in order: every node whose branch from the root starts with a
    token of probability >= ``prune_below`` at some row of ``root`` ([rows, vocab] log-probs
    after the tag)."""
    import math

    threshold = math.log(prune_below) if prune_below > 0 else float("-inf")
    kept: list[int] = []
    for i, parent in enumerate(tree.parents):
        if parent >= 0:
            if parent in kept:
                kept.append(i)
        elif float(root[:, tree.tokens[i]].max()) >= threshold:
            kept.append(i)
    return kept


def _cache_of(out: Any) -> Any:
    """The KV cache of a model output (``cache`` in transformers >= 5.2x)."""
    cache = getattr(out, "cache", None)
    return cache if cache is not None else out.past_key_values


def _until_eos(ids: list[int], eos_ids: Sequence[int]) -> list[int]:
    for i, tok in enumerate(ids):
        if tok in eos_ids:
            return ids[:i]
    return ids
