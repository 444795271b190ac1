"""How a report_ll sample shows in the log viewer: its primary score and fields."""

from __future__ import annotations

REPORT_LL_PRIMARY = "did"


REPORT_LL_VIEWER_FIELDS = ("scenario", "register", "rendering", "richness", "family")
"""Keys the report_ll scorer adds to its value for the viewer."""
