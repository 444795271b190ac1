"""How a probe forces answers after each prefix and how it resamples continuations: the options
every probe's solver reads whole (:class:`ForcedAnswers`, :class:`Continuations`), built once
from a task's settings."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar, Literal

from pydantic import BaseModel, ConfigDict

from cotaudit.params import ParameterError
from cotaudit.probing.exact import Estimator, samples


class ForcedAnswers(BaseModel):
    """The forced answers at each cut: after ``prompt ++ prefix ++ tag`` (``tag`` after the
    think block's closing text inside one), ``k`` answers of at most ``max_tokens`` tokens at
    ``temperature`` (0 = greedy), seeded with the sample's seed (``seed`` mixed with the sample
    id; every prompt of a sample shares it: common random numbers). ``estimator``: ``sampled``
    draws the k answers, ``exact`` reads the probability that an answer parses to the reference
    by teacher forcing (at :func:`~cotaudit.probing.exact.exact_temperature` of
    ``temperature``) and draws none, ``both`` does both. ``tokenizer``: the tokenizer of token
    positions on providers without their own engine (None: the provider's)."""

    model_config = ConfigDict(frozen=True)

    tag: str
    k: int
    temperature: float
    max_tokens: int
    seed: int = 0
    tokenizer: str | None = None
    estimator: Estimator = "sampled"


class Continuations(BaseModel):
    """The resampling of a CoT from its sentence cuts: c_0 = 0 and at most ``max_cuts`` sentence
    ends (evenly spread, the CoT's end kept); from each cut ``n`` continuations to the CoT's end
    at ``temperature``, each of at most ``max_tokens`` minus the tokens before the cut (None:
    the run's ``max_tokens``, else the resampling probe's default); r(t) is the share whose final
    answer equals ``reference``: the CoT's own (``own``) or the sample's target (``gold``)."""

    model_config = ConfigDict(frozen=True)

    n: int
    temperature: float
    max_tokens: int | None
    max_cuts: int
    reference: Literal["own", "gold"] = "own"


class ForcesAnswers:
    """A task's settings whose probe forces answers: :meth:`forced_answers` reads them from the
    task's parameters ``forced_answer_tag``, ``answer_max_tokens``, ``seed``, ``tokenizer``,
    ``estimator`` (``sampled`` for a task without one), k (:meth:`answers_per_cut`: the task's
    ``k`` unless it names it otherwise) and the forced answers' temperature
    (:meth:`answer_temperature`: its ``temperature`` unless it names it otherwise);
    :meth:`refuse_greedy_copies` checks them for k copies of one greedy answer."""

    if TYPE_CHECKING:
        forced_answer_tag: str
        answer_max_tokens: int
        seed: int
        tokenizer: str | None
        k: int
        temperature: float

    GREEDY_COPIES_ERROR: ClassVar[str]
    """The task's one-line error for k > 1 forced answers at temperature 0, ``{k}`` its k
    (:meth:`refuse_greedy_copies` raises it)."""

    def answers_per_cut(self) -> int:
        """k, the answers forced at each cut: the task's ``k``."""
        return self.k

    def answer_temperature(self) -> float:
        """The forced answers' temperature: the task's ``temperature``."""
        return self.temperature

    def forced_answers(self) -> ForcedAnswers:
        """The task's forced answers (see the class)."""
        return ForcedAnswers(
            tag=self.forced_answer_tag,
            k=self.answers_per_cut(),
            temperature=self.answer_temperature(),
            max_tokens=self.answer_max_tokens,
            seed=self.seed,
            tokenizer=self.tokenizer,
            estimator=getattr(self, "estimator", "sampled"),
        )

    def refuse_greedy_copies(self) -> None:
        """Raise :data:`GREEDY_COPIES_ERROR` (its ``{k}`` the task's k) as a
        :class:`~cotaudit.params.ParameterError` when the task samples k > 1 forced answers at
        temperature 0: k copies of one greedy answer (an exact-only run samples none)."""
        forced = self.forced_answers()
        if forced.k > 1 and forced.temperature == 0 and samples(forced.estimator):
            raise ParameterError(self.GREEDY_COPIES_ERROR.format(k=forced.k))
