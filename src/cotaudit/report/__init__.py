"""``cotaudit report``: paper tables, figures and model comparisons from Inspect logs.

Every number is recomputed from the per-sample scores stored in the logs, with the same pure
functions the runs' metrics use, and checked against the metrics stored in each log.

    from cotaudit.report import build_report
    report = build_report(["logs/"], "report/")
    report.markdown_path, report.sections["selfcommit"][0].tables["table_i"]
"""

from __future__ import annotations

import importlib
import importlib.util
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from cotaudit.display.text import md_code, report_text
from cotaudit.logs.data import RunData
from cotaudit.report.sections import FigureInfo, Section

SECTION_ALIASES = {
    "probe_trace": "probe",
    "probe_selfcommit": "probe",
    "probe_resample": "resample",
}
"""Studies whose report section is another study's module (the generic probe's probes)."""


def section_module(study: str) -> str | None:
    """The report module of ``study`` (task metadata ``study``, else the task name):
    ``cotaudit.report.<study>`` (or its alias's), when it exists; None for a task with no report
    section. A new study's section is found by its module's name alone."""
    name = f"{__name__}.{SECTION_ALIASES.get(study, study)}"
    if not study.isidentifier() or importlib.util.find_spec(name) is None:
        return None
    return name


STUDIES = ("selfcommit", "trace_tutor", "report_ll", "probe_trace", "probe_selfcommit")
"""The studies with a report section, in the order the report shows them (a study not listed
here but with a section module comes after them)."""


@dataclass
class Report:
    """What :func:`build_report` wrote."""

    out_dir: Path
    markdown_path: Path
    runs: list[RunData]
    sections: dict[str, list[Section]] = field(default_factory=dict)
    comparisons: dict[str, Section] = field(default_factory=dict)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def figures(self) -> list[FigureInfo]:
        secs = [s for ss in self.sections.values() for s in ss] + list(self.comparisons.values())
        return [f for s in secs for f in s.figures.values()]


def _value_text(v: object) -> str:
    return f"{v:g}" if isinstance(v, float) else str(v)


def assign_labels(runs: Sequence[RunData]) -> None:
    """A short, unique label per run within its study: the model, plus the task arguments that
    differ between runs of the same model (e.g. ``hf-probe/tiny (seed=1)``), plus ``#n`` if
    still ambiguous."""
    by_study: dict[str, list[RunData]] = {}
    for r in runs:
        by_study.setdefault(r.study, []).append(r)
    for group in by_study.values():
        by_model: dict[str, list[RunData]] = {}
        for r in group:
            by_model.setdefault(r.model, []).append(r)
        for model, same in by_model.items():
            if len(same) == 1:
                same[0].label = model
                continue
            keys = sorted({k for r in same for k in r.task_args})
            differ = [k for k in keys if len({repr(r.task_args.get(k)) for r in same}) > 1]
            for r in same:
                extra = ", ".join(f"{k}={_value_text(r.task_args.get(k))}" for k in differ[:3])
                r.label = f"{model} ({extra})" if extra else model
        seen: dict[str, int] = {}
        for r in group:
            seen[r.label] = seen.get(r.label, 0) + 1
        count: dict[str, int] = {}
        for r in group:
            if seen[r.label] > 1:
                count[r.label] = count.get(r.label, 0) + 1
                r.label = f"{r.label} #{count[r.label]}"


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-").lower()[:40]


def build_report(
    paths: Iterable[str | Path],
    out_dir: str | Path,
    progress: Callable[[str], None] | None = None,
    strict: bool = False,
    runs: Sequence[RunData] | None = None,
) -> Report:
    """Read the logs under ``paths`` (or take ``runs``), write ``out_dir/report.md`` and its
    PNGs. ``strict``: raise when a section or a figure fails instead of noting it in the
    report. No logs under ``paths``: nothing is written (``Report.runs`` empty)."""
    from cotaudit.logs.files import load_runs
    from cotaudit.report.checkpoints import sections as checkpoint_series
    from cotaudit.report.markdown import render
    from cotaudit.report.validation_roc import sections as detection_roc

    out = Path(out_dir)
    skipped: list[tuple[str, str]] = []
    if runs is None:
        runs, skipped = load_runs(paths, progress)
    runs = list(runs)
    assign_labels(runs)
    report = Report(out, out / "report.md", runs, skipped=list(skipped))
    if not runs:
        return report
    out.mkdir(parents=True, exist_ok=True)

    by_study: dict[str, list[RunData]] = {}
    for r in runs:
        by_study.setdefault(r.study, []).append(r)
    known = [s for s in STUDIES if s in by_study] + [s for s in by_study if s not in STUDIES]
    for study in known:
        group = sorted(by_study[study], key=lambda r: (r.created, r.label))  # run order
        module_name = section_module(study)
        if module_name is None:
            report.notes.append(
                f"{len(group)} log(s) of task {md_code(group[0].task)}: no report section for it "
                f"(known: {', '.join(STUDIES)})."
            )
            continue
        try:
            module = importlib.import_module(module_name)
        except Exception as e:  # a study's code that does not import: skip its section
            if strict:
                raise
            report.notes.append(
                f"{report_text(study)}: section skipped, its report code failed to import "
                f"({type(e).__name__}: {report_text(e)})."
            )
            continue
        sections = []
        for i, run in enumerate(group, 1):  # each log's progress line is the loader's
            stem = f"{study}-{i:02d}-{_slug(run.label)}"
            try:
                sections.append(module.section(run, out, stem))
            except Exception as e:
                if strict:
                    raise
                failed = Section(f"{study} · {run.label}", run=run)
                failed.text(f"⚠️ Section failed: {type(e).__name__}: {report_text(e)}")
                sections.append(failed)
        report.sections[study] = sections
        undrawn = [
            b for sec in sections for b in sec.blocks if isinstance(b, FigureInfo) and b.failed
        ]
        if strict and undrawn:
            raise RuntimeError(f"{undrawn[0].path.name} could not be drawn: {undrawn[0].failed}")
        if len(group) > 1:
            try:
                comp = module.compare(sections, out, f"{study}-compare")
            except Exception as e:
                if strict:
                    raise
                comp = Section(f"{study} · comparison of runs")
                comp.text(f"⚠️ Comparison failed: {type(e).__name__}: {report_text(e)}")
            if comp is not None:
                report.comparisons[study] = comp
    for study, series in checkpoint_series(runs, out).items():
        report.sections[f"{study} · checkpoint series"] = series
    for study, rocs in detection_roc(runs, out).items():
        report.sections[f"{study} · detection ROC"] = rocs
    ordered = {
        s: report.sections[s] + ([report.comparisons[s]] if s in report.comparisons else [])
        for s in report.sections
    }
    report.markdown_path.write_text(
        render(ordered, runs, report.skipped, out, report.notes), encoding="utf-8"
    )
    if progress:
        progress(f"wrote {report.markdown_path} and {len(report.figures)} figure(s)")
    return report


__all__ = ["Report", "STUDIES", "assign_labels", "build_report", "section_module"]
