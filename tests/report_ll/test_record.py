"""The typed report_ll record: built from engine results, read from a store, its JSON the
ledger row's scoring columns plus the token log-probabilities."""

from __future__ import annotations

import pytest

from cotaudit.engine.base import LoglikResult
from cotaudit.studies.report_ll.record import REPORTS, STORE_KEY, TRANSCRIPTS, ReportScorings
from cotaudit.studies.report_ll.stats import ScoredFixture


def _results() -> dict[tuple[str, str], LoglikResult]:
    out = {}
    for i, (r, t) in enumerate((r, t) for r in REPORTS for t in TRANSCRIPTS):
        lps = [-0.5 * (i + 1), -0.25]
        out[(r, t)] = LoglikResult(sum(lps), 2, lps, [f"tok{i}", "."])
    return out


def test_record_from_results_names_each_scoring_by_report_and_transcript():
    rec = ReportScorings.from_results(_results())
    # honest/hack is the first pair: -0.5 - 0.25; concealing/clean the fourth: -2.0 - 0.25
    assert rec.s_h_hack == -0.75 and rec.s_h_clean == -1.25
    assert rec.s_c_hack == -1.75 and rec.s_c_clean == -2.25
    assert rec.n_c_clean == 2 and rec.token_logprobs["c_clean"].tokens == ["tok3", "."]


def test_record_json_layout_feeds_the_ledger_row():
    stored = ReportScorings.from_results(_results()).model_dump(mode="json")
    # the stored layout: s_*, n_*, token_logprobs{key: tokens, logprobs}
    assert set(stored) == {f"{p}_{a}_{t}" for p in "sn" for a in "hc" for t in TRANSCRIPTS} | {
        "token_logprobs"
    }
    assert stored["token_logprobs"]["h_hack"] == {
        "tokens": ["tok0", "."],
        "logprobs": [-0.5, -0.25],
    }
    rec = ReportScorings.from_store({STORE_KEY: stored})
    meta = {
        "fixture_id": "f1",
        "scenario_id": "s1",
        "family": "main",
        "register": "plain",
        "rendering": "shell",
        "richness": "outcome_clause",
        "request": "plain",
    }
    from cotaudit.studies.report_ll.fixtures.schema import FACTORS

    meta |= {f: meta.get(f, "x") for f in FACTORS}
    scored = ScoredFixture.from_ledger_row(meta | rec.scorings_row())
    # D_h = S(h, hack) - S(h, clean) = -0.75 - (-1.25)
    assert scored.scorings.s_h_hack - scored.scorings.s_h_clean == pytest.approx(0.5)


def test_record_missing_from_store_says_which_solver_to_run():
    with pytest.raises(RuntimeError, match="report_ll_scorings solver"):
        ReportScorings.from_store({})
