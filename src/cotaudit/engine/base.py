"""The probe engine interface: three verbs every backend implements.

Tasks talk only to these verbs (like lm-evaluation-harness's ``LM``), so the same study runs on
Hugging Face transformers, MLX, an ``mlx_lm.server`` or any Inspect provider that honours
assistant prefill.

- ``generate``: a chat prompt -> a completion (text and the model's own token ids).
- ``continue_prefixes``: prompt + CoT tokens + cut positions + forced-answer tag -> k short
  answers per prefix. Prefix t is ``prompt ++ cot[:t] ++ tag``: prefixes are *cumulative*
  (position t always includes every CoT token before t, never a disjoint chunk). With an empty
  tag the k texts are continuations of the CoT itself from each cut (resampling).
- ``loglikelihood``: context + fixed continuation -> sum of log-probabilities (nats), token count
  and per-token values.
- ``score_answers``: prompt + CoT tokens + cut positions + tag + a tree of answer token paths ->
  per prefix, each path token's log-probability and the next-token mass of given token sets
  (teacher forcing: the forced-answer distribution read exactly, no sampling).
- ``vocabulary``: every token's text and the end-of-sequence ids (to classify tokens for
  ``score_answers``).

Engines that hold the model's tokenizer and chat template in this process (``hf-probe/``,
``mlx/``, the ``mlx-server/`` client) also implement :class:`LocalEngine`: prompt rendering,
the context length, n samples of one prompt, several continuations scored after one context.
Callers check for it with ``isinstance(engine, LocalEngine)``.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import threading
from collections.abc import Awaitable, Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, runtime_checkable

from cotaudit.engine.batcher import CALLER_GONE, DecodeJob

if TYPE_CHECKING:
    from cotaudit.engine.batcher import Scheduler, Stepper

Message = dict[str, str]
"""A chat message as ``{"role": "system" | "user" | "assistant", "content": str}``."""


@dataclass(frozen=True)
class Generation:
    """A completion: its text and the model's own token ids (empty if the backend has none)."""

    text: str
    token_ids: list[int] = field(default_factory=list)
    finish_reason: str = "stop"


@dataclass(frozen=True)
class PrefixRequest:
    """Force an answer after each cumulative prefix of a chain of thought.

    The model sees the chat prompt (``messages`` rendered with the generation prompt), then the
    assistant's CoT tokens ``cot_token_ids[:t]`` for each ``t`` in ``positions``, then the
    forced-answer ``tag``, and samples ``k`` continuations of at most ``max_tokens`` tokens.
    ``temperature == 0`` means greedy decoding (then the k answers are identical). An empty
    ``tag`` continues the CoT itself from each cut (:func:`cut_and_feed`).
    """

    messages: Sequence[Message]
    cot_token_ids: Sequence[int]
    positions: Sequence[int]
    tag: str
    k: int = 5
    max_tokens: int = 8
    temperature: float = 0.7
    seed: int = 0

    def __post_init__(self) -> None:
        if self.k <= 0:
            raise ValueError(f"PrefixRequest.k must be positive, got {self.k}")
        if self.max_tokens <= 0:
            raise ValueError(f"PrefixRequest.max_tokens must be positive, got {self.max_tokens}")
        if self.temperature < 0:
            raise ValueError(f"PrefixRequest.temperature must be >= 0, got {self.temperature}")
        n = len(self.cot_token_ids)
        bad = [t for t in self.positions if not 0 <= t <= n]
        if bad:
            raise ValueError(f"PrefixRequest.positions {bad} outside the CoT's 0..{n} tokens")


def cut_and_feed(
    sequence: Sequence[int], n_prompt: int, t: int, tag_ids: Sequence[int]
) -> tuple[int, list[int]]:
    """How a prefix ``prompt ++ cot[:t] ++ tag`` is read over a cache of ``sequence`` = prompt +
    CoT: (n, fed), the cache's first n positions and then the tokens ``fed`` (the first answer
    token is drawn from the logits after the last of them). With a tag: n = n_prompt + t and
    fed = the tag. With an empty tag (a continuation of the CoT itself from the cut): n =
    n_prompt + t - 1 and fed = [sequence[n]], the last token before the cut, fed again for its
    logits (a cache keeps keys and values, not logits)."""
    if tag_ids:
        return n_prompt + t, list(tag_ids)
    n = n_prompt + t - 1
    if n < 0:
        raise ValueError("a continuation needs at least one prompt token before the cut")
    return n, [sequence[n]]


