"""Shared parts of the providers: Inspect ``generate`` over a probe engine (in-process for
``hf-probe/`` and ``mlx/``, a client for ``mlx-server/``), their model args, and the model names
they take (aliases, folders, hub ids)."""

from __future__ import annotations

import abc
import logging
import threading
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, ClassVar

from inspect_ai.model import (
    ChatCompletionChoice,
    ChatMessage,
    ChatMessageAssistant,
    GenerateConfig,
    ModelAPI,
    ModelOutput,
    ModelUsage,
)
from inspect_ai.tool import ToolChoice, ToolInfo

from cotaudit.engine.base import LocalEngine, Message
from cotaudit.engine.chat import to_plain
from cotaudit.params import nearest_name
from cotaudit.prerequisite import InputErrorReport

DEFAULT_MAX_TOKENS = 1024

logger = logging.getLogger(__name__)


MODEL_ALIASES = ("default", "tiny", "tiny-think")
"""Model names the local providers resolve themselves: the embedded SmolLM2-135M-Instruct, the
tiny random model for mechanical tests, and the tiny model with a think-block chat template."""

HUB_LOOKUP_TIMEOUT = 10.0
"""Seconds one look-up of a hub id may take before the hub counts as unreachable."""


class ModelNameError(InputErrorReport):
    """A model name that names no model: Inspect prints the one line, without a traceback."""


class ModelArgError(InputErrorReport, ValueError):
    """An invalid or unknown ``-M`` model arg: Inspect prints the one line, without a
    traceback."""


def resolve_model_path(model_name: str, label: str = "hf-probe/") -> str:
    """The folder of an alias (:data:`MODEL_ALIASES`, built or converted on first use); any
    other name is checked (:func:`check_model_name`; ``label`` names where it was given) and
    passed through."""
    check_model_name(model_name, label)
    return alias_path(model_name)


def alias_path(model_name: str) -> str:
    """The folder of an alias (:data:`MODEL_ALIASES`, built or converted on first use); any
    other name as given (checked beforehand by :func:`check_model_name`)."""
    if model_name == "default":
        from cotaudit.models.default import default_model_path

        return str(default_model_path())
    if model_name == "tiny":
        from cotaudit.models.tiny import tiny_model_path

        return str(tiny_model_path())
    if model_name == "tiny-think":
        from cotaudit.models.tiny import tiny_think_model_path

        return str(tiny_think_model_path())
    return model_name


def check_model_name(model_name: str, label: str = "hf-probe/") -> None:
    """Raise :class:`ModelNameError` at once unless ``model_name`` is an alias, a local folder
    or a loadable hub id; the message starts with ``label + model_name`` ("hf-probe/x").

    A hub id (``owner/name`` or ``name``) is loadable when it is in the local Hugging Face cache,
    or else when the hub, asked once with a :data:`HUB_LOOKUP_TIMEOUT` timeout, knows it
    (gated repositories count; an answer other than "not found", 404, or "unauthorised", 401,
    which the hub answers for a missing or private repository, is left to the loader). With
    ``HF_HUB_OFFLINE`` set only the cache counts. A name of another shape is no hub id. A name
    near an alias (:func:`cotaudit.params.nearest_name`: ``defualt``) is told that alias. A
    LoRA adapter folder (``adapter_config.json``, :mod:`cotaudit.models.adapters`) is
    loadable when the base it names is: a model folder, or a hub id checked as above.
    """
    if model_name in MODEL_ALIASES:
        return
    problem = _name_problem(model_name)
    if problem is not None:
        aliases = ", ".join(MODEL_ALIASES)
        near = nearest_name(model_name, MODEL_ALIASES)
        hint = f" Did you mean {label}{near}?" if near else ""
        raise ModelNameError(
            f"{label}{model_name}: no such model ({problem}).{hint} Give a model folder, a "
            f"Hugging Face hub id (owner/name) or an alias: {aliases}."
        )


