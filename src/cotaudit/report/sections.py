"""What a report section is made of."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cotaudit.display.text import md_code
from cotaudit.report.data import Consistency, RunData
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
