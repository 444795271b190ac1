"""Find the probe engine behind the active Inspect model."""

from __future__ import annotations

from inspect_ai.model import Model, ModelOutput
from inspect_ai.solver import TaskState

from cotaudit.engine.base import ProbeEngine, seed_for

TOKEN_IDS_KEY = "token_ids"
"""``ModelOutput.metadata`` key under which the local providers return each choice's token ids
(:mod:`cotaudit.providers._local`)."""

_generic_engines: dict[tuple[int, str | None], ProbeEngine] = {}


def probe_engine(model: Model, tokenizer: str | None = None) -> ProbeEngine:
    """The model's own engine (``hf-probe/``, ``mlx/``, ``mlx-server/``: ``api.probe_engine``),
    else the generic prefill engine over Inspect's ``generate`` (``vllm/``, ``sglang/``...)."""
    engine = getattr(model.api, "probe_engine", None)
    if engine is not None:
        return engine
    if model.api.model_name in ("none", "") or type(model.api).__name__ == "NoModel":
        raise RuntimeError(
            "no model given: pass --model (for the embedded default, --model hf-probe/default)"
        )
    key = (id(model.api), tokenizer)
    if key not in _generic_engines:  # one tokenizer load per model, not per sample
        from cotaudit.engine.inspect_prefill import InspectPrefillEngine

        _generic_engines[key] = InspectPrefillEngine.for_model(model, tokenizer)
    return _generic_engines[key]


def sample_seed(seed: int, sample_id: object, epoch: int = 1) -> int:
    """The probe seed of one sample in one epoch: ``seed`` mixed with its id and, from the
    second epoch on, the epoch (independent of run order). Epoch 1 has the seed of a one-epoch
    run, so ``--epochs N`` repeats the one-epoch run and adds N - 1 differently seeded ones."""
    parts = [seed, *(ord(ch) for ch in str(sample_id))]
    return seed_for(*parts, *([epoch] if epoch > 1 else []))


def state_seed(seed: int, state: TaskState, *, per_epoch: bool = False) -> int:
    """The probe seed of a sample's state: :func:`sample_seed` of its id and, with
    ``per_epoch``, its epoch (else every epoch has the seed of epoch 1)."""
    return sample_seed(seed, state.sample_id, state.epoch if per_epoch else 1)


def completion_token_ids(output: ModelOutput, engine: ProbeEngine) -> list[int]:
    """The completion's own token ids when the provider returned them (``hf-probe/``, ``mlx/``,
    ``mlx-server/``), else the engine's tokenisation of its text."""
    ids_by_choice = (output.metadata or {}).get(TOKEN_IDS_KEY)
    return list(ids_by_choice[0]) if ids_by_choice else engine.tokenize(output.completion)
