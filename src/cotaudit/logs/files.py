"""Inspect log files on disk read into :class:`~cotaudit.logs.data.RunData`: which files are
logs, which a retry supersedes, and each log's header (run fields and metrics, through
:func:`cotaudit.logs.read.run_from_log`) with its per-sample scores (through Inspect's data
frames, :mod:`cotaudit.logs.frames`)."""

from __future__ import annotations

import json
import re
import zipfile
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

from cotaudit.logs.data import RunData
from cotaudit.logs.frames import samples_by_scorer
from cotaudit.logs.read import run_from_log
from cotaudit.params import error_line

LOG_SUFFIXES = (".eval", ".json")
_NOT_LOGS = {"logs.json", "listing.json"}

NOT_A_LOG = "not a readable Inspect log"
"""The start of the reason a file is skipped when it is no Inspect log."""
NOT_A_ZIP = f"{NOT_A_LOG}: not a zip archive (an .eval log is one)"
NOT_A_JSON_LOG = f"{NOT_A_LOG}: a file that is no Inspect JSON log (no log header)"
NO_LOG_REASONS = (NOT_A_ZIP, NOT_A_JSON_LOG)
"""The reasons :func:`not_a_log` gives: files that are no Inspect log at all (a model's
``config.json``, a tokenizer's files), told apart before Inspect reads them."""

_HEAD = 4096
_FIRST_KEY = re.compile(r'\A\s*\{\s*"((?:[^"\\]|\\.)*)"\s*:\s*(.?)', re.S)
_LOG_KEYS = frozenset(
    {"version", "status", "eval", "plan", "results", "stats", "error", "samples", "reductions"}
)


def not_a_log(path: Path) -> str | None:
    """Why the file at ``path`` is no Inspect log, read from its first bytes; None when it may
    be one (Inspect then reads it). An ``.eval`` log is a zip archive; an Inspect JSON log is a
    JSON object whose first key is one of the log's fields (Inspect writes ``"version"`` first,
    an integer): a model's ``config.json``, an organism's card, a tokenizer's files (whose
    ``"version"`` is a string) are none."""
    if path.suffix == ".eval":
        return None if zipfile.is_zipfile(path) else NOT_A_ZIP
    try:
        with path.open("rb") as f:
            head = f.read(_HEAD).decode("utf-8", errors="replace")
    except OSError:
        return None  # Inspect's own read says why
    match = _FIRST_KEY.match(head)
    if match is None:
        return NOT_A_JSON_LOG
    try:
        key = json.loads(f'"{match.group(1)}"')
    except ValueError:
        return NOT_A_JSON_LOG
    if key not in _LOG_KEYS or (key == "version" and not match.group(2).isdigit()):
        return NOT_A_JSON_LOG
    return None


def find_logs(paths: Iterable[str | Path]) -> list[Path]:
    """The log files named, and those under the folders named (recursively, sorted by path;
    Inspect names logs by start time, so a folder's logs come in run order)."""
    found: list[Path] = []
    for item in paths:
        p = Path(item).expanduser()
        if p.is_dir():
            found.extend(
                sorted(
                    f
                    for f in p.rglob("*")
                    if f.is_file()
                    and f.suffix in LOG_SUFFIXES
                    and f.name not in _NOT_LOGS
                    and not any(part.startswith(".") for part in f.relative_to(p).parts)
                )
            )
        elif p.is_file():
            found.append(p)
        else:
            raise FileNotFoundError(f"no such log file or folder: {item}")
    unique = list(dict.fromkeys(f.resolve() for f in found))
    return unique


