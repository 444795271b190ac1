"""Decode jobs of the transformers engine and the batched step that runs them together.

A decode step feeds one token per row of every active job in one forward pass. Each job keeps
its own KV cache (a CoT: a :class:`GrowingCache` of its prompt and tokens; a prefix sweep: one
shared prompt + CoT prefix and per-row suffixes, :mod:`cotaudit.engine.shared_prefix`). For a
Llama-family model the step is :class:`cotaudit.engine.hf_step.DecoderStep`; for any other, the
model's forward pass with :func:`jobs_attention` as its attention implementation. Either way each
job's attention is computed with that job's cache alone, by the very call the job makes when it
decodes unbatched (same shapes, no padding, no other row in any reduction). Only the matrix
products over the merged rows (projections, MLP, LM head) see the other rows.

A one-row generation leaves its cache, holding the prompt and every generated token, to the
engine's :class:`DecodedCaches`; a probe of that text (the same prompt and CoT tokens) then reads
it instead of prefilling prompt + CoT again.

Row independence of those products: a BLAS may pick a different kernel for a different number
of rows, which changes the float rounding of a row. MKL (x86 CPUs) computes a row identically
for any row count that is a multiple of 4 (found by :func:`rows_independent`, measured at
start), but differently for 1-3 rows (a matrix-vector kernel) and, with 2 threads, for the
last rows of 5-11. So every step is padded to a multiple of ``ROW_MULTIPLE`` rows (16 for the
written-out step over MKL; none over oneDNN's packed weights, whose rows are independent at
any count, :mod:`cotaudit.engine.hf_step`; inert rows: token 0, no attention), alone or
batched: a row's floats then do not depend on which other rows share its batch, and greedy
CoTs and seeded samples are identical batched and unbatched.
``pad_rows=False`` (``-M pad_rows=false``) turns the padding off: a lone job then decodes at its
own row count (a 1-row CoT at ~1.6x the speed of a padded one on this CPU), and results
may differ from a run with another batch composition in the last float bits.
Where :func:`rows_independent` is False (e.g. GPU GEMMs that change tiling with the row count),
batching can change the last float bits, hence a greedy token at a near tie; ``max_batch_rows=1``
gives the unbatched computation there.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import torch

from cotaudit.engine import batcher
from cotaudit.engine.base import GenerationJob, cut_and_feed, seed_for
from cotaudit.engine.batcher import job_spans
from cotaudit.engine.hf_step import DecoderStep
from cotaudit.engine.shared_prefix import SharedPrefixCache, shared_prefix_attention

if TYPE_CHECKING:
    from cotaudit.engine.base import PrefixRequest

ATTENTION_NAME = "cotaudit_jobs"
ROW_MULTIPLE = 4
"""Decode steps through transformers' forward pass run on a multiple of this many rows (see
the module docstring; the written-out step's is its ``row_multiple``,
:mod:`cotaudit.engine.hf_step`)."""


def padded_rows(rows: int, multiple: int = ROW_MULTIPLE) -> int:
    """``rows`` rounded up to a multiple of ``multiple``."""
    return -(-rows // multiple) * multiple


def linear(x: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    """``x W^T`` as transformers' linear layers compute it."""
    return torch.nn.functional.linear(x, weight)


def rows_independent(
    weight: torch.Tensor,
    multiple: int = ROW_MULTIPLE,
    product: Callable[[torch.Tensor, torch.Tensor], torch.Tensor] = linear,
) -> bool:
    """Whether ``product(x, weight)`` gives every row the same bits for any row count that is a
    multiple of ``multiple`` and any such offset in the batch (random rows: 1, 2, 3, 5, 9 and 16
    times ``multiple`` rows, at offsets 0 and ``multiple``)."""
    g = torch.Generator(device="cpu").manual_seed(0)
    x = torch.randn(17 * multiple, weight.shape[1], generator=g).to(weight.device, weight.dtype)
    with torch.inference_mode():
        ref = product(x[:multiple], weight)
        for rows in (multiple * n for n in (1, 2, 3, 5, 9, 16)):
            for offset in (0, multiple):
                out = product(x[: offset + rows], weight)[offset : offset + rows]
                full = product(x[offset : offset + rows], weight)
                if not torch.equal(out, full):
                    return False
                if offset == 0 and not torch.equal(out[:multiple], ref):
                    return False
    return True


