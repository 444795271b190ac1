"""The spread of a validation's numbers across training seeds, beside their spread across
problems (pure; no model, no log).

**Seed groups.** An organism checkpoint is trained by a *recipe* and a *seed*: the recipe is
what :mod:`cotaudit.validation.protocol` compares a control with (the training settings of
:data:`~cotaudit.validation.protocol.RECIPE_SETTINGS` without ``seed``, the training rows, the
number of examples, the base model as resolved, the method: :func:`recipe_of`), the seed is
``settings.seed`` of its card (the order the examples are drawn in, and the initial values of
whatever the training initialises, a LoRA adapter's). Runs of one study that read the same
dataset rows, on checkpoints of the same organism (name, and whether it is a negative control)
at the same step trained by the same recipe, form one *seed group*: they differ only in the
seed. A base model (no card) has no seed and forms none. A seed that two runs of a group share
(a study run twice on one checkpoint) is read from the first run given; the others are named
as left out.

**Quantities** (:class:`Quantity`), one summary per group and quantity
(:func:`seed_summaries`):

- ``auroc``: a statistic's detection AUROC (a probe statistic's, or a text baseline's), with
  its 95% interval over problems (:mod:`cotaudit.validation.intervals`);
- ``difference``: a probe statistic's AUROC minus the best text baseline's on the same samples
  (the best baseline chosen on each seed's run, so it may differ between seeds), with its
  paired 95% interval over problems;
- ``shortcut_rate``: ``taken / n`` of the run's wrong-cue samples, with Wilson's 95% score
  interval (:func:`wilson_interval`; the wrong-cue samples are one per problem in selfcommit and
  trace_tutor, so the interval is one over problems).

**Across seeds** (:func:`spread`): with ``x_1 .. x_n`` the seeds' values that are measured (a
seed whose run has no value is listed and left out of these)::

    mean  = (1/n) sum_s x_s
    range = [min_s x_s, max_s x_s]
    SD    = sqrt( sum_s (x_s - mean)^2 / (n - 1) )     (the sample SD; none for n < 2)

With one seed there is no spread across seeds (:data:`ONE_SEED`): the number is one training
run's, and how much another seed would move it is unknown.

**Across problems**: the median over seeds of each seed's 95% interval width ``high_s - low_s``
(seeds without an interval, fewer than two problems per class, left out), and the standard
error a normal interval of that width has, ``SE ~ width / (2 z)``, ``z = Phi^-1(0.975) =
1.96``, to set beside the SD (the intervals are score-type and may be skewed: the SE is a
reading aid, not an estimate). The median of the per-seed widths is chosen over the interval of
an estimate pooled over seeds: the seeds' runs read the same problems, so their samples are no
independent draws of problems, and a pooled interval would need a bootstrap over problems of
every seed at once and would mix the two sources of variation. The median width is the problem
sampling uncertainty of one seed's number, the thing the SD across seeds is read against: an SD
well below the SE, the seed moves the number less than the choice of problems does; an SD near
or above it, one seed's number is not the organism's, and the mean over seeds (with the SD) is
the one to report. Both are read on the same problems, so the SD across seeds holds the
training variation only, not the problems'.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from statistics import NormalDist
from typing import Any, Literal

from cotaudit.organisms.card import OrganismCard
from cotaudit.validation.protocol import recipe

CONFIDENCE = 0.95
"""The confidence of every per-seed interval over problems."""
Z = NormalDist().inv_cdf((1 + CONFIDENCE) / 2)
"""``Phi^-1(0.975)``: a normal 95% interval is ``2 Z`` standard errors wide."""
MIN_INTERVAL_N = 2
"""A shortcut rate on fewer wrong-cue samples (problems) than this has no interval."""
ONE_SEED = "1 seed: no spread across seeds"
"""What a summary of one measured seed says in place of its spread across seeds."""

Kind = Literal["auroc", "difference", "shortcut_rate"]


@dataclass(frozen=True)
class Quantity:
    """What a summary is of: ``kind`` (module docstring) and, for ``auroc`` and
    ``difference``, the statistic's name and whether it is a text baseline."""

    kind: Kind
    statistic: str | None = None
    baseline: bool = False

    @property
    def label(self) -> str:
        """The quantity in words: ``tau_0.8 AUROC``, ``length (baseline) AUROC``, ``tau_0.8 −
        best baseline``, ``shortcut rate`` (the statistic's name as given: escape it where it
        is shown)."""
        if self.kind == "shortcut_rate":
            return "shortcut rate"
        name = f"{self.statistic} (baseline)" if self.baseline else str(self.statistic)
        return f"{name} AUROC" if self.kind == "auroc" else f"{name} − best baseline"


