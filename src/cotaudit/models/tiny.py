"""A tiny randomly initialised Llama model with a chat template, built locally in seconds.

For fast mechanical tests of the model path (cache reuse, prefill, log-likelihood): a byte-level
BPE tokenizer trained on the vendored GSM8K text (vocab 4096) and a 4-layer, hidden-256 Llama
(~4.2M parameters) with fixed-seed weights. ``mlx_lm.load`` reads the same folder as is.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from cotaudit.datasets.gsm8k import vendored_path
from cotaudit.models.default import cache_dir
from cotaudit.models.folders import staged_folder

TINY_MODEL_NAME = "tiny-random-llama"
CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "<|im_start|>{{ message['role'] }}\n{{ message['content'] }}"
    "{% if not (loop.last and message['role'] == 'assistant' and continue_final_message) %}"
    "<|im_end|>\n{% endif %}"
    "{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


TINY_THINK_MODEL_NAME = "tiny-random-llama-think"
THINK_CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "<|im_start|>{{ message['role'] }}\n{{ message['content'] }}"
    "{% if not (loop.last and message['role'] == 'assistant' and continue_final_message) %}"
    "<|im_end|>\n{% endif %}"
    "{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n<think>\n{% endif %}"
)
"""The tiny model's template, but the generation prompt opens a think block (as reasoning
models' templates do): the response starts inside ``<think>`` and closes it with ``</think>``."""


def tiny_model_path(seed: int = 0) -> Path:
    """The tiny model folder under the cache, built on first use."""
    return _cached_build(f"{TINY_MODEL_NAME}-{seed}", seed=seed, think=False)


def tiny_think_model_path(seed: int = 0) -> Path:
    """The tiny think-block model (``<think>``/``</think>`` as added tokens, generation prompt
    ending in ``<think>``), built on first use; same weights recipe as :func:`tiny_model_path`."""
    return _cached_build(f"{TINY_THINK_MODEL_NAME}-{seed}", seed=seed, think=True)


def _cached_build(name: str, *, seed: int, think: bool) -> Path:
    target = cache_dir() / "models" / name
    if (target / "config.json").exists():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=target.parent, prefix=".build-"))
    with staged_folder(target, staging):
        build_tiny_model(staging, seed=seed, think=think)
    return target


def build_tiny_model(
    out: Path, *, seed: int = 0, vocab_size: int = 4096, think: bool = False
) -> None:
    """Train the tokenizer and write the randomly initialised model to ``out``; ``think`` adds
    ``<think>`` and ``</think>`` as (non-special) tokens and :data:`THINK_CHAT_TEMPLATE`."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    specials = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=specials,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    text = vendored_path().read_text(encoding="utf-8").splitlines()
    tok.train_from_iterator(text, trainer=trainer)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        bos_token="<|im_start|>",
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        unk_token="<|endoftext|>",
    )
    fast.chat_template = CHAT_TEMPLATE
    if think:
        fast.add_tokens(["<think>", "</think>"])
        fast.chat_template = THINK_CHAT_TEMPLATE
    config = LlamaConfig(
        vocab_size=len(fast) if think else tok.get_vocab_size(),
        hidden_size=256,
        intermediate_size=688,
        num_hidden_layers=4,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=4096,
        bos_token_id=fast.bos_token_id,
        eos_token_id=fast.eos_token_id,
        pad_token_id=fast.pad_token_id,
        tie_word_embeddings=True,
    )
    torch.manual_seed(seed)
    model = LlamaForCausalLM(config)
    model.save_pretrained(out)
    fast.save_pretrained(out)