class RowDecoder:
    """Token-by-token decoding state of ``rows`` rows: greedy at temperature 0, otherwise a
    draw from p = softmax(logits / T) by its inverse distribution function: with u uniform in
    [0, 1) from the row's generator (rows form equal groups, one generator each, one u per row
    and step), the token i with F(i-1) <= u * F(V) < F(i), F the running sum of p. A row stops
    at an EOS token (not kept); the decoder is done when every row stopped or ``max_tokens``
    tokens were picked."""

    def __init__(
        self,
        rows: int,
        max_tokens: int,
        temperature: float,
        generators: list[Any],
        eos_ids: Sequence[int],
        device: Any,
    ) -> None:
        self.max_tokens = max_tokens
        self.temperature = temperature
        self.generators = generators
        self.group = rows // len(generators)
        self.eos = torch.tensor(list(eos_ids), device=device)
        self.tokens: list[list[int]] = [[] for _ in range(rows)]
        self.finished = torch.zeros(rows, dtype=torch.bool, device=device)
        self.picked = 0
        self.next: torch.Tensor | None = None

    @property
    def done(self) -> bool:
        return self.picked >= self.max_tokens or bool(self.finished.all())

    @property
    def stopped(self) -> list[bool]:
        """Whether each row stopped at an EOS token."""
        return self.finished.tolist()

    def advance(self, logits: torch.Tensor) -> bool:
        """Pick one token per row from ``logits`` [rows, vocab]; True when done."""
        if self.temperature == 0:
            nxt = logits.argmax(dim=-1)
        else:
            cdf = torch.softmax(logits.float() / self.temperature, dim=-1).cumsum(-1).cpu()
            u = torch.cat([torch.rand(self.group, generator=gen) for gen in self.generators])
            draws = torch.searchsorted(cdf, (u * cdf[:, -1])[:, None], right=True)[:, 0]
            nxt = draws.clamp_(max=cdf.shape[1] - 1).to(logits.device)
        is_eos = torch.isin(nxt, self.eos)
        keep = (~self.finished & ~is_eos).tolist()
        for i, tok in enumerate(nxt.tolist()):
            if keep[i]:
                self.tokens[i].append(tok)
        self.finished |= is_eos
        self.picked += 1
        self.next = nxt
        return self.done


@dataclass(frozen=True)
class LayerKV:
    """One layer's cached keys and values [rows, Hkv, length, d]."""

    keys: torch.Tensor
    values: torch.Tensor


KEY_BLOCK = 16
"""Positions per key block of a :class:`GrowingCache` laid out for the attention kernel."""


