"""Adaptive prefix schedule for c(t): probe coarsely, refine only where c(t) is ambiguous.

Full schedule: t in prefix_positions(T, stride) = stride, 2*stride, ..., T. Adaptive: first
every ``coarse_factor``-th of those positions (always the first, t = stride, and T); then
every full-schedule position strictly inside an interval [a, b] of consecutive coarse
positions unless c(a) = c(b) in {0, 1} (the curve is pinned at the same extreme at both ends).
Unprobed positions inside a pinned interval take that value and are marked imputed. Same seeds
per t as the full schedule, so probed values are identical.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import pairwise

from cotaudit.probing.curves import prefix_positions

COARSE_FACTOR = 4


def coarse_positions(cot_length: int, stride: int, coarse_factor: int = COARSE_FACTOR) -> list[int]:
    """Every ``coarse_factor``-th full-schedule position from the first (t = stride), plus T."""
    full = prefix_positions(cot_length, stride)
    coarse = full[::coarse_factor]
    if coarse[-1] != full[-1]:
        coarse.append(full[-1])
    return coarse


def refinement_positions(
    full: Sequence[int], coarse: Sequence[int], coarse_c: Mapping[int, float]
) -> list[int]:
    """Full-schedule positions inside coarse intervals whose ends are not pinned at 0 or 1."""
    extra: list[int] = []
    for a, b in pairwise(coarse):
        pinned = coarse_c[a] == coarse_c[b] and coarse_c[a] in (0.0, 1.0)
        if not pinned:
            extra += [t for t in full if a < t < b]
    return extra


def fill_schedule(full: Sequence[int], probed: Mapping[int, int]) -> tuple[list[int], list[bool]]:
    """Matches at every full-schedule position: probed values, or the value of the pinned
    interval around an unprobed position (imputed = True)."""
    matches: list[int] = []
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
