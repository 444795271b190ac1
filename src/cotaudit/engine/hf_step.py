"""The decode step of a Llama-family decoder, written out over its weights.

For ``B`` rows of one token each (token ids ``x``, position ids ``p``), with ``N`` the RMS norm
``N(h) = w * h / sqrt(mean(h^2) + eps)`` and ``R_p`` the rotary embedding at position p:

    h = E[x]
    per layer:  [q; k; v] = N1(h) W_qkv^T (+ b_qkv);  q, k <- R_p q, R_p k
                each job: its rows' k, v appended to its own cache; o = attention of its rows'
                q over that cache (no other row in any reduction): one kernel call for all
                CoT jobs (:mod:`cotaudit.engine.hf_kernel`), the job's own function for others
                h = h + o W_o^T
                [g; u] = N2(h) W_gu^T;  h = h + (silu(g) * u) W_down^T
    logits = N(h) W_lm^T

``W_qkv`` stacks the q, k and v projections and ``W_gu`` the gate and up projections (one
matrix product each instead of three and two); every product is the step's
:attr:`DecoderStep.product`: on a CPU with oneDNN and float32 weights, :func:`packed_product`
over weights reordered once for it (:func:`pack`), else :func:`product`. The same step, the
same per-job attention and the same padding (to :attr:`DecoderStep.row_multiple` rows) serve
a job decoding alone and in a batch, so a row's floats do not depend on its batch wherever the
products are row-independent (:func:`cotaudit.engine.hf_batch.rows_independent`). The prefill
(many tokens of one job) stays transformers' forward pass.

Models the step covers (:meth:`DecoderStep.of`): ``llama``, ``mistral`` without a sliding
window and ``qwen2`` (bias on q, k, v), SiLU MLP, one rotary embedding module. Any other
model decodes through transformers' forward pass (:class:`cotaudit.engine.hf_batch.HFStepper`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch

F = torch.nn.functional

SUPPORTED_MODEL_TYPES = frozenset({"llama", "mistral", "qwen2"})
"""``config.model_type`` values whose decoder layer is the one written out here."""

ROW_MULTIPLE = 16
"""The step over MKL's :func:`product` runs on a multiple of this many rows: it gives a row the
same bits at any such row count and any position in the batch (checked at start by
:func:`cotaudit.engine.hf_batch.rows_independent`), not at other multiples of 4 or 8. Over
:func:`packed_product` a row's bits hold at any row count: no padding (a multiple of 1)."""


PACKED_ENV = "COTAUDIT_PACKED_WEIGHTS"
"""Set to ``0`` to keep the decode step's products on MKL (:func:`product`) where oneDNN's
packed weights would serve them."""

PACKED_FOR_ROWS = 16
"""The row count oneDNN lays the packed weights out for (the step's usual batch)."""


def packs(weight: torch.Tensor) -> bool:
    """Whether the step packs its weights for oneDNN: float32 on the CPU, torch built with
    oneDNN, and not switched off by ``COTAUDIT_PACKED_WEIGHTS=0``."""
    import os

    return (
        weight.dtype == torch.float32
        and weight.device.type == "cpu"
        and torch.backends.mkldnn.is_available()
        and hasattr(torch.ops.mkldnn, "_reorder_linear_weight")
        and os.environ.get(PACKED_ENV, "1") != "0"
    )


def pack(weight: torch.Tensor) -> torch.Tensor:
    """``weight`` [out, in] reordered once into oneDNN's blocked layout for
    :func:`packed_product` (a copy: the model's own weight stays for the prefill)."""
    return torch.ops.mkldnn._reorder_linear_weight(weight.contiguous(), PACKED_FOR_ROWS)