def _name_problem(name: str) -> str | None:
    """Why ``name`` is neither a local folder nor a loadable hub id (None: it is one)."""
    path = Path(name).expanduser()
    if path.is_dir():
        from cotaudit.models.adapters import (
            adapter_base,
            adapter_base_problem,
            is_adapter_folder,
        )

        if is_adapter_folder(path):
            problem = adapter_base_problem(path)
            if problem is None and not Path(base := adapter_base(path)).expanduser().exists():
                hub = _name_problem(base)
                problem = None if hub is None else f"the adapter's base model: {hub}"
            return problem
        if any((path / f).is_file() for f in _MODEL_FILES):
            return None
        return f"the folder {name} has no {' or '.join(_MODEL_FILES)}"
    if path.exists():
        return f"{name} is a file, not a model folder"
    from huggingface_hub import constants, try_to_load_from_cache
    from huggingface_hub.errors import (
        GatedRepoError,
        HfHubHTTPError,
        HFValidationError,
        RepositoryNotFoundError,
    )
    from huggingface_hub.utils import validate_repo_id

    try:
        validate_repo_id(name)
    except HFValidationError:
        return "not a local folder, nor a hub id"
    if any(isinstance(try_to_load_from_cache(name, f), str) for f in _MODEL_FILES):
        return None
    if constants.HF_HUB_OFFLINE:
        return "not a local folder, nor in the local Hugging Face cache, and HF_HUB_OFFLINE is set"
    from huggingface_hub import HfApi

    try:
        HfApi().model_info(name, timeout=HUB_LOOKUP_TIMEOUT)
    except GatedRepoError:
        return None
    except HfHubHTTPError as e:
        status = getattr(e.response, "status_code", None)
        if not (isinstance(e, RepositoryNotFoundError) or status in (401, 404)):
            return None  # the hub answered otherwise (a server error): the loader retries
        return (
            f"not a local folder, and the hub {constants.ENDPOINT} answers {status} for it: no "
            "such model, or a private one needing `hf auth login`"
        )
    except Exception as e:  # noqa: BLE001 - only an unreachable hub stops the run here
        if not _is_transport_error(e):
            return None  # anything else is the loader's to report
        return (
            "not a local folder, nor in the local Hugging Face cache, and the hub "
            f"{constants.ENDPOINT} cannot be reached to look it up: {type(e).__name__}"
        )
    return None


_MODEL_FILES = ("config.json", "tokenizer_config.json")
"""A model folder (or a tokenizer's, for ``mlx-server/``) has one of these files; a hub id counts
as cached when one of them is in the local Hugging Face cache."""


def _is_transport_error(e: BaseException) -> bool:
    """A connection failure or timeout (OSError and TimeoutError, or httpx's TransportError)."""
    return isinstance(e, (OSError, TimeoutError)) or any(
        c.__name__ == "TransportError" for c in type(e).__mro__
    )


def check_model_args(backend: str, model_args: Iterable[str], known: Sequence[str]) -> None:
    """Raise :class:`ModelArgError` naming the ``model_args`` that are not in ``known`` (and
    the known ones), if there are any."""
    unknown = sorted(set(model_args) - set(known))
    if unknown:
        raise ModelArgError(f"{backend}: unknown model args {unknown}; known: {', '.join(known)}")


def bool_arg(name: str, value: Any) -> bool:
    """A ``-M name=true|false`` model arg as a bool (a clear error otherwise)."""
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("true", "1", "yes"):
        return True
    if text in ("false", "0", "no"):
        return False
    raise ModelArgError(f"{name} must be true or false, got {value!r}")


def batch_rows_arg(value: Any) -> int:
    """``-M max_batch_rows=N`` as a positive int (a clear error otherwise)."""
    try:
        rows = int(value)
    except (TypeError, ValueError):
        rows = 0
    if rows < 1 or isinstance(value, bool) or (isinstance(value, float) and value != rows):
        raise ModelArgError(f"max_batch_rows must be a positive integer, got {value!r}")
    return rows


def completion_output(
    model_name: str, completions: Sequence[Any], prompt_tokens: int, **metadata: Any
) -> ModelOutput:
    """An Inspect ModelOutput with one choice per completion (objects with ``text``,
    ``finish_reason`` and ``token_ids``); the token ids go in ``metadata["token_ids"]``."""
    completion_tokens = sum(len(c.token_ids) for c in completions)
    return ModelOutput(
        model=model_name,
        choices=[
            ChatCompletionChoice(
                message=ChatMessageAssistant(content=c.text, model=model_name, source="generate"),
                stop_reason="stop" if c.finish_reason == "stop" else "max_tokens",
            )
            for c in completions
        ],
        usage=ModelUsage(
            input_tokens=prompt_tokens,
            output_tokens=completion_tokens,
            total_tokens=prompt_tokens + completion_tokens,
        ),
        metadata={"token_ids": [c.token_ids for c in completions], **metadata},
    )