def run_from_frames(path: str | Path) -> RunData:
    """:class:`RunData` of the log at ``path``: run fields, metric definitions and values from
    the log header, per-sample scores from :func:`samples_by_scorer` (the whole log is walked
    instead when it has several epochs or did not finish)."""
    from inspect_ai.log import read_eval_log

    header = read_eval_log(str(path), header_only=True)
    epochs = int(getattr(header.eval.config, "epochs", None) or 1)
    if epochs > 1 or header.status != "success":
        return run_from_log(read_eval_log(str(path)), str(path))
    order = {r.scorer: [str(s.sample_id) for s in r.samples] for r in (header.reductions or [])}
    header = header.model_copy(update={"reductions": None, "samples": None})
    run = run_from_log(header, str(path))  # run fields and metrics; no samples in a header
    scored, run.n_samples = samples_by_scorer(path, list(run.scorers), order)
    for name, scorer in run.scorers.items():
        scorer.samples = scored.get(name, [])
    return run


def superseded(headers: Mapping[Path, tuple[str, str, str]]) -> dict[Path, Path]:
    """Of logs given as ``{path: (task_id, model, created)}``, each superseded by a retry: a log
    whose ``eval.task_id`` (Inspect keeps it across ``eval-retry`` attempts, and names the log
    file by it) and model another log shares with a later ``eval.created``, mapped to the
    latest such log. Logs without a task id are never superseded; nor is a log of the same
    task on another model (a copy of a log edited to another model is another run)."""
    latest: dict[tuple[str, str], Path] = {}
    for path, (task_id, model, created) in headers.items():
        key = (task_id, model)
        if task_id and (key not in latest or created > headers[latest[key]][2]):
            latest[key] = path
    return {
        path: latest[(task_id, model)]
        for path, (task_id, model, _) in headers.items()
        if task_id and latest[(task_id, model)] != path
    }


def load_runs(
    paths: Iterable[str | Path],
    progress: Callable[[str], None] | None = None,
) -> tuple[list[RunData], list[tuple[str, str]]]:
    """Read every log under ``paths``: (runs, [(path, why skipped)]). ``progress`` gets one line
    per log. A file that is no Inspect log (:func:`not_a_log`, told from its first bytes
    without Inspect reading it, or its header does not read) and a log whose header reads but
    whose samples do not (a damaged member of the ``.eval`` zip) are skipped with the reason
    (:func:`cotaudit.params.error_line`); so is a log superseded by its retry
    (:func:`superseded`: ``inspect eval-retry`` writes a new log of the same task, which
    holds the samples the interrupted one finished), reported once, as the retry. The others
    are read."""
    from inspect_ai.log import read_eval_log

    files = find_logs(paths)
    runs: list[RunData] = []
    skipped: list[tuple[str, str]] = []
    headers: dict[Path, tuple[str, str, str]] = {}
    for f in files:
        why = not_a_log(f)
        if why is not None:
            skipped.append((str(f), why))
            continue
        try:
            header = read_eval_log(str(f), header_only=True)
        except Exception as e:  # not an eval log, or unreadable
            skipped.append((str(f), f"{NOT_A_LOG}: {error_line(e)}"))
            continue
        headers[f] = (
            str(header.eval.task_id or ""),
            str(header.eval.model),
            str(header.eval.created or ""),
        )
    later = superseded(headers)
    for i, f in enumerate(files, 1):
        if progress:
            progress(f"[{i}/{len(files)}] reading {f}")
        if f not in headers:
            if progress:
                progress(f"[{i}/{len(files)}] skipped {f}: {NOT_A_LOG}")
            continue
        if f in later:
            skipped.append((str(f), f"superseded by its retry {later[f]}"))
            if progress:
                progress(f"[{i}/{len(files)}] skipped {f}: superseded by its retry {later[f]}")
            continue
        try:
            run = run_from_frames(f)
        except Exception as e:  # the header read, a sample or the summaries did not
            skipped.append((str(f), f"a damaged log, its samples do not read: {error_line(e)}"))
            if progress:
                progress(f"[{i}/{len(files)}] skipped {f}: a damaged log ({error_line(e)})")
            continue
        runs.append(run)
        if progress:
            progress(
                f"[{i}/{len(files)}] {run.task} on {run.model}: {run.n_samples} samples, "
                f"status {run.status}"
            )
    return runs, skipped