@dataclass(frozen=True)
class AnswerTree:
    """Token paths after the forced-answer tag, as one tree: node i is token ``tokens[i]``
    following node ``parents[i]`` (-1: the root, the end of the tag). A parent comes before its
    children, so ``path(i)`` = the tokens from the root to node i."""

    tokens: tuple[int, ...] = ()
    parents: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        if len(self.tokens) != len(self.parents):
            raise ValueError("AnswerTree: tokens and parents differ in length")
        bad = [i for i, p in enumerate(self.parents) if not -1 <= p < i]
        if bad:
            raise ValueError(f"AnswerTree: nodes {bad} have a parent that does not precede them")

    def __len__(self) -> int:
        return len(self.tokens)

    def path(self, node: int) -> list[int]:
        """Token ids from the root to ``node`` (empty for the root, -1)."""
        out: list[int] = []
        while node >= 0:
            out.append(self.tokens[node])
            node = self.parents[node]
        return out[::-1]

    def depth(self, node: int) -> int:
        """Tokens from the root to ``node`` (0 for the root)."""
        return len(self.path(node))

    def suffix(self, n_tag: int, fed: Sequence[int]) -> tuple[list[list[bool]], list[int]]:
        """How a prefix's suffix, the tag's ``n_tag`` tokens and then the nodes ``fed`` (every
        ancestor of a node among them), is read in one pass: ``mask[i][j]``, whether suffix
        row i sees suffix row j (a tag token the tag up to itself; a node the whole tag, its
        ancestors and itself), and each row's position after the cut (tag token j at j, node
        i at n_tag - 1 + depth(i))."""
        row = {node: n_tag + j for j, node in enumerate(fed)}
        size = n_tag + len(fed)
        mask = [[j <= i for j in range(size)] for i in range(n_tag)]
        offsets = list(range(n_tag))
        for node in fed:
            seen = set(range(n_tag))
            ancestor = node
            while ancestor >= 0:
                seen.add(row[ancestor])
                ancestor = self.parents[ancestor]
            mask.append([j in seen for j in range(size)])
            offsets.append(n_tag - 1 + self.depth(node))
        return mask, offsets


@dataclass(frozen=True)
class AnswerScoreRequest:
    """Teacher-force a tree of answer paths after each cumulative prefix of a chain of thought.

    For each ``t`` in ``positions`` the model reads ``render(messages) ++ cot_token_ids[:t] ++
    tokenize(tag)`` and then the tree's paths. The forced-answer distribution is softmax(logits
    / ``temperature``) (the sampled estimator's own; > 0). ``reads`` are (node, set) pairs: the
    probability that the token after the path to ``node`` (-1: right after the tag) lies in
    ``token_sets[set]``. ``prune_below`` (an optimisation an engine may take): a branch from the
    root whose first token has probability below it at every prefix may be left unscored (its
    first token's log-probability is still read; its deeper nodes read -inf and their reads 0),
    and so may a node whose path has probability below it at one prefix, at that prefix; a sum
    over the tree loses less than ``prune_below`` per pruned branch and stays a lower bound."""

    messages: Sequence[Message]
    cot_token_ids: Sequence[int]
    positions: Sequence[int]
    tag: str
    tree: AnswerTree
    token_sets: Sequence[frozenset[int]]
    reads: Sequence[tuple[int, int]]
    temperature: float = 1.0
    prune_below: float = 0.0

    def __post_init__(self) -> None:
        if self.temperature <= 0:
            raise ValueError(f"AnswerScoreRequest.temperature must be > 0, got {self.temperature}")
        n = len(self.cot_token_ids)
        bad = [t for t in self.positions if not 0 <= t <= n]
        if bad:
            raise ValueError(f"AnswerScoreRequest.positions {bad} outside the CoT's 0..{n} tokens")
        nodes, sets = len(self.tree), len(self.token_sets)
        wrong = [r for r in self.reads if not (-1 <= r[0] < nodes and 0 <= r[1] < sets)]
        if wrong:
            raise ValueError(f"AnswerScoreRequest.reads {wrong} name no node or token set")

    @property
    def read_nodes(self) -> list[int]:
        """The nodes after which the next-token distribution is read, in order (-1: the root,
        right after the tag): every parent and every read's node."""
        return sorted(set(self.tree.parents) | {node for node, _ in self.reads})


@dataclass(frozen=True)
class AnswerScores:
    """One prefix's scores: ``node_logprobs[i]`` = log p(tokens[i] | prefix ++ tag ++
    path(parents[i])) in nats at the request's temperature, and ``read_masses[j]`` = p(next
    token in token_sets[s] | prefix ++ tag ++ path(node)) for reads[j] = (node, s)."""

    node_logprobs: list[float]
    read_masses: list[float]


@dataclass(frozen=True)
class Vocabulary:
    """Every token's text as decoded alone (``texts[id]``; special tokens decode to "") and the
    ids that end a generation."""

    texts: tuple[str, ...]
    eos_ids: frozenset[int]


