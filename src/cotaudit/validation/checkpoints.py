"""Which organism checkpoint a run's model is, and which checkpoints of a series depart from
their base model.

A run's model is ``<provider>/<model>`` (``hf-probe/default``,
``hf-probe//work/organisms/hint-follower/step-000050``); an organism checkpoint is a folder with
its card (:func:`cotaudit.organisms.read_card`), which gives the organism and the training step.
A relative folder is read from the current directory: give checkpoints by absolute path.

**The checkpoint flag** (a paired permutation test against the base, Holm across the series).
A series is the base model's run and its checkpoints' runs, each measuring one statistic, here
a cued AUROC (:mod:`cotaudit.validation.detection`): rows ``(problem, value, positive)``. For
one checkpoint, on the ``m`` problems both runs measured (a problem's rows are its samples that
the statistic reads; the others are left out of both runs):

- **Difference** ``D = A_ck - A_base``: each run's AUROC over its rows of the shared problems
  (so a checkpoint run on fewer problems is compared on those only), with its 95% paired
  problem-bootstrap interval (:func:`cotaudit.bootstrap.paired_difference`: each resample draws
  the shared problems once and applies the draw to both runs).
- **p-value** (two-sided): under the null hypothesis that the checkpoint measures as the base
  model does, a problem's base rows and checkpoint rows are exchangeable, so swapping them
  (``s_j = 1``) leaves the distribution of ``D`` unchanged. With ``D*(s)`` the difference after
  the swaps ``s in {0, 1}^m``: where ``2^m <= n_permutations`` every ``s`` is enumerated and
  ``p = #{s: |D*(s)| >= |D|} / 2^m`` (exact); otherwise ``B = n_permutations`` swap vectors are
  drawn uniformly and ``p = (1 + #{b: |D*_b| >= |D|}) / (B + 1)``, a valid p-value for a Monte
  Carlo test (B. Phipson and G. K. Smyth, "Permutation p-values should never be zero", Stat.
  Appl. Genet. Mol. Biol. 9(1), 2010). ``>=`` within :data:`cotaudit.stats.TIE_TOLERANCE`; a
  ``D*`` left undefined by a swap (a run without one class) counts as extreme (conservative).
  This is the matched-pairs permutation (randomization) test (R. A. Fisher, *The Design of
  Experiments*, 1935; P. Good, *Permutation, Parametric and Bootstrap Tests of Hypotheses*, 3rd
  ed., Springer 2005) with the AUROC difference as its statistic. With all ``2^m`` swaps the
  smallest p is ``2 / 2^m`` (swapping every problem gives ``-D``): ``m >= 6`` shared problems
  are needed for ``p <= 0.05``.
- **Flag**: the family is the checkpoints of one series for one statistic whose p is defined
  (``k`` of them); their p-values are Holm-adjusted (:func:`cotaudit.stats.holm_adjusted`,
  S. Holm, Scand. J. Statist. 6:65-70, 1979) and a checkpoint is flagged when its adjusted p
  is ``<= alpha`` (0.05). The chance that a series of checkpoints that all measure as the base
  does raises any flag is at most ``alpha``; ``bench/checkpoint_flag.py`` measures it.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numpy.typing import ArrayLike, NDArray

from cotaudit.bootstrap import Interval, paired_difference
from cotaudit.organisms.card import CardError, OrganismCard, read_card
from cotaudit.stats import TIE_TOLERANCE, greater, holm_adjusted, tied
from cotaudit.validation.detection import CONFIDENCE, ClassRows

ALPHA = 0.05
"""The family-wise level of the flag: a checkpoint is flagged at Holm-adjusted p <= ALPHA."""
N_PERMUTATIONS = 2000
"""Swap vectors drawn for a Monte Carlo p; with ``2^m <= N_PERMUTATIONS`` all are enumerated."""
N_BOOT = 1000
"""Bootstrap resamples of the difference's paired interval."""
SEED = 0


