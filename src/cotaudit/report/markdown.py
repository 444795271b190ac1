"""The Markdown document. What a log holds (its file name, task, model, run label, error, a
section's title) is written literally (:func:`~cotaudit.display.text.report_text`,
:func:`~cotaudit.display.text.md_code`): ``report.md`` may be read by a renderer that allows
HTML."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from cotaudit.display.text import md_code, report_text
from cotaudit.logs.data import RunData
from cotaudit.report.sections import FigureInfo, Section
from cotaudit.report.tables import Table, fmt


def _block(block: str | Table | FigureInfo, out_dir: Path) -> str:
    if isinstance(block, Table):
        return block.to_markdown()
    if isinstance(block, FigureInfo):
        if block.failed:
            name = md_code(block.path.name)
            return f"⚠️ Figure {name} could not be drawn: {report_text(block.failed)}"
        rel = Path(os.path.relpath(block.path, out_dir)).as_posix()
        alt = report_text(block.caption.split(".")[0] if block.caption else rel)
        image = f"![{alt}]({rel})"
        return f"{image}\n\n_{report_text(block.caption)}_" if block.caption else image
    return block


def render(
    study_sections: dict[str, list[Section]],
    runs: Sequence[RunData],
    skipped: Sequence[tuple[str, str]],
    out_dir: Path,
    notes: Sequence[str] = (),
) -> str:
    """The whole report."""
    lines = ["# cotaudit report", ""]
    lines.append(
        f"{len(runs)} Inspect log(s). Every number below is recomputed from the per-sample "
        "scores in the logs with the functions the runs' metrics use; each run's section says "
        "whether its recomputation equals the metrics stored in its log."
    )
    lines.append("")
    if runs:
        t = Table(
            "Logs",
            ["run", "task", "model", "status", "samples", "log"],
            align=["---", "---", "---", "---", "---:", "---"],
        )
        for r in runs:
            t.add(r.label or r.model, r.task, r.model, r.status, r.n_samples, Path(r.path).name)
        lines += [t.to_markdown(), ""]
    for note in notes:
        lines += [f"> {note}", ""]
    for study, sections in study_sections.items():
        if not sections:
            continue
        lines += [f"## {report_text(study)}", ""]
        for sec in sections:
            lines += [f"### {report_text(sec.title)}", ""]
            if sec.run is not None:
                r = sec.run
                lines += [
                    f"Log {md_code(Path(r.path).name)} · model {md_code(r.model)} · status "
                    f"{report_text(r.status)} · created {report_text(r.created[:19])}"
                    + (f" · epochs {r.epochs}" if r.epochs > 1 else "")
                    + (f" · error: {report_text(r.error)}" if r.error else ""),
                    "",
                ]
            if sec.consistency is not None:
                c = sec.consistency
                mark = "ℹ️" if c.n_logged == 0 else ("✅" if c.ok else "⚠️")
                lines += [f"{mark} {sec.consistency.line()}", ""]
            for block in sec.blocks:
                lines += [_block(block, out_dir), ""]
    if skipped:
        lines += ["## Skipped files", ""]
        lines += [f"- {md_code(p)}: {report_text(why)}" for p, why in skipped]
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


__all__ = ["render", "fmt"]