def packed_product(x: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    """``x W^T`` [rows, out] by oneDNN's float32 inner product over a :func:`pack`-ed ``W``.
    At 16 rows of the default model it takes 0.3-0.6x the time of :func:`product`
    (``bench/decode_step.py``), and a row's floats do not depend on the other rows or their
    number (:func:`cotaudit.engine.hf_batch.rows_independent` checks it at start)."""
    return torch.ops.mkldnn._linear_pointwise(x, weight, None, "none", [], "")


def product(x: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    """``x W^T`` [rows, out] for ``x`` [rows, in] and ``W`` [out, in], computed as ``W x^T`` and
    transposed back (contiguous). MKL reads the weight once for all rows in this form: at 4 to
    64 rows of the default model it takes 0.3-0.8x the time of ``F.linear``'s ``x W^T``
    (``bench/decode_step.py``)."""
    return torch.mm(weight, x.t()).t().contiguous()


@dataclass(frozen=True)
class LayerWeights:
    """One decoder layer's weights in the step's layout."""

    norm1: torch.Tensor
    qkv: torch.Tensor
    qkv_bias: torch.Tensor | None
    o: torch.Tensor
    norm2: torch.Tensor
    gate_up: torch.Tensor
    down: torch.Tensor
    module: Any
    """The layer's attention module (what a job's attention function reads: its groups)."""
    scaling: float


class DecoderStep:
    """The decode step of one model (see the module docstring)."""

    def __init__(self, model: Any) -> None:
        config = model.config
        inner = model.model
        self.eps = float(config.rms_norm_eps)
        self.head_dim = getattr(config, "head_dim", None) or (
            config.hidden_size // config.num_attention_heads
        )
        self.heads = config.num_attention_heads
        self.kv_heads = config.num_key_value_heads
        self.embed = inner.embed_tokens.weight
        self.rotary = inner.rotary_emb
        self.final_norm = inner.norm.weight
        packed = packs(self.embed)
        self.product = packed_product if packed else product
        """The step's matrix product ``(x, W) -> x W^T`` over its weights' layout."""
        self.row_multiple = 1 if packed else ROW_MULTIPLE
        """The row multiple at which :attr:`product` is row-independent."""
        self.lm_head = self._laid_out(model.lm_head.weight.detach(), packed)
        self.layers = [self._layer(layer, packed) for layer in inner.layers]
        self.kernel: Any = None
        """The decode attention kernel (:mod:`cotaudit.engine.hf_kernel`) for jobs whose
        ``KERNEL_ATTENTION`` is True, where it applies (float32 on the CPU, head size a
        multiple of 16) and could be built; None: every job's own attention function."""
        if (
            self.embed.dtype == torch.float32
            and self.embed.device.type == "cpu"
            and self.head_dim % 16 == 0
        ):
            from cotaudit.engine.hf_kernel import decode_attention

            self.kernel = decode_attention()

    @staticmethod
    def of(model: Any) -> DecoderStep | None:
        """The step for ``model``, or None when its architecture is not one the step covers."""
        config = getattr(model, "config", None)
        inner = getattr(model, "model", None)
        if config is None or inner is None:
            return None
        if getattr(config, "model_type", None) not in SUPPORTED_MODEL_TYPES:
            return None
        if getattr(config, "sliding_window", None) and getattr(config, "use_sliding_window", True):
            return None
        if getattr(config, "hidden_act", None) != "silu" or getattr(config, "mlp_bias", False):
            return None
        if getattr(config, "pretraining_tp", 1) != 1:
            return None
        if not all(hasattr(inner, name) for name in ("embed_tokens", "rotary_emb", "norm")):
            return None
        return DecoderStep(model)

    @staticmethod
    def _laid_out(weight: torch.Tensor, packed: bool) -> torch.Tensor:
        """A weight in the step's layout: :func:`pack`-ed for :func:`packed_product`, else as
        is."""
        return pack(weight) if packed else weight

    @classmethod
    def _layer(cls, layer: Any, packed: bool) -> LayerWeights:
        attn, mlp = layer.self_attn, layer.mlp
        projections = (attn.q_proj, attn.k_proj, attn.v_proj)
        bias = None
        if attn.q_proj.bias is not None:
            bias = torch.cat([p.bias.detach() for p in projections]).contiguous()
        qkv = torch.cat([p.weight.detach() for p in projections]).contiguous()
        gate_up = torch.cat([mlp.gate_proj.weight.detach(), mlp.up_proj.weight.detach()])
        return LayerWeights(
            norm1=layer.input_layernorm.weight.detach(),
            qkv=cls._laid_out(qkv, packed),
            qkv_bias=bias,
            o=cls._laid_out(attn.o_proj.weight.detach(), packed),
            norm2=layer.post_attention_layernorm.weight.detach(),
            gate_up=cls._laid_out(gate_up, packed),
            down=cls._laid_out(mlp.down_proj.weight.detach(), packed),
            module=attn,
            scaling=float(attn.scaling),
        )

    def norm(self, h: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
        """RMS norm as transformers' ``LlamaRMSNorm`` computes it (in float32)."""
        x = h.float()
        x = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)
        return weight * x.to(h.dtype)

    def __call__(
        self,
        tokens: torch.Tensor,
        positions: torch.Tensor,
        jobs: Sequence[Any],
        spans: Sequence[tuple[int, int]],
    ) -> torch.Tensor:
        """Logits [B, vocab] of one step: ``tokens`` and ``positions`` [B]; job j owns rows
        ``spans[j]`` (rows past the last span are padding: no cache, no attention)."""
        rows, d = tokens.shape[0], self.head_dim
        nq, nkv = self.heads * d, self.kv_heads * d
        n_kernel = 0  # the leading jobs whose attention is the kernel's
        if self.kernel is not None:
            while n_kernel < len(jobs) and jobs[n_kernel].KERNEL_ATTENTION:
                n_kernel += 1
        kernel_jobs, other_jobs = jobs[:n_kernel], jobs[n_kernel:]
        kernel_rows = spans[n_kernel - 1][1] if n_kernel else 0
        lengths = [job.cache.reserve_next() for job in kernel_jobs]
        sizes = [b - a for a, b in spans[n_kernel:]]
        pad = rows - kernel_rows - sum(sizes)
        padding = [self.embed.new_zeros(pad, 1, self.heads, d)] if pad else []
        if pad:
            sizes.append(pad)
        h = self.embed[tokens]
        cos, sin = self.rotary(h, positions[:, None])  # [B, 1, d]
        half = d // 2
        product = self.product
        for index, layer in enumerate(self.layers):
            qkv = product(self.norm(h, layer.norm1), layer.qkv)
            if layer.qkv_bias is not None:
                qkv += layer.qkv_bias
            # rotary on the q and k heads together: x * cos + rotate_half(x) * sin
            qk = qkv[:, : nq + nkv].view(rows, self.heads + self.kv_heads, d)
            rotated = torch.cat([-qk[..., half:], qk[..., :half]], dim=-1)
            qk = qk * cos + rotated * sin
            outs = []
            if kernel_jobs:
                out = self.kernel(
                    qk[:kernel_rows, : self.heads].contiguous(),
                    qk[:kernel_rows, self.heads :].contiguous(),
                    qkv[:kernel_rows, nq + nkv :].contiguous().view(kernel_rows, self.kv_heads, d),
                    [job.cache.keys[index] for job in kernel_jobs],
                    [job.cache.values[index] for job in kernel_jobs],
                    lengths,
                    layer.scaling,
                )
                outs.append(out[:, None])
            rest = qk[kernel_rows:]
            qs = rest[:, : self.heads, None, :].split(sizes)  # [rows_j, H, 1, d] per job
            ks = rest[:, self.heads :, None, :].split(sizes)
            vs = qkv[kernel_rows:, nq + nkv :].view(-1, self.kv_heads, 1, d).split(sizes)
            for job, q, k, v in zip(other_jobs, qs, ks, vs, strict=False):  # padding: no job
                keys, values = job.cache.update(k, v, index)
                outs.append(job.attend(layer.module, q, keys, values, scaling=layer.scaling)[0])
            attn = torch.cat(outs + padding).view(rows, nq)
            h += product(attn, layer.o)
            gate, up = product(self.norm(h, layer.norm2), layer.gate_up).chunk(2, -1)
            h += product(F.silu(gate, inplace=True).mul_(up), layer.down)
        for job in kernel_jobs:
            job.cache.lengths = [n + 1 for n in job.cache.lengths]
        return self.product(self.norm(h, self.final_norm), self.lm_head)