def model_folder(model: str) -> Path | None:
    """The folder a run's model names (the text after the provider's ``<provider>/``), when it
    is an existing folder; None otherwise (an alias such as ``default``, a hub id)."""
    _, sep, name = model.partition("/")
    if not sep or not name:
        return None
    path = Path(name)
    return path if path.is_dir() else None


def checkpoint_card(model: str) -> OrganismCard | None:
    """The card of the organism checkpoint a run's model names; None for another model (no
    folder, or a folder without a checkpoint's card)."""
    folder = model_folder(model)
    if folder is None:
        return None
    try:
        card = read_card(folder)
    except CardError:
        return None
    return card if card.step is not None else None


def is_base_of(model: str, card: OrganismCard) -> bool:
    """Whether a run's model is ``card``'s base model (by the name given to ``--base`` or by
    the folder it resolved to)."""
    _, _, name = model.partition("/")
    if name == card.base:
        return True
    folder = model_folder(model)
    return folder is not None and folder.resolve() == Path(card.base_path).resolve()


def pair_kernel(
    positive: NDArray[np.float64], negative: NDArray[np.float64]
) -> NDArray[np.float64]:
    """``K[i, j] = 1{x_i > y_j} + 0.5 * 1{x_i = y_j}`` (equal within
    :data:`cotaudit.stats.TIE_TOLERANCE`) for positive values ``x`` and negative values ``y``:
    the AUROC of any multiset of the rows, with weights ``a`` on positives and ``b`` on
    negatives, is ``a K b / (sum a * sum b)`` (:func:`weighted_aurocs`)."""
    x = np.asarray(positive, dtype=float)[:, None]
    y = np.asarray(negative, dtype=float)[None, :]
    return np.asarray(greater(x, y), dtype=float) + 0.5 * np.asarray(tied(x, y), dtype=float)


