"""The Markdown document."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from cotaudit.report.data import RunData
from cotaudit.report.sections import FigureInfo, Section
from cotaudit.report.tables import Table, fmt


def _block(block: str | Table | FigureInfo, out_dir: Path) -> str:
    if isinstance(block, Table):
        return block.to_markdown()
    if isinstance(block, FigureInfo):
        rel = Path(os.path.relpath(block.path, out_dir)).as_posix()
        alt = block.caption.split(".")[0] if block.caption else rel
        return f"![{alt}]({rel})\n\n_{block.caption}_" if block.caption else f"![{alt}]({rel})"
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
            t.add(
                r.label or r.model, r.task, r.model, r.status, r.n_samples, f"`{Path(r.path).name}`"
            )
        lines += [t.to_markdown(), ""]
    for note in notes:
        lines += [f"> {note}", ""]
    for study, sections in study_sections.items():
        if not sections:
            continue
        lines += [f"## {study}", ""]
        for sec in sections:
            lines += [f"### {sec.title}", ""]
            if sec.run is not None:
                r = sec.run
                lines += [
                    f"Log `{Path(r.path).name}` · model `{r.model}` · status {r.status} · "
                    f"created {r.created[:19]}"
                    + (f" · epochs {r.epochs}" if r.epochs > 1 else "")
                    + (f" · error: {r.error}" if r.error else ""),
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
        lines += [f"- `{p}`: {why}" for p, why in skipped]
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


__all__ = ["render", "fmt"]