class GrowingCache:
    """A job's KV cache in preallocated buffers per layer, filled in place (a decode step writes
    one position; nothing cached is copied), doubling the capacity when full: values
    [rows, Hkv, capacity, d]; keys the same, or (``blocked``, for the decode attention kernel,
    :mod:`cotaudit.engine.hf_kernel`) in blocks of :data:`KEY_BLOCK` positions,
    [rows, Hkv, capacity / 16, d, 16]. :meth:`update` and :attr:`layers` give the filled
    positions as [rows, Hkv, length, d] (views; copies of blocked keys)."""

    def __init__(self, source: Any, rows: int, capacity: int, blocked: bool = False) -> None:
        """Copy ``source``'s layers (a transformers cache of one row) into buffers of
        ``rows`` rows (each a copy of that row) and at least ``capacity`` positions."""
        self.blocked = blocked
        self.keys: list[torch.Tensor] = []
        self.values: list[torch.Tensor] = []
        self.lengths: list[int] = []
        for index, layer in enumerate(source.layers):
            k, v = layer.keys, layer.values
            length = k.shape[2]
            size = self._size(max(capacity, length))
            self.keys.append(self._new_keys(k, rows, size))
            self.values.append(v.new_empty(rows, v.shape[1], size, v.shape[3]))
            self._write_keys(index, 0, k)
            self.values[index][:, :, :length] = v
            self.lengths.append(length)

    def _size(self, positions: int) -> int:
        """Buffer positions for ``positions``: a whole number of key blocks when blocked."""
        return -(-positions // KEY_BLOCK) * KEY_BLOCK if self.blocked else positions

    def _new_keys(self, like: torch.Tensor, rows: int, size: int) -> torch.Tensor:
        """An empty key buffer of ``rows`` rows and ``size`` positions for keys shaped like
        ``like`` [_, Hkv, _, d]."""
        heads, d = like.shape[1], like.shape[3]
        if self.blocked:
            return like.new_empty(rows, heads, size // KEY_BLOCK, d, KEY_BLOCK)
        return like.new_empty(rows, heads, size, d)

    def _write_keys(self, index: int, start: int, keys: torch.Tensor) -> None:
        """Write ``keys`` [rows, Hkv, n, d] at positions [start, start + n) of layer ``index``."""
        buffer, end = self.keys[index], start + keys.shape[2]
        if not self.blocked:
            buffer[:, :, start:end] = keys
            return
        at = torch.arange(start, end, device=buffer.device)
        buffer.transpose(3, 4)[:, :, at // KEY_BLOCK, at % KEY_BLOCK] = keys

    def _read_keys(self, index: int, end: int) -> torch.Tensor:
        """Layer ``index``'s keys at positions [0, end), [rows, Hkv, end, d]."""
        buffer = self.keys[index]
        if not self.blocked:
            return buffer[:, :, :end]
        blocks = buffer[:, :, : -(-end // KEY_BLOCK)].transpose(3, 4)
        return blocks.reshape(*buffer.shape[:2], -1, buffer.shape[3])[:, :, :end]

    def update(
        self, key: torch.Tensor, value: torch.Tensor, layer_idx: int, *args: Any, **kwargs: Any
    ) -> tuple[torch.Tensor, torch.Tensor]:
        start = self.lengths[layer_idx]
        end = start + key.shape[2]
        self.reserve(end, layer_idx)
        self._write_keys(layer_idx, start, key)
        self.values[layer_idx][:, :, start:end] = value
        self.lengths[layer_idx] = end
        return self._read_keys(layer_idx, end), self.values[layer_idx][:, :, :end]

    def reserve(self, needed: int, layer_idx: int) -> None:
        """Make room for ``needed`` positions in layer ``layer_idx`` (doubling)."""
        v = self.values[layer_idx]
        if needed <= v.shape[2]:
            return
        n, size = self.lengths[layer_idx], self._size(max(needed, 2 * v.shape[2]))
        filled = self._read_keys(layer_idx, n)
        self.keys[layer_idx] = self._new_keys(filled, v.shape[0], size)
        self._write_keys(layer_idx, 0, filled)
        self.values[layer_idx] = v.new_empty(v.shape[0], v.shape[1], size, v.shape[3])
        self.values[layer_idx][:, :, :n] = v[:, :, :n]

    def reserve_next(self) -> int:
        """Make room for one more position in every layer; returns the filled length (the same
        in every layer while decoding)."""
        n = self.lengths[0]
        if n + 1 > self.values[0].shape[2]:
            for index in range(len(self.values)):
                self.reserve(n + 1, index)
        return n

    def get_seq_length(self, layer_idx: int = 0) -> int:
        return self.lengths[layer_idx]

    def filled(self, index: int) -> LayerKV:
        """Layer ``index``'s filled positions, keys and values as [rows, Hkv, length, d]."""
        n = self.lengths[index]
        return LayerKV(self._read_keys(index, n), self.values[index][:, :, :n])

    @property
    def layers(self) -> list[LayerKV]:
        """Views of the filled positions of every layer (as transformers' caches expose them)."""
        return [self.filled(i) for i in range(len(self.values))]

    @property
    def nbytes(self) -> int:
        return sum(t.numel() * t.element_size() for t in (*self.keys, *self.values))


DECODED_CACHE_BYTES = 1 << 30
"""Memory kept for the caches of finished generations (:class:`DecodedCaches`)."""


class DecodedCaches:
    """The KV caches of finished one-row generations, keyed by the token ids they hold (the
    prompt and every generated token), so that a probe of that very text reads the keys and
    values the model computed while writing it instead of prefilling it again. Kept within
    ``budget`` bytes, the least recently used dropped first."""

    def __init__(self, budget: int = DECODED_CACHE_BYTES) -> None:
        self.budget = budget
        self._entries: OrderedDict[tuple[int, ...], GrowingCache] = OrderedDict()
        self._bytes = 0

    def put(self, token_ids: Sequence[int], cache: GrowingCache) -> None:
        key = tuple(token_ids)
        if key in self._entries or cache.nbytes > self.budget:
            return
        self._entries[key] = cache
        self._bytes += cache.nbytes
        while self._bytes > self.budget:
            _, dropped = self._entries.popitem(last=False)
            self._bytes -= dropped.nbytes

    def get(self, token_ids: Sequence[int]) -> GrowingCache | None:
        """A stored cache whose first tokens are ``token_ids`` (None if there is none)."""
        key = tuple(token_ids)
        for stored in reversed(self._entries):
            if stored[: len(key)] == key:
                self._entries.move_to_end(stored)
                return self._entries[stored]
        return None


@dataclass
class JobsKV:
    """Keys (or values) of one layer for all jobs of a step: each job's own cache entry, and
    the rows ``spans`` of each job in the merged batch."""

    parts: list[Any]
    jobs: Sequence[Any]
    spans: list[tuple[int, int]]


class JobsCache:
    """The cache handed to the model during a batched step: routes each job's rows of the new
    keys and values to that job's own cache."""

    def __init__(self, jobs: Sequence[Any], spans: list[tuple[int, int]]) -> None:
        self.jobs = jobs
        self.spans = spans

    def update(
        self, key: torch.Tensor, value: torch.Tensor, layer_idx: int, *args: Any, **kwargs: Any
    ) -> tuple[JobsKV, JobsKV]:
        keys, values = [], []
        for job, (a, b) in zip(self.jobs, self.spans, strict=True):
            k, v = job.cache.update(key[a:b], value[a:b], layer_idx)
            keys.append(k)
            values.append(v)
        return JobsKV(keys, self.jobs, self.spans), JobsKV(values, self.jobs, self.spans)

    def get_seq_length(self, layer_idx: int = 0) -> int:
        return 0


def jobs_attention(
    module: Any, query: torch.Tensor, key: JobsKV, value: JobsKV, attention_mask: Any, **kwargs: Any
) -> tuple[torch.Tensor, None]:
    """Attention of a batched step: each job's rows over that job's own cache, by the job's
    own attention function; padding rows get zeros. Returns [B, q, H, d]."""
    if not isinstance(key, JobsKV):
        raise TypeError("jobs_attention needs a JobsCache")
    batch, heads, q_len, dim = query.shape
    out = query.new_zeros(batch, q_len, heads, dim)
    for job, (a, b), k, v in zip(key.jobs, key.spans, key.parts, value.parts, strict=True):
        out[a:b] = job.attend(module, query[a:b], k, v, **kwargs)[0]
    return out, None


def register() -> None:
    """Register :func:`jobs_attention` with transformers (idempotent)."""
    from transformers import AttentionInterface

    AttentionInterface.register(ATTENTION_NAME, jobs_attention)


class HFStepper:
    """One decode step of the transformers engine for a list of jobs, padded to a multiple of
    ``row_multiple`` rows (``pad_rows`` False: 1, no padding)."""

    def __init__(self, engine: Any, max_rows: int, pad_rows: bool = True) -> None:
        # Any: the :class:`cotaudit.engine.hf.HFEngine`, whose module imports this one
        self.engine = engine
        self.max_rows = max_rows
        self.decoder_step = DecoderStep.of(engine.model)
        """The written-out step (:mod:`cotaudit.engine.hf_step`), or None: transformers'
        forward pass with :func:`jobs_attention`."""
        self.product = self.decoder_step.product if self.decoder_step is not None else linear
        """The matrix product of the step's weights."""
        self.multiple = self.decoder_step.row_multiple if self.decoder_step else ROW_MULTIPLE
        """The row multiple at which :attr:`product` is row-independent (where it is)."""
        self.row_multiple = self.multiple if pad_rows else 1

    def rows_independent(self) -> bool:
        """:func:`rows_independent` of the step's first weight under its own product."""
        if self.decoder_step is not None:
            weight = self.decoder_step.layers[0].qkv
        else:
            model = self.engine.model
            weight = next(m for m in model.modules() if isinstance(m, torch.nn.Linear)).weight
        return rows_independent(weight, self.multiple, self.product)

    def step(self, jobs: Sequence[Any]) -> list[torch.Tensor]:
        """Each job's logits [rows, vocab], in the order of ``jobs``. The step's rows hold the
        kernel-attention jobs first (a row's floats do not depend on its place)."""
        if self.decoder_step is not None and self.decoder_step.kernel is not None:
            order = sorted(range(len(jobs)), key=lambda i: not jobs[i].KERNEL_ATTENTION)
            ordered = [jobs[i] for i in order]
            logits = self._step(ordered)
            back = [torch.empty(0)] * len(jobs)
            for i, out in zip(order, logits, strict=True):
                back[i] = out
            return back
        return self._step(jobs)

    def _step(self, jobs: Sequence[Any]) -> list[torch.Tensor]:
        engine = self.engine
        spans, start = job_spans(jobs)
        pad = padded_rows(start, self.row_multiple) - start
        zeros = torch.zeros(pad, dtype=torch.long, device=engine.device)
        tokens = torch.cat([j.next_tokens() for j in jobs] + [zeros])
        positions = torch.cat([j.next_positions() for j in jobs] + [zeros])
        if self.decoder_step is not None:
            logits = self.decoder_step(tokens, positions, jobs, spans)
            return [logits[a:b] for a, b in spans]
        cache = JobsCache(jobs, spans)
        with engine._attention(ATTENTION_NAME):
            out = engine.model(
                input_ids=tokens[:, None],
                position_ids=positions[:, None],
                use_cache=True,
                **{engine._cache_kwarg: cache},
            )
        logits = out.logits[:, -1, :]
        return [logits[a:b] for a, b in spans]


class DecodeJob(batcher.DecodeJob):
    """Shared parts of the engine's jobs: ``decoder``, ``cache``, ``rows``, ``stepper``."""

    KERNEL_ATTENTION = False
    """Whether the job's attention is the decode attention kernel's (a :class:`GrowingCache`
    of its own per row; :mod:`cotaudit.engine.hf_kernel`)."""
    decoder: RowDecoder
    cache: Any

    def next_tokens(self) -> torch.Tensor:
        """The token each of the step's rows feeds next."""
        assert self.decoder.next is not None
        return self.decoder.next


class GenerateJob(DecodeJob, GenerationJob):
    """``n`` completions of a chat prompt: prefill once, expand to n rows, decode."""

    KERNEL_ATTENTION = True
    feeding_last = False
    """Whether a one-row generation stopped at ``max_tokens`` feeds its last token (see
    :meth:`advance`)."""

    def start(self) -> bool:
        engine, (messages, max_tokens, temperature, seed) = self.engine, self.args
        prompt_ids = engine.render(messages)
        if engine.context_length:
            room = engine.context_length - len(prompt_ids)
            if room <= 0:
                raise ValueError(
                    f"prompt of {len(prompt_ids)} tokens fills the model's context "
                    f"({engine.context_length} tokens)"
                )
            max_tokens = min(max_tokens, room)
        self.prompt_ids = prompt_ids
        self.n_prompt = len(prompt_ids)
        logits, prefilled = engine.forward(
            torch.tensor([prompt_ids], device=engine.device), last_only=True
        )
        kernel = self.stepper.decoder_step is not None and self.stepper.decoder_step.kernel
        self.cache = GrowingCache(
            prefilled, self.rows, len(prompt_ids) + min(max_tokens, 512), blocked=bool(kernel)
        )
        logits = logits[:, -1, :].expand(self.rows, -1)
        generator = torch.Generator(device="cpu").manual_seed(seed_for(seed))
        self.decoder = RowDecoder(
            self.rows, max_tokens, temperature, [generator], engine.eos_ids, engine.device
        )
        return self.decoder.done or self.decoder.advance(logits)

    def next_positions(self) -> torch.Tensor:
        pos = self.n_prompt + self.decoder.picked - 1
        return torch.full((self.rows,), pos, dtype=torch.long, device=self.engine.device)

    def advance(self, logits: torch.Tensor) -> bool:
        """Pick the next tokens; a one-row generation that stops at ``max_tokens`` stays one
        step more to feed its last token, then leaves its cache (prompt + every token) to the
        engine's :class:`DecodedCaches`."""
        if self.feeding_last:
            self._keep_cache()
            return True
        done = self.decoder.advance(logits)
        if done and self.rows == 1:
            if not bool(self.decoder.finished[0]) and self.decoder.tokens[0]:
                self.feeding_last = True
                return False
            self._keep_cache()
        return done

    def _keep_cache(self) -> None:
        ids = self.prompt_ids + self.decoder.tokens[0]
        if self.cache.get_seq_length() == len(ids):
            self.engine.decoded.put(ids, self.cache)

    def attend(self, module: Any, query: torch.Tensor, key: Any, value: Any, **kwargs: Any) -> Any:
        """SDPA of the job's rows over its whole cache (grouped kv heads), [rows, q, H, d]."""
        out = torch.nn.functional.scaled_dot_product_attention(
            query, key, value, scale=kwargs.get("scaling"), enable_gqa=True
        )
        return out.transpose(1, 2), None


class SweepJob(DecodeJob):
    """All P prefixes x k rows of a prefix request over one shared prompt + CoT cache.

    Rows of one prefix whose answer tokens so far are equal have equal next-token logits, so a
    step feeds one row per such group, and none for a row that stopped: ``rows`` counts the
    groups (P x k before the start). Every row still draws its own next token from its group's
    logits, with the same draws of its generator as if each row were fed.
    """

    def __init__(self, stepper: HFStepper, request: PrefixRequest) -> None:
        super().__init__(stepper)
        self.request = request
        self.rows = len(request.positions) * request.k

    def start(self) -> bool:
        from cotaudit.engine.shared_prefix import ATTENTION_NAME as SHARED

        engine, request = self.engine, self.request
        prompt_ids, tag_ids = engine._prompt_and_tag(request)
        sequence = prompt_ids + list(request.cot_token_ids)
        full = engine.prefix_cache(sequence)
        k = request.k
        # the k rows of a prefix read the same cut and the same fed tokens: they are fed once
        # per prefix, then their keys, values and logits stand for each of the k rows
        cuts = [cut_and_feed(sequence, len(prompt_ids), t, tag_ids) for t in request.positions]
        lengths = torch.tensor([n for n, _ in cuts], device=engine.device)
        self.cache = SharedPrefixCache(full, len(sequence), lengths)
        fed = torch.tensor([ids for _, ids in cuts], device=engine.device)
        pos = lengths[:, None] + torch.arange(fed.shape[1], device=engine.device)[None, :]
        with engine._attention(SHARED):
            out = engine.model(
                input_ids=fed,
                position_ids=pos,
                use_cache=True,
                logits_to_keep=1,
                **{engine._cache_kwarg: self.cache},
            )
        self.last_position = pos[:, -1].repeat_interleave(k)
        generators = [
            torch.Generator(device="cpu").manual_seed(seed_for(request.seed, t))
            for t in request.positions
        ]
        self.decoder = RowDecoder(
            self.rows,
            request.max_tokens,
            request.temperature,
            generators,
            engine.eos_ids,
            engine.device,
        )
        self.slot = torch.arange(len(request.positions), device=engine.device).repeat_interleave(k)
        """Row i reads the logits of fed row ``slot[i]`` (the cache row of its group)."""
        return self.advance(out.logits[:, -1, :])

    def _group(self) -> None:
        """Group the unfinished rows by (prefix, answer tokens so far): rows of one group last
        step that drew the same token stay together. The first row of each group is fed next,
        and the cache keeps one row per group (copied from the group it split from)."""
        groups: dict[tuple[int, int], int] = {}
        fed: list[int] = []
        sources: list[int] = []
        slot = [0] * len(self.decoder.tokens)  # a finished row reads any logits: not kept
        finished = self.decoder.finished.tolist()
        assert self.decoder.next is not None
        drawn = zip(self.slot.tolist(), self.decoder.next.tolist(), strict=True)
        for i, (old, token) in enumerate(drawn):
            if finished[i]:
                continue
            group = groups.setdefault((old, token), len(fed))
            if group == len(fed):
                fed.append(i)
                sources.append(old)
            slot[i] = group
        device = self.engine.device
        if sources != list(range(self.cache.lengths.shape[0])):
            self.cache.select_rows(torch.tensor(sources, dtype=torch.long, device=device))
        self.fed = torch.tensor(fed, dtype=torch.long, device=device)
        self.slot = torch.tensor(slot, dtype=torch.long, device=device)
        self.rows = len(fed)

    def advance(self, logits: torch.Tensor) -> bool:
        """Each row's next token from its group's row of ``logits`` [groups, vocab]."""
        if self.decoder.advance(logits[self.slot]):
            return True
        self._group()
        return False

    def next_tokens(self) -> torch.Tensor:
        assert self.decoder.next is not None
        return self.decoder.next[self.fed]

    def next_positions(self) -> torch.Tensor:
        self.last_position = self.last_position + 1
        return self.last_position[self.fed]

    def attend(self, module: Any, query: torch.Tensor, key: Any, value: Any, **kwargs: Any) -> Any:
        return shared_prefix_attention(module, query, key, value, None, **kwargs)

    def result(self) -> list[list[str]]:
        k, detok = self.request.k, self.engine.detokenize
        rows = self.decoder.tokens
        return [
            [detok(r) for r in rows[j * k : (j + 1) * k]]
            for j in range(len(self.request.positions))
        ]