def weighted_aurocs(
    kernel: NDArray[np.float64], weights_pos: ArrayLike, weights_neg: ArrayLike
) -> NDArray[np.float64]:
    """Per row ``r`` of the weights, ``a_r K b_r / (sum a_r * sum b_r)``: the AUROC (as
    :func:`cotaudit.stats.auroc`) of the rows weighted ``a_r`` (positives) and ``b_r``
    (negatives), e.g. a 0/1 membership or a bootstrap draw's counts; NaN where a class has
    weight 0."""
    a = np.atleast_2d(np.asarray(weights_pos, dtype=float))
    b = np.atleast_2d(np.asarray(weights_neg, dtype=float))
    denominator = a.sum(1) * b.sum(1)
    numerator = ((a @ kernel) * b).sum(1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(
            denominator > 0, numerator / np.where(denominator > 0, denominator, 1), np.nan
        )


@dataclass(frozen=True)
class PairedTest:
    """A checkpoint against its base on the problems both measured (module docstring):
    ``difference`` (checkpoint minus base AUROC, its paired 95% interval, ``n_units`` the
    shared problems), the two-sided permutation ``p_value`` (NaN where it cannot be computed:
    no shared problem, or a run without one class on them) and how it was computed
    (``n_permutations`` swap vectors; ``exact``: all ``2^m`` enumerated)."""

    difference: Interval
    p_value: float
    n_permutations: int
    exact: bool

    @property
    def n_problems(self) -> int:
        return self.difference.n_units


def _shared(base: ClassRows, checkpoint: ClassRows) -> list[str]:
    in_checkpoint = set(checkpoint.units)
    return [u for u in dict.fromkeys(base.units) if u in in_checkpoint]


def _swaps(m: int, n_permutations: int, rng: np.random.Generator) -> tuple[NDArray[np.bool_], bool]:
    """The swap vectors: all ``2^m`` (exact) when that is at most ``n_permutations``, else
    ``n_permutations`` uniform draws."""
    if 2**m <= n_permutations:
        return np.array(list(itertools.product((False, True), repeat=m)), dtype=bool), True
    return rng.random((n_permutations, m)) < 0.5, False


def permutation_p(
    base: ClassRows,
    checkpoint: ClassRows,
    n_permutations: int = N_PERMUTATIONS,
    seed: int = SEED,
) -> tuple[float, float, int, bool]:
    """``(D, p, swaps, exact)``: the AUROC difference checkpoint minus base on the shared
    problems and its two-sided paired permutation p-value (module docstring); D and p NaN with
    no shared problem, p NaN where D is."""
    shared = _shared(base, checkpoint)
    if not shared:
        return math.nan, math.nan, 0, False
    index = {u: j for j, u in enumerate(shared)}
    units: list[int] = []
    values: list[float] = []
    positive: list[bool] = []
    origin: list[bool] = []
    for run, side in ((base, False), (checkpoint, True)):
        for u, v, p in zip(run.units, run.values, run.positive, strict=True):
            if u in index:
                units.append(index[u])
                values.append(float(v))
                positive.append(bool(p))
                origin.append(side)
    unit = np.asarray(units, dtype=np.intp)
    pos = np.asarray(positive, dtype=bool)
    from_checkpoint = np.asarray(origin, dtype=bool)
    arr = np.asarray(values, dtype=float)
    kernel = pair_kernel(arr[pos], arr[~pos])

    def differences(swap: NDArray[np.bool_]) -> NDArray[np.float64]:
        member = from_checkpoint[None, :] ^ swap[:, unit]  # True: in the checkpoint's run
        ck = weighted_aurocs(kernel, member[:, pos], member[:, ~pos])
        bs = weighted_aurocs(kernel, ~member[:, pos], ~member[:, ~pos])
        return ck - bs

    observed = float(differences(np.zeros((1, len(shared)), dtype=bool))[0])
    if math.isnan(observed):
        return observed, math.nan, 0, False
    swaps, exact = _swaps(len(shared), n_permutations, np.random.default_rng(seed))
    null = differences(swaps)
    extreme = int(np.sum(np.isnan(null) | (np.abs(null) >= abs(observed) - TIE_TOLERANCE)))
    p = extreme / len(swaps) if exact else (1 + extreme) / (len(swaps) + 1)
    return observed, min(1.0, p), len(swaps), exact


def paired_test(
    base: ClassRows,
    checkpoint: ClassRows,
    n_permutations: int = N_PERMUTATIONS,
    n_boot: int = N_BOOT,
    seed: int = SEED,
) -> PairedTest:
    """The checkpoint's :class:`PairedTest` against its base (module docstring)."""
    _, p, swaps, exact = permutation_p(base, checkpoint, n_permutations, seed)
    difference = paired_difference(
        checkpoint.auroc,
        checkpoint.units,
        base.auroc,
        base.units,
        n_boot=n_boot,
        confidence=CONFIDENCE,
        seed=seed,
    )
    return PairedTest(difference, p, swaps, exact)


@dataclass(frozen=True)
class SeriesPoint:
    """One checkpoint of a series: its training step and its test against the base."""

    step: int
    test: PairedTest


@dataclass(frozen=True)
class Flag:
    """A checkpoint's place in its family: its test, Holm-adjusted p (``p_holm``; NaN where
    its p is), the family's size ``family`` (checkpoints with a defined p) and whether it is
    flagged (``p_holm <= alpha``)."""

    step: int
    test: PairedTest
    p_holm: float
    family: int
    flagged: bool


def flag_series(points: Sequence[SeriesPoint], alpha: float = ALPHA) -> list[Flag]:
    """Each checkpoint's :class:`Flag`, in step order: Holm across ``points`` (one series, one
    statistic; module docstring)."""
    ordered = sorted(points, key=lambda p: p.step)
    adjusted = holm_adjusted([p.test.p_value for p in ordered])
    family = sum(not math.isnan(p.test.p_value) for p in ordered)
    return [
        Flag(p.step, p.test, q, family, not math.isnan(q) and q <= alpha)
        for p, q in zip(ordered, adjusted, strict=True)
    ]


def first_flagged(flags: Sequence[Flag]) -> int | None:
    """The smallest training step among the flagged checkpoints; None if none is flagged."""
    steps = [f.step for f in flags if f.flagged]
    return min(steps) if steps else None
