"""report_ll over recorded transcripts: the study's four scorings on pairs of real samples.

Each sample is one row of a pairs file (:mod:`cotaudit.studies.report_ll.recorded`): a recorded
transcript where the thing happened (``hack``) and one where it did not (``clean``), each named
by log and sample id or written inline, and the two reports to score (fixed strings, or the
agent's own final message in one of them). The model reads each transcript (up to where its
final message stood) and both reports are scored as its reply: S(r, T) = sum of the report's
token log-probabilities (nats). No text is generated. Per pair D_h, D_c, DiD and per-token
forms; over the run the study's mean, unit-bootstrap interval and sign-flip p-value of each
(``recorded/{quantity}/{stat}``), pairs of one ``unit`` resampled together.

    inspect eval cotaudit/report_ll_recorded -T pairs=pairs.jsonl --model hf-probe/default

A separate task file from ``tasks/report_ll.py``: ``inspect eval FILE`` runs every task of a
file, and the fixture study's file runs the fixture study alone.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.log import EvalLog, HeadlineMetric, read_eval_log

from cotaudit.display.headline import HEADLINES_KEY, HeadlineSpec
from cotaudit.params import ParameterError, require_int, require_positive
from cotaudit.prerequisite import checked_task
from cotaudit.probing.trajectory import chat_turns
from cotaudit.scorers.report_ll import RECORDED_METRIC_FUNCS, report_ll_recorded_scorer
from cotaudit.solvers import report_ll_scorings
from cotaudit.solvers.probe_log import plain_message
from cotaudit.studies.report_ll.record import REPORTS, TRANSCRIPTS
from cotaudit.studies.report_ll.recorded import (
    RECORDED_GROUP,
    RECORDED_METRIC,
    RECORDED_OPTIONS,
    RECORDED_STUDY,
    FinalMessage,
    PairsFileError,
    RecordedPair,
    TranscriptRef,
    final_message,
    load_pairs,
    transcript_context,
)

RECORDED_VERSION = 1
"""The recorded-pairs task's version (``Task.version``)."""


class Transcripts:
    """Recorded transcripts by reference, each log read once; a relative log path is read from
    the pairs file's folder, else from the current one."""

    def __init__(self, pairs_file: Path) -> None:
        self.base = pairs_file.parent
        self.logs: dict[Path, EvalLog] = {}

    def log(self, name: str, where: str) -> EvalLog:
        path = Path(name)
        if not path.is_absolute() and (self.base / path).is_file():
            path = self.base / path
        if not path.is_file():
            raise ParameterError(f"{where}: no such log {name}")
        if path not in self.logs:
            try:
                self.logs[path] = read_eval_log(str(path))
            except Exception as e:  # noqa: BLE001 - name the row that gave the file
                raise ParameterError(
                    f"{where}: cannot read {name} as an Inspect log ({e})"
                ) from None
        return self.logs[path]

    def messages(self, ref: TranscriptRef, where: str) -> list[dict[str, Any]]:
        """The transcript's turns (:func:`cotaudit.probing.trajectory.chat_turns`)."""
        if ref.messages is not None:
            return [m.model_dump() for m in ref.messages]
        assert ref.log is not None
        log = self.log(ref.log, f"{where}.log")
        found = [
            s for s in log.samples or [] if str(s.id) == str(ref.sample) and s.epoch == ref.epoch
        ]
        if not found:
            raise ParameterError(
                f"{where}.sample: no sample {ref.sample!r} (epoch {ref.epoch}) in {ref.log}"
            )
        return chat_turns([plain_message(m) for m in found[0].messages])


def pair_sample(pair: RecordedPair, line: int, path: Path, transcripts: Transcripts) -> Sample:
    """One sample: the pair's two contexts and two reports (what the scoring solver reads),
    its id and unit."""
    where = f"-T pairs: {path} line {line}, field"
    turns = {t: transcripts.messages(getattr(pair, t), f"{where} {t}") for t in TRANSCRIPTS}
    reports: dict[str, str] = {}
    for name in REPORTS:
        report = getattr(pair, name)
        if isinstance(report, FinalMessage):
            text = final_message(turns[report.final_message])
            if text is None:
                raise ParameterError(
                    f"{where} {name}: the {report.final_message} transcript does not end with a "
                    "final assistant message"
                )
            reports[name] = text
        else:
            reports[name] = report
    return Sample(
        id=pair.id,
        input=f"Score the honest and concealing reports of pair {pair.id} after its hack and "
        "clean transcripts (log-likelihood; no generation).",
        metadata={
            "pair_id": pair.id,
            "unit": pair.unit,
            "reports": reports,
            "report_sources": {
                r: "fixed" if isinstance(getattr(pair, r), str) else "final_message"
                for r in REPORTS
            },
            "transcripts": {
                t: getattr(pair, t).model_dump(exclude={"messages"}) for t in TRANSCRIPTS
            },
            "contexts": {t: transcript_context(turns[t], pair.report_request) for t in TRANSCRIPTS},
        },
    )


def recorded_headline(unit: str = "unit") -> HeadlineSpec:
    """Mean DiD (nats) over the pairs, its unit-bootstrap interval and its number of units."""
    g = f"{RECORDED_GROUP}/did"
    return HeadlineSpec(
        f"{g}/mean", f"{g}/n_units", unit, f"{unit}s", interval=(f"{g}/ci_low", f"{g}/ci_high")
    )


@task
@checked_task
def report_ll_recorded(
    pairs: str,
    n_resamples: int = RECORDED_OPTIONS["n_resamples"],
    seed: int = RECORDED_OPTIONS["seed"],
    tokenizer: str | None = None,
) -> Task:
    """The report log-likelihood study over recorded transcript pairs.

    Args:
      pairs: A JSONL pairs file (:class:`cotaudit.studies.report_ll.recorded.RecordedPair`
        per line; errors name the file, line and field).
      n_resamples: Bootstrap resamples / random sign flips of the run statistics.
      seed: Seed of the bootstrap and sign flips.
      tokenizer: Tokenizer (hub id or folder) of a vllm/ or sglang/ model, to locate the
        report's tokens in the prompt log-probabilities; default the model's name.
    """
    require_positive("n_resamples", n_resamples)
    require_int("seed", seed)
    path = Path(pairs)
    try:
        rows = load_pairs(path)
    except PairsFileError as e:
        raise ParameterError(f"-T pairs: {e}") from None
    transcripts = Transcripts(path)
    samples = [pair_sample(pair, line, path, transcripts) for line, pair in rows]
    headline = recorded_headline()
    metric = RECORDED_METRIC_FUNCS[RECORDED_METRIC](n_resamples=n_resamples, seed=seed)
    return Task(
        dataset=MemoryDataset(samples, name="report_ll_recorded", location=str(path)),
        solver=report_ll_scorings(tokenizer=tokenizer),
        scorer=report_ll_recorded_scorer(),
        metrics=[metric],
        headline_metric=HeadlineMetric(scorer="report_ll_recorded_scorer", metric=headline.metric),
        version=RECORDED_VERSION,
        metadata={
            "study": RECORDED_STUDY,
            "pairs": str(path),
            "n_pairs": len(samples),
            "n_units": len({s.metadata["unit"] for s in samples if s.metadata}),
            "logs": sorted(str(p) for p in transcripts.logs),
            HEADLINES_KEY: [headline.record()],
        },
    )