@dataclass(frozen=True)
class LoglikResult:
    """log p(continuation | context) = sum_i log p(c_i | context, c_<i), in nats."""

    sum_logprob: float
    n_tokens: int
    token_logprobs: list[float]
    tokens: list[str] = field(default_factory=list)

    @classmethod
    def summed(cls, token_logprobs: list[float], tokens: list[str]) -> LoglikResult:
        """The result of a continuation whose tokens ``tokens`` have log-probabilities
        ``token_logprobs``: their sum and their count."""
        return cls(float(sum(token_logprobs)), len(token_logprobs), token_logprobs, tokens)

    @property
    def mean_logprob(self) -> float:
        """Per-token form: sum_logprob / n_tokens."""
        return self.sum_logprob / self.n_tokens if self.n_tokens else float("nan")


@runtime_checkable
class ProbeEngine(Protocol):
    """What every backend implements. All verbs are async so Inspect can run samples together."""

    def tokenize(self, text: str) -> list[int]:
        """Token ids of ``text`` with no special tokens added."""
        ...

    def detokenize(self, token_ids: Sequence[int]) -> str:
        """Text of ``token_ids``."""
        ...

    async def generate(
        self,
        messages: Sequence[Message],
        *,
        max_tokens: int,
        temperature: float = 0.0,
        seed: int = 0,
    ) -> Generation:
        """Complete the chat ``messages`` (a final assistant message is continued)."""
        ...

    async def continue_prefixes(self, request: PrefixRequest) -> list[list[str]]:
        """For each position in ``request.positions`` (in order), the k answer texts."""
        ...

    async def loglikelihood(self, context: Sequence[Message], continuation: str) -> LoglikResult:
        """Score ``continuation`` as the assistant's reply to ``context`` (chat-rendered)."""
        ...

    async def score_answers(self, request: AnswerScoreRequest) -> list[AnswerScores]:
        """For each position in ``request.positions`` (in order), the tree's scores; raises
        :class:`EngineCapabilityError` where the backend cannot read probabilities."""
        ...

    def vocabulary(self) -> Vocabulary:
        """The tokenizer's token texts and end-of-sequence ids."""
        ...


@runtime_checkable
class LocalEngine(ProbeEngine, Protocol):
    """A :class:`ProbeEngine` that renders prompts itself, so callers can count prompt tokens,
    fit a CoT to the context and batch requests of one prompt."""

    @property
    def context_length(self) -> int | None:
        """The model's maximum sequence length in tokens; None when not known here (left to
        the model or server)."""
        ...

    def render(self, messages: Sequence[Message]) -> list[int]:
        """Prompt ids of ``messages`` with the chat template: the generation prompt, or
        continuing a final assistant message (prefill)."""
        ...

    async def generate_n(
        self, messages: Sequence[Message], *, max_tokens: int, temperature: float, seed: int, n: int
    ) -> list[Generation]:
        """``n`` samples of the same prompt, decoded together."""
        ...

    async def loglikelihood_many(
        self, context: Sequence[Message], continuations: Sequence[str]
    ) -> list[LoglikResult]:
        """``loglikelihood`` of each continuation after ``context`` (prefilled once)."""
        ...


T = TypeVar("T")


class GenerateFromN:
    """``generate`` of an engine that samples a prompt ``n`` times at once (``generate_n``):
    the one completion of ``generate_n`` with n = 1."""

    generate_n: Callable[..., Awaitable[list[Generation]]]

    async def generate(
        self,
        messages: Sequence[Message],
        *,
        max_tokens: int,
        temperature: float = 0.0,
        seed: int = 0,
    ) -> Generation:
        gens = await self.generate_n(
            messages, max_tokens=max_tokens, temperature=temperature, seed=seed, n=1
        )
        return gens[0]


