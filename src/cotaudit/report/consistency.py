"""The report's check of a run: each metric the log holds against its recomputation from the
per-sample scores."""

from __future__ import annotations

import math
from dataclasses import dataclass

from cotaudit.display.text import md_code


def metrics_equal(a: float, b: float, tol: float = 1e-9) -> bool:
    """Equal within ``tol`` (absolute, or relative for large values); NaN equals NaN."""
    a, b = float(a), float(b)
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return a == b or abs(a - b) <= tol * max(1.0, abs(a), abs(b))


@dataclass
class Consistency:
    """Recomputed metrics against the logged ones."""

    n_logged: int
    n_checked: int
    mismatches: list[tuple[str, float, float]]
    not_recomputed: list[str]
    max_abs_diff: float

    @property
    def ok(self) -> bool:
        return not self.mismatches and not self.not_recomputed

    def line(self) -> str:
        if self.n_logged == 0:
            return "The log holds no run-level metrics (an unfinished run?); nothing to check."
        head = (
            f"{self.n_checked} of {self.n_logged} logged metrics recomputed from the per-sample "
            f"scores"
        )
        if not self.mismatches:
            head += f": all equal (max |difference| {self.max_abs_diff:.2g})"
        else:
            bad = ", ".join(
                f"{md_code(k)} (log {a:.6g}, recomputed {b:.6g})" for k, a, b in self.mismatches[:5]
            )
            head += f": **{len(self.mismatches)} differ**: {bad}"
        if self.not_recomputed:
            head += "; not recomputed: " + ", ".join(md_code(k) for k in self.not_recomputed[:5])
            if len(self.not_recomputed) > 5:
                head += f" and {len(self.not_recomputed) - 5} more"
        return head + "."


def check_metrics(recomputed: dict[str, float], logged: dict[str, float]) -> Consistency:
    """Compare every logged metric with its recomputation."""
    mismatches, missing = [], []
    max_diff = 0.0
    checked = 0
    for key, value in logged.items():
        if key not in recomputed:
            missing.append(key)
            continue
        checked += 1
        mine = recomputed[key]
        if not metrics_equal(value, mine):
            mismatches.append((key, float(value), float(mine)))
        elif not math.isnan(float(value)):
            max_diff = max(max_diff, abs(float(value) - float(mine)))
    return Consistency(len(logged), checked, mismatches, missing, max_diff)