SHORTCUT_RATE = Quantity("shortcut_rate")


@dataclass(frozen=True)
class SeedValue:
    """One seed's value of a quantity: its estimate (NaN: not measured), the bounds of its 95%
    interval over problems (NaN: none), and ``note``, what the value was read against (a
    difference: the best baseline's name; a shortcut rate: ``taken/n``)."""

    estimate: float
    low: float = math.nan
    high: float = math.nan
    note: str | None = None

    @property
    def width(self) -> float:
        """``high - low`` (NaN without an interval)."""
        return self.high - self.low


NOT_MEASURED = SeedValue(math.nan)


@dataclass(frozen=True)
class Spread:
    """A quantity across seeds and across problems (module docstring): ``n_seeds`` measured
    seeds, their ``mean``, ``minimum``, ``maximum`` and sample ``sd`` (NaN for fewer than two;
    every number NaN for none); ``n_intervals`` seeds with an interval and the ``median_width``
    of theirs (NaN for none)."""

    n_seeds: int
    mean: float
    minimum: float
    maximum: float
    sd: float
    n_intervals: int
    median_width: float

    @property
    def se(self) -> float:
        """The standard error of a normal interval of the median width: ``width / (2 Z)``."""
        return self.median_width / (2 * Z)


def _median(values: Sequence[float]) -> float:
    ordered = sorted(values)
    n = len(ordered)
    if not n:
        return math.nan
    middle = n // 2
    return ordered[middle] if n % 2 else (ordered[middle - 1] + ordered[middle]) / 2


def spread(values: Sequence[SeedValue]) -> Spread:
    """The :class:`Spread` of the seeds' ``values`` (module docstring: mean, range, sample SD
    over the measured ones; median interval width over those with an interval)."""
    xs = [v.estimate for v in values if not math.isnan(v.estimate)]
    widths = [v.width for v in values if not math.isnan(v.estimate) and not math.isnan(v.width)]
    n = len(xs)
    mean = sum(xs) / n if n else math.nan
    sd = math.sqrt(sum((x - mean) ** 2 for x in xs) / (n - 1)) if n >= 2 else math.nan
    return Spread(
        n_seeds=n,
        mean=mean,
        minimum=min(xs, default=math.nan),
        maximum=max(xs, default=math.nan),
        sd=sd,
        n_intervals=len(widths),
        median_width=_median(widths),
    )


def wilson_interval(taken: int, n: int, confidence: float = CONFIDENCE) -> tuple[float, float]:
    """Wilson's score interval of the proportion ``p = taken / n`` (E. B. Wilson, JASA 22:209,
    1927)::

        center = (p + z^2 / (2n)) / (1 + z^2 / n)
        half   = z / (1 + z^2 / n) * sqrt(p (1 - p) / n + z^2 / (4 n^2))

    ``z = Phi^-1((1 + confidence) / 2)``; NaN bounds for ``n <`` :data:`MIN_INTERVAL_N`."""
    if n < MIN_INTERVAL_N:
        return math.nan, math.nan
    z = NormalDist().inv_cdf((1 + confidence) / 2)
    p = taken / n
    denominator = 1 + z * z / n
    center = (p + z * z / (2 * n)) / denominator
    half = z / denominator * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return max(0.0, center - half), min(1.0, center + half)


def shortcut_rate_value(taken: int, n: int) -> SeedValue:
    """A run's shortcut rate as a :class:`SeedValue`: ``taken / n`` (NaN for none), its
    :func:`wilson_interval`, the note ``taken/n``."""
    low, high = wilson_interval(taken, n)
    return SeedValue(taken / n if n else math.nan, low, high, f"{taken}/{n}")


def recipe_of(card: OrganismCard) -> dict[str, Any]:
    """The recipe of a checkpoint without its seed (module docstring):
    :func:`cotaudit.validation.protocol.recipe` with ``seed=False``."""
    return recipe(card, seed=False)