class EngineAPI(ModelAPI):
    """A provider whose chat generation is its probe engine's: the messages as plain text
    turns, ``num_choices`` completions of them (:meth:`complete`), returned as the choices of
    one :func:`completion_output` whose metadata names the ``backend`` (a class attribute).

    Inspect builds it with its provider arguments and the ``-M`` model args as keywords; the
    model args are checked against ``model_arg_names`` (a class attribute) and then given to
    :meth:`start`, which declares each one with its default."""

    backend: ClassVar[str]
    model_arg_names: ClassVar[Sequence[str]]
    """The ``-M`` model args the provider takes: the keywords of its :meth:`start`."""

    def __init__(
        self,
        model_name: str,
        base_url: str | None = None,
        api_key: str | None = None,
        config: GenerateConfig = GenerateConfig(),
        **model_args: Any,
    ) -> None:
        """Start the provider (:meth:`start`) once its ``model_args`` are all known
        (:func:`check_model_args`)."""
        check_model_args(self.backend, model_args, self.model_arg_names)
        super().__init__(model_name=model_name, base_url=base_url, api_key=api_key, config=config)
        self.start(**model_args)

    @abc.abstractmethod
    def start(self, *args: Any, **model_args: Any) -> None:
        """Check the model name and the ``-M`` model args (each a keyword with its default) and
        set up the engine."""

    def max_tokens(self) -> int | None:
        return DEFAULT_MAX_TOKENS

    @abc.abstractmethod
    async def complete(
        self, messages: list[Message], *, max_tokens: int, temperature: float, seed: int, n: int
    ) -> tuple[Sequence[Any], int, dict[str, Any]]:
        """``n`` completions of ``messages`` (objects with ``text``, ``finish_reason`` and
        ``token_ids``), the prompt's token count, and further output metadata."""

    async def generate(
        self,
        input: list[ChatMessage],
        tools: list[ToolInfo],
        tool_choice: ToolChoice,
        config: GenerateConfig,
    ) -> ModelOutput:
        completions, prompt_tokens, metadata = await self.complete(
            to_plain(input),
            max_tokens=config.max_tokens or DEFAULT_MAX_TOKENS,
            temperature=config.temperature or 0.0,
            seed=config.seed or 0,
            n=config.num_choices or 1,
        )
        return completion_output(
            self.model_name, completions, prompt_tokens, backend=self.backend, **metadata
        )


_ENGINE_LOAD = threading.Lock()
"""Held while a local provider loads its engine."""


class LocalEngineAPI(EngineAPI):
    """A provider whose ``probe_engine`` runs in this process.

    Plain chat generation continues a final assistant message (prefill); ``num_choices``
    samples come back as choices of one batch; the CoT's own token ids are returned in
    ``ModelOutput.metadata["token_ids"]`` (one list per choice) for the probes.
    Subclasses set ``load_engine`` (a function returning the engine) in :meth:`start`, after
    checking the model name and model args: the weights load on the first use of
    :attr:`probe_engine` (the first generate or probe call), not when the provider starts, so
    a task's parameters are checked before any model loads.
    """

    load_engine: Callable[[], LocalEngine]
    _engine: LocalEngine | None = None

    @property
    def probe_engine(self) -> LocalEngine:
        """The engine, loaded on first use (one load at a time in the process: concurrent first
        uses wait for the one load)."""
        engine = self._engine
        if engine is None:
            with _ENGINE_LOAD:
                if self._engine is None:
                    logger.info(f"{self.backend}/{self.model_name}: loading the model")
                    self._engine = self.load_engine()
                engine = self._engine
        return engine

    def max_connections(self) -> int:
        # One model in this process: requests queue on the engine's worker thread, where
        # concurrent samples' decode jobs batch together (up to the engine's max_batch_rows).
        return 32

    async def complete(
        self, messages: list[Message], *, max_tokens: int, temperature: float, seed: int, n: int
    ) -> tuple[Sequence[Any], int, dict[str, Any]]:
        """``n`` samples decoded together by the engine."""
        gens = await self.probe_engine.generate_n(
            messages, max_tokens=max_tokens, temperature=temperature, seed=seed, n=n
        )
        return gens, len(self.probe_engine.render(messages)), {}