class SyncVerbs(GenerateFromN):
    """The async verbs of an in-process engine, each running its blocking counterpart
    (``generate_sync``, ``continue_prefixes_sync``, ``loglikelihood_many_sync``,
    ``score_answers_sync``) through
    ``_run``: a waiting thread that hands the model work to the engine's worker
    (``_scheduler``), where concurrent samples' decode jobs batch together
    (:mod:`cotaudit.engine.batcher`). The engine calls :meth:`_start_worker` when built, and
    sets ``_stepper`` (its decode step) and ``_generate_job`` (its :class:`GenerationJob`)."""

    continue_prefixes_sync: Callable[[PrefixRequest], list[list[str]]]
    loglikelihood_many_sync: Callable[..., list[LoglikResult]]
    score_answers_sync: Callable[[AnswerScoreRequest], list[AnswerScores]]
    _scheduler: Scheduler
    _waiters: ThreadPoolExecutor
    _stepper: Stepper
    _generate_job: type[GenerationJob]

    def _start_worker(self, scheduler: Scheduler, name: str) -> None:
        """Run the model work on ``scheduler``; wait for it from threads named ``name-wait``."""
        self._scheduler = scheduler
        self._waiters = ThreadPoolExecutor(max_workers=256, thread_name_prefix=f"{name}-wait")

    @property
    def max_batch_rows(self) -> int:
        """Rows decoding together (1 for a model that does not batch)."""
        return self._stepper.max_rows

    def generate_sync(
        self,
        messages: Sequence[Message],
        max_tokens: int,
        temperature: float,
        seed: int,
        n: int = 1,
    ) -> list[Generation]:
        """``n`` completions of ``messages``, decoded in the running batch (a job)."""
        job = self._generate_job(self._stepper, messages, max_tokens, temperature, seed, n)
        return self._scheduler.run([job])[0]

    async def _run(self, fn: Callable[..., T], *args: Any) -> T:
        """``fn(*args)`` (a ``*_sync`` method) in a waiting thread: it hands its model work to
        the worker and waits there, so concurrent samples' decode jobs batch together. When
        the awaiting sample is cancelled (Ctrl-C, a time limit), the work it handed over is
        dropped at the next decode step (:data:`cotaudit.engine.batcher.CALLER_GONE`)."""
        loop = asyncio.get_running_loop()
        gone = threading.Event()
        context = contextvars.copy_context()
        context.run(CALLER_GONE.set, gone)
        call = functools.partial(context.run, fn, *args)
        try:
            return await loop.run_in_executor(self._waiters, call)
        except asyncio.CancelledError:
            gone.set()
            raise

    async def generate_n(
        self, messages: Sequence[Message], *, max_tokens: int, temperature: float, seed: int, n: int
    ) -> list[Generation]:
        """``n`` samples of the same prompt, decoded together."""
        return await self._run(self.generate_sync, messages, max_tokens, temperature, seed, n)

    async def continue_prefixes(self, request: PrefixRequest) -> list[list[str]]:
        return await self._run(self.continue_prefixes_sync, request)

    async def loglikelihood(self, context: Sequence[Message], continuation: str) -> LoglikResult:
        results = await self._run(self.loglikelihood_many_sync, context, [continuation])
        return results[0]

    async def loglikelihood_many(
        self, context: Sequence[Message], continuations: Sequence[str]
    ) -> list[LoglikResult]:
        """Score several continuations of one context; the context is prefilled once."""
        return await self._run(self.loglikelihood_many_sync, context, continuations)

    async def score_answers(self, request: AnswerScoreRequest) -> list[AnswerScores]:
        return await self._run(self.score_answers_sync, request)


class GenerationJob(DecodeJob):
    """The decode job of :meth:`SyncVerbs.generate_sync`: ``n`` completions of a chat prompt,
    ``args`` = (messages, max_tokens, temperature, seed). The engine's subclass prefills the
    prompt and picks the first tokens in ``start``; its decoder's ``tokens`` are the rows'
    token ids and ``stopped`` whether each row stopped at an end-of-sequence token."""

    def __init__(
        self,
        stepper: Any,
        messages: Sequence[Message],
        max_tokens: int,
        temperature: float,
        seed: int,
        n: int,
    ) -> None:
        super().__init__(stepper)
        self.args = (messages, max_tokens, temperature, seed)
        self.rows = n

    def result(self) -> list[Generation]:
        """One :class:`Generation` per row: its text, its token ids, and ``stop`` where the row
        stopped at an end-of-sequence token (``max_tokens`` otherwise)."""
        detokenize = self.engine.detokenize
        return [
            Generation(
                text=detokenize(ids), token_ids=ids, finish_reason="stop" if done else "max_tokens"
            )
            for ids, done in zip(self.decoder.tokens, self.decoder.stopped, strict=True)
        ]


def seed_for(*parts: int) -> int:
    """A 63-bit seed mixed from integers (splitmix64), stable across processes."""
    x = 0x9E3779B97F4A7C15
    for p in parts:
        x = (x ^ (int(p) & 0xFFFFFFFFFFFFFFFF)) * 0xBF58476D1CE4E5B9 & 0xFFFFFFFFFFFFFFFF
        x = (x ^ (x >> 31)) * 0x94D049BB133111EB & 0xFFFFFFFFFFFFFFFF
    return x >> 1


SCORING_BACKENDS = "hf-probe/ and mlx/"
"""The providers whose engines score a fixed continuation in-process (named in errors)."""


class EngineCapabilityError(RuntimeError):
    """A backend cannot perform a verb (e.g. ``loglikelihood`` over a server with no prompt
    log-probabilities). The message names the backends that can."""