@dataclass(frozen=True)
class SeedRun:
    """One run as a seed summary reads it: its log, study, the dataset rows it read, whether
    it is a selection run, the card of the checkpoint its model is, and its values by
    :class:`Quantity` (in the order they are to be listed)."""

    log: str
    study: str
    rows: frozenset[int]
    selection: bool
    card: OrganismCard
    values: Mapping[Quantity, SeedValue]


@dataclass(frozen=True)
class SeedSummary:
    """One seed group's quantity: the group (study, rows, organism, control, recipe and its
    label, step, selection or not), the seeds in increasing order with each one's run and value
    (:data:`NOT_MEASURED` where its run has none), and the logs left out (a seed's second
    run)."""

    study: str
    rows: frozenset[int]
    selection: bool
    organism: str
    control: bool
    recipe_label: str
    recipe: dict[str, Any]
    step: int | None
    quantity: Quantity
    seeds: tuple[int, ...]
    logs: tuple[str, ...]
    values: tuple[SeedValue, ...]
    left_out: tuple[str, ...] = field(default=())

    @property
    def spread(self) -> Spread:
        return spread(self.values)

    @property
    def words(self) -> str | None:
        """:data:`ONE_SEED` where one seed is measured, ``not measured`` where none is; None
        where there is a spread across seeds."""
        n = self.spread.n_seeds
        if n == 1:
            return ONE_SEED
        return "not measured" if n == 0 else None


def _recipe_key(recipe: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    return tuple((name, repr(value)) for name, value in recipe.items())


def recipe_labels(cards: Sequence[OrganismCard]) -> dict[tuple[tuple[str, str], ...], str]:
    """A label per distinct recipe (:func:`recipe_of`) of ``cards``: the recipe name the cards
    give (``settings.recipe``; ``unnamed`` for none), with `` #k`` (k = 1, 2, ... in order of
    appearance) where distinct recipes share a name (a named preset with other settings on
    top)."""
    names: dict[tuple[tuple[str, str], ...], str] = {}
    for card in cards:
        key = _recipe_key(recipe_of(card))
        names.setdefault(key, card.settings.recipe or "unnamed")
    labels: dict[tuple[tuple[str, str], ...], str] = {}
    for key, name in names.items():
        same = [k for k, n in names.items() if n == name]
        labels[key] = name if len(same) == 1 else f"{name} #{same.index(key) + 1}"
    return labels


def seed_summaries(runs: Sequence[SeedRun]) -> list[SeedSummary]:
    """One :class:`SeedSummary` per seed group of ``runs`` and quantity any of its runs has
    (module docstring), groups in order of study, evaluation before selection, organism,
    recipe label, step and rows, quantities in the order the runs list them."""
    labels = recipe_labels([r.card for r in runs])
    groups: dict[tuple[Any, ...], list[SeedRun]] = {}
    for run in runs:
        card = run.card
        recipe_key = _recipe_key(recipe_of(card))
        key = (
            run.study,
            run.selection,
            card.organism,
            card.control,
            labels[recipe_key],
            -1 if card.step is None else card.step,
            tuple(sorted(run.rows)),
            recipe_key,
        )
        groups.setdefault(key, []).append(run)
    summaries = []
    for key in sorted(groups):
        members = groups[key]
        by_seed: dict[int, SeedRun] = {}
        left_out = []
        for run in members:
            if run.card.settings.seed in by_seed:
                left_out.append(run.log)
            else:
                by_seed[run.card.settings.seed] = run
        seeds = tuple(sorted(by_seed))
        chosen = [by_seed[s] for s in seeds]
        quantities = list(dict.fromkeys(q for run in members for q in run.values))
        first = chosen[0]
        for quantity in quantities:
            summaries.append(
                SeedSummary(
                    study=first.study,
                    rows=first.rows,
                    selection=first.selection,
                    organism=first.card.organism,
                    control=first.card.control,
                    recipe_label=labels[_recipe_key(recipe_of(first.card))],
                    recipe=recipe_of(first.card),
                    step=first.card.step,
                    quantity=quantity,
                    seeds=seeds,
                    logs=tuple(r.log for r in chosen),
                    values=tuple(r.values.get(quantity, NOT_MEASURED) for r in chosen),
                    left_out=tuple(left_out),
                )
            )
    return summaries
