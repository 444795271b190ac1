"""What a report section is made of."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cotaudit.display.text import md_code
from cotaudit.logs.data import RunData, ScorerRun
from cotaudit.report.consistency import Consistency, check_metrics
from cotaudit.report.tables import Table
from cotaudit.studies.paper import PaperConfiguration


@dataclass
class FigureInfo:
    """A written PNG: its size in pixels and, per panel, the labels of its data series; or,
    with ``failed`` set, a figure that could not be drawn (no image) and why."""

    path: Path
    width_px: int
    height_px: int
    panels: list[tuple[str, list[str]]]
    caption: str = ""
    failed: str = ""

    @property
    def n_series(self) -> list[int]:
        return [len(series) for _, series in self.panels]


@dataclass
class Section:
    """One run's part of the report (or a comparison of runs)."""

    title: str
    run: RunData | None = None
    blocks: list[str | Table | FigureInfo] = field(default_factory=list)
    tables: dict[str, Table] = field(default_factory=dict)
    figures: dict[str, FigureInfo] = field(default_factory=dict)
    recomputed: dict[str, float] = field(default_factory=dict)
    consistency: Consistency | None = None
    data: dict[str, Any] = field(default_factory=dict)

    def text(self, markdown: str) -> None:
        self.blocks.append(markdown)

    def check(self, recomputed: dict[str, float], logged: dict[str, float]) -> Consistency:
        """Hold the ``recomputed`` run metrics and their check against the ``logged`` ones
        (:func:`~cotaudit.report.consistency.check_metrics`); returns the check."""
        self.recomputed = recomputed
        self.consistency = check_metrics(recomputed, logged)
        return self.consistency

    def table(self, key: str, table: Table) -> Table:
        self.tables[key] = table
        self.blocks.append(table)
        return table

    def figure(self, key: str, figure: FigureInfo | None) -> None:
        """Add ``figure`` under ``key`` (a figure that could not be drawn is shown as such, and
        is not among :attr:`figures`)."""
        if figure is not None:
            if not figure.failed:
                self.figures[key] = figure
            self.blocks.append(figure)


def run_section(
    run: RunData, study: str, scorers: Sequence[str]
) -> tuple[Section, ScorerRun | None]:
    """The section of ``run`` titled ``<study> · <run label or model>``, and the first of
    ``scorers`` the log holds; None in its place when the log holds none of them or that one
    scored no samples, the section then saying there is nothing to report."""
    sec = Section(f"{study} · {run.label or run.model}", run=run)
    scorer = next((s for name in scorers if (s := run.scorer(name)) is not None), None)
    if scorer is None or not scorer.samples:
        names = " or ".join(f"`{name}`" for name in scorers)
        sec.text(f"_No {names} scores in this log (status {run.status}); nothing to report._")
        return sec, None
    return sec, scorer


def paper_line(run: RunData) -> str:
    """Whether the run used its study's published configuration (``-T paper=true``), and the
    parameters it set otherwise (each a code span, :func:`~cotaudit.display.text.md_code`)."""
    record = run.task_metadata.get("paper_configuration")
    if not record:
        return (
            "This run did not use the study's configuration (`-T paper=true` sets it); its "
            "settings differ from the study's."
        )
    overrides = record.get("overrides") or {}
    kept = ", ".join(md_code(f"{k}={v!r}") for k, v in overrides.items()) or "none"
    return f"This run used the study's configuration (`-T paper=true`); overrides: {kept}."


def published_intro(paper: PaperConfiguration, run: RunData, scale: str) -> str:
    """The paragraph above a study's published tables: the source, its model and ``scale``
    (e.g. "50 problems"), and whether this run used the study's configuration."""
    return (
        f"**The study's published numbers beside this run's.** Published: {paper.source}, "
        f"model {paper.model}, {scale}. {paper_line(run)} A run on another model or on "
        "fewer problems is not expected to reproduce them; the tables show what did."
    )


def published_table(title: str, paper: PaperConfiguration) -> Table:
    """An empty published table: quantity, this run, the study's value (labelled with the
    study's model), run − published, and where the study gives it."""
    return Table(
        f"{title}: this run beside the study",
        ["", "quantity", "this run", f"published, {paper.model}", "run − published", "source"],
        align=["---", "---", "---:", "---:", "---:", "---"],
    )
