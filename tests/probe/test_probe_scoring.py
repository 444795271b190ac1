"""The generic probe's score of one sample from its record and the task scorer's verdicts
(:class:`cotaudit.probing.scoring.ProbeScoring`), on records written by hand."""

from __future__ import annotations

import math

from cotaudit.probing.positions import Schedule
from cotaudit.probing.record import ContextAnswers, ProbeKind, ProbeRecord
from cotaudit.probing.scoring import ProbeScoring, Verdicts, VerifiedAgainst
from cotaudit.probing.summaries import value_keys

ANSWERS = [["B", "C"], ["B", "B"]]
"""k = 2 forced answers at each of the cuts t = 5 and t = 10 of a T = 10 trace."""
VERDICTS = {"own": Verdicts([[1.0, 0.0], [1.0, 1.0]], [["B", "C"], ["B", "B"]])}
AGAINST = {"own": VerifiedAgainst(["B"], "B")}


def _record(probe: ProbeKind, replay_under: str | None = None) -> ProbeRecord:
    return ProbeRecord(
        probe=probe,
        form="letter",
        tag="ANSWER:",
        cut_tag="ANSWER:",
        think_source="none",
        think_closed=False,
        response="a response",
        final_text="ANSWER: B",
        trace_tokens=10,
        offset=0,
        generation_truncated=False,
        context_truncated=False,
        schedule=Schedule(kind="stride", stride=5),
        positions=[5, 10],
        curve_fractions=[0.5, 1.0],
        probed=[5, 10],
        k=2,
        temperature=1.0,
        contexts=[ContextAnswers(name="own", condition="hinted", answers=ANSWERS)],
        replay_under=replay_under,
    )


def test_a_trace_probe_scores_its_pass_rates() -> None:
    """p = (1/2, 2/2) over f = (0.5, 1): AUC = 0.5 * (0.5 + 1) / 2 = 0.375, the first pass at
    f = 0.5 (p >= 0.5 there), no zero probe; the answer is the task scorer's."""
    parts = ProbeScoring(_record("trace"), (0.8,)).score(1.0, "B", None, VERDICTS, AGAINST)
    assert list(parts.value) == value_keys("trace", (0.8,), replayed=False)
    assert parts.value["task_score"] == 1.0
    assert parts.value["auc"] == 0.375
    assert parts.value["pass_at_first"] == 0.5
    assert parts.value["first_pass"] == 0.5 and parts.value["first_pass_censored"] == 0.0
    assert math.isnan(parts.value["p0"])
    assert parts.answer == "B"
    assert parts.metadata["own"] == {
        "condition": "hinted",
        "sample_id": None,
        "target": ["B"],
        "target_shown": "B",
        "answers": ANSWERS,
        "canonical": [["B", "C"], ["B", "B"]],
        "values": [[1.0, 0.0], [1.0, 1.0]],
    }
    assert parts.metadata["probed"] == [5, 10] and "a_final" not in parts.metadata
    assert parts.explanation.startswith("trace probe, form letter, T = 10 tokens, k = 2\n\n")


def test_a_selfcommit_probe_matches_the_final_answer_and_fills_a_missing_replay() -> None:
    """a_final = B: 1 of 2 answers match at t = 5, 2 of 2 at t = 10, so c = (0.5, 1) and
    tau_0.8 = 10 / 10; the run replays but this sample has no replayed prompt, so every curve
    key has a NaN ``_replay`` twin. The answer is a_final, not the task scorer's."""
    rec = _record("selfcommit", replay_under="honest")
    parts = ProbeScoring(rec, (0.8,), 0.8).score(0.0, "C", "B", VERDICTS, AGAINST)
    assert list(parts.value) == value_keys("selfcommit", (0.8,), replayed=True)
    assert parts.value["has_final"] == 1.0
    assert parts.value["tau_0.8"] == 1.0
    assert math.isnan(parts.value["c0"])
    curve_keys = [k for k in parts.value if k not in ("task_score", "has_final")]
    replayed = [k for k in curve_keys if k.endswith("_replay")]
    assert replayed and all(math.isnan(parts.value[k]) for k in replayed)
    assert parts.answer == "B" and parts.metadata["a_final"] == "B"
    assert parts.explanation.startswith(
        "selfcommit probe, form letter, T = 10 tokens, k = 2; a_final = B\n\n"
    )


def test_a_selfcommit_probe_without_a_final_answer_has_no_curve() -> None:
    parts = ProbeScoring(_record("selfcommit"), (0.8,)).score(0.0, "C", None, VERDICTS, AGAINST)
    assert parts.value["has_final"] == 0.0
    assert math.isnan(parts.value["tau_0.8"])
    assert parts.answer is None and parts.metadata["a_final"] is None
    assert parts.explanation == (
        "selfcommit probe, form letter, T = 10 tokens, k = 2; a_final = none\n\n"
        "No final answer: no c(t)."
    )
