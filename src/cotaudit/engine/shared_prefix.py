"""Attention over one shared prefix cache for many rows, each cut at its own length.

The prefix sweep decodes P*k rows that all read the same prompt + CoT cache, row r only up to
its own cut ``lengths[r]``. Expanding that cache to P*k rows copies it P*k times per layer (and
a dynamic cache re-copies it on every decode step). Here the prefix keys and values stay a single
row; each row's own tokens (tag and answer) live in a small per-row suffix. For a query of row r:

    scores = [q . K_prefix[j] * scale for j < lengths[r]]  ++  [q . K_suffix[r, j] * scale, causal]
    out    = softmax(scores) . [V_prefix ; V_suffix[r]]

computed with one matrix product per kv head over all rows (no copy of the prefix). A cache built
with a ``suffix_mask`` (a tree of answer paths fed in one call, :meth:`HFEngine.score_answers`)
uses that mask over the suffix instead of the causal one: a query sees its own ancestors only.
Used through
transformers' attention interface: while :func:`shared_prefix_attention` is the model's
attention implementation, a :class:`SharedPrefixCache` hands it :class:`SharedKV` values.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch

ATTENTION_NAME = "cotaudit_shared_prefix"


@dataclass
class SharedKV:
    """Keys (or values) of one layer: ``prefix`` [1, Hkv, L, d], ``suffix`` [B, Hkv, s, d];
    row b sees prefix positions < ``lengths[b]``; ``suffix_mask`` [s, s] (query, key): which
    suffix positions a suffix query sees (None: causal)."""

    prefix: torch.Tensor
    suffix: torch.Tensor
    lengths: torch.Tensor
    suffix_mask: torch.Tensor | None = None


class SharedPrefixCache:
    """A KV cache of a single-row prefix (a view of ``source``'s first ``width`` positions)
    plus per-row suffixes that grow as tokens are fed (in place, in buffers that double when
    full: a long continuation copies nothing it cached)."""

    def __init__(
        self,
        source: Any,
        width: int,
        lengths: torch.Tensor,
        suffix_mask: torch.Tensor | None = None,
    ) -> None:
        self.prefix = [
            (layer.keys[:, :, :width], layer.values[:, :, :width]) for layer in source.layers
        ]
        self.suffix: list[tuple[torch.Tensor, torch.Tensor] | None] = [None] * len(self.prefix)
        """Per layer: key and value buffers [rows, Hkv, capacity, d] (None before any token)."""
        self.filled = [0] * len(self.prefix)
        self.width = width
        self.lengths = lengths
        self.suffix_mask = suffix_mask

    def update(
        self, key: torch.Tensor, value: torch.Tensor, layer_idx: int, *args: Any, **kwargs: Any
    ) -> tuple[SharedKV, SharedKV]:
        start = self.filled[layer_idx]
        end = start + key.shape[2]
        buffers = self.suffix[layer_idx]
        if buffers is None or end > buffers[0].shape[2]:
            size = max(end, 2 * start, 16)
            grown: list[torch.Tensor] = []
            for new in (key, value):
                buffer = new.new_empty(new.shape[0], new.shape[1], size, new.shape[3])
                if buffers is not None:
                    buffer[:, :, :start] = buffers[len(grown)][:, :, :start]
                grown.append(buffer)
            buffers = (grown[0], grown[1])
            self.suffix[layer_idx] = buffers
        buffers[0][:, :, start:end] = key
        buffers[1][:, :, start:end] = value
        self.filled[layer_idx] = end
        pk, pv = self.prefix[layer_idx]
        keys, values, mask = buffers[0][:, :, :end], buffers[1][:, :, :end], self.suffix_mask
        return SharedKV(pk, keys, self.lengths, mask), SharedKV(pv, values, self.lengths, mask)

    def select_rows(self, index: torch.Tensor) -> None:
        """Row r becomes a copy of old row ``index[r]`` (its suffix and its cut)."""
        self.suffix = [None if kv is None else (kv[0][index], kv[1][index]) for kv in self.suffix]
        self.lengths = self.lengths[index]

    def get_seq_length(self, layer_idx: int = 0) -> int:
        return self.width + self.filled[layer_idx]


def shared_prefix_attention(
    module: Any,
    query: torch.Tensor,
    key: Any,
    value: Any,
    attention_mask: torch.Tensor | None,
    scaling: float | None = None,
    dropout: float = 0.0,
    **kwargs: Any,
) -> tuple[torch.Tensor, None]:
    """Attention of ``query`` [B, H, q, d] over a SharedKV; returns [B, q, H, d]."""
    if not isinstance(key, SharedKV):
        raise TypeError("shared_prefix_attention needs a SharedPrefixCache")
    batch, heads, q_len, dim = query.shape
    kv_heads, width = key.prefix.shape[1], key.prefix.shape[2]
    s_len = key.suffix.shape[2]
    group = heads // kv_heads
    scale = scaling if scaling is not None else dim**-0.5
    qg = query.reshape(batch, kv_heads, group, q_len, dim)
    # prefix: one bmm per kv head over all rows' queries, [Hkv, B*g*q, L]
    q_rows = qg.permute(1, 0, 2, 3, 4).reshape(kv_heads, batch * group * q_len, dim)
    prefix_scores = torch.bmm(q_rows, key.prefix[0].transpose(1, 2)) * scale
    prefix_scores = prefix_scores.view(kv_heads, batch, group, q_len, width).permute(1, 0, 2, 3, 4)
    visible = torch.arange(width, device=query.device)[None, :] < key.lengths[:, None]
    prefix_scores = prefix_scores.masked_fill(~visible[:, None, None, None, :], float("-inf"))
    # suffix: each row's own tokens, causal
    suffix_scores = torch.einsum("bkgqd,bksd->bkgqs", qg, key.suffix) * scale
    if key.suffix_mask is not None:
        own = key.suffix_mask[s_len - q_len :, :s_len]
    else:
        own = (
            torch.arange(s_len, device=query.device)[None, :]
            <= (s_len - q_len + torch.arange(q_len, device=query.device))[:, None]
        )
    suffix_scores = suffix_scores.masked_fill(~own, float("-inf"))
    probs = torch.softmax(torch.cat([prefix_scores, suffix_scores], dim=-1).float(), dim=-1)
    probs = probs.to(query.dtype)
    p_prefix, p_suffix = probs[..., :width], probs[..., width:]
    out_prefix = (
        torch.bmm(
            p_prefix.permute(1, 0, 2, 3, 4).reshape(kv_heads, batch * group * q_len, width),
            value.prefix[0],
        )
        .view(kv_heads, batch, group, q_len, dim)
        .permute(1, 0, 2, 3, 4)
    )
    out_suffix = torch.einsum("bkgqs,bksd->bkgqd", p_suffix, value.suffix)
    out = (out_prefix + out_suffix).reshape(batch, heads, q_len, dim)
    return out.transpose(1, 2).contiguous(), None


def register() -> None:
    """Register the attention function with transformers (idempotent)."""
    from transformers import AttentionInterface

    AttentionInterface.register(ATTENTION_NAME, shared_prefix_attention)
