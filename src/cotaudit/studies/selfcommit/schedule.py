"""Adaptive prefix schedule for c(t): probe coarsely, refine only where c(t) is ambiguous.

Full schedule: t in prefix_positions(T, stride) = stride, 2*stride, ..., T. Adaptive: first
every ``coarse_factor``-th of those positions (always the first, t = stride, and T); then
every full-schedule position strictly inside an interval [a, b] of consecutive coarse
positions unless c(a) = c(b) in {0, 1} (the curve is pinned at the same extreme at both ends).
Unprobed positions inside a pinned interval take that value and are marked imputed. Same seeds
per t as the full schedule, so probed values are identical.

With the exact estimator alone the coarse round's c is c_exact, a probability that is never
exactly 0 or 1: an interval is pinned when both ends lie within :data:`EXACT_PIN_TOLERANCE` of
the same extreme (c(a) <= 0.05 and c(b) <= 0.05, or both >= 0.95), and its unprobed
positions take the value at a. With both estimators the sampled c decides (the study's rule);
the exact curve is filled at the same positions from the same left ends.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import pairwise
from typing import TypeVar

from cotaudit.probing.curves import prefix_positions

COARSE_FACTOR = 4
EXACT_PIN_TOLERANCE = 0.05
"""How close to 0 or 1 both ends of a coarse interval of c_exact lie for it to be pinned."""

V = TypeVar("V", int, float)


def coarse_positions(cot_length: int, stride: int, coarse_factor: int = COARSE_FACTOR) -> list[int]:
    """Every ``coarse_factor``-th full-schedule position from the first (t = stride), plus T."""
    full = prefix_positions(cot_length, stride)
    coarse = full[::coarse_factor]
    if coarse[-1] != full[-1]:
        coarse.append(full[-1])
    return coarse


def pinned(a: float, b: float, tolerance: float = 0.0) -> bool:
    """Both ends within ``tolerance`` of 0, or both within it of 1 (tolerance 0: c(a) = c(b)
    in {0, 1})."""
    return (a <= tolerance and b <= tolerance) or (a >= 1 - tolerance and b >= 1 - tolerance)


def refinement_positions(
    full: Sequence[int],
    coarse: Sequence[int],
    coarse_c: Mapping[int, float],
    tolerance: float = 0.0,
) -> list[int]:
    """Full-schedule positions inside coarse intervals whose ends are not pinned at 0 or 1
    (:func:`pinned` with ``tolerance``)."""
    extra: list[int] = []
    for a, b in pairwise(coarse):
        if not pinned(coarse_c[a], coarse_c[b], tolerance):
            extra += [t for t in full if a < t < b]
    return extra


def fill_schedule(full: Sequence[int], probed: Mapping[int, V]) -> tuple[list[V], list[bool]]:
    """Values (matches, or c_exact) at every full-schedule position: probed values, or the
    value of the pinned interval around an unprobed position (imputed = True)."""
    matches: list[V] = []
    imputed: list[bool] = []
    known = sorted(probed)
    for t in full:
        if t in probed:
            matches.append(probed[t])
            imputed.append(False)
            continue
        before = max(p for p in known if p < t)
        matches.append(probed[before])
        imputed.append(True)
    return matches, imputed
