"""How a report_ll sample shows in the log viewer: its primary score and fields."""

from __future__ import annotations

from cotaudit.display.sample_table import SampleTable

REPORT_LL_PRIMARY = "did"


REPORT_LL_VIEWER_FIELDS = ("scenario", "register", "rendering", "richness", "family")
"""Keys the report_ll scorer adds to its value for the viewer."""


REPORT_LL_LABELS = {
    REPORT_LL_PRIMARY: "DiD (nats)",
    "d_h": "D_h",
    "d_c": "D_c",
    "did_per_token": "DiD/token",
    "d_h_per_token": "D_h/token",
    "d_c_per_token": "D_c/token",
}
"""Column labels of the report_ll keys."""


def sample_table() -> SampleTable:
    """Columns: scenario, the factor levels, DiD, D_h, D_c, then the family and the per-token
    differences; sorted by sample id (scenario, rendering, richness, register). The factor
    levels' columns are wide (their values are words: ``concealing_dressed``)."""
    visible = ["scenario", "register", "rendering", "richness", REPORT_LL_PRIMARY, "d_h", "d_c"]
    hidden = ["family", "did_per_token", "d_h_per_token", "d_c_per_token"]
    return SampleTable(
        "report_ll",
        "report_ll_scorer",
        tuple(visible),
        tuple(hidden),
        REPORT_LL_LABELS,
        wide=("register", "rendering", "richness"),
    )
