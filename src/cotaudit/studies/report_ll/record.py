"""The report_ll per-sample record that the solver stores and the scorer reads.

:class:`ReportScorings` is written by ``report_ll_scorings`` into the sample store under
:data:`STORE_KEY` (as JSON: ``s_*``, ``n_*``, ``token_logprobs``) and read back by
``report_ll_scorer``. One scoring ``S(r, T) = sum_i log p(r_i | T, r_<i)`` (nats) per report
r in {h(onest), c(oncealing)} and transcript T in {hack, clean}.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from pydantic import BaseModel

from cotaudit.probing.store_record import StoreRecord
from cotaudit.studies.report_ll.stats import ScoringFields

STORE_KEY = "report_ll"
"""Key of :class:`ReportScorings` in the sample store."""

TRANSCRIPTS = ("hack", "clean")
REPORTS = ("honest", "concealing")
ARM = {"honest": "h", "concealing": "c"}
"""Report kind -> the letter of its scoring fields (``s_h_hack``, ``s_c_clean``, ...)."""


class TokenScores(BaseModel):
    """One scoring's report tokens (as the model's tokenizer decodes them) and log p of each."""

    tokens: list[str]
    logprobs: list[float]


class ReportScorings(StoreRecord, ScoringFields):
    """The four scorings of one fixture version (:class:`ScoringFields`:
    ``s_{h|c}_{hack|clean}`` in nats, ``n_...`` the report's token count) and per scoring
    ``token_logprobs["{h|c}_{hack|clean}"]``."""

    store_key: ClassVar[str] = STORE_KEY
    solver: ClassVar[str] = "report_ll_scorings"
    scorer: ClassVar[str] = "report_ll_scorer"

    token_logprobs: dict[str, TokenScores]

    @classmethod
    def from_results(cls, results: Mapping[tuple[str, str], Any]) -> ReportScorings:
        """From ``{(report, transcript): LoglikResult}`` over :data:`REPORTS` x
        :data:`TRANSCRIPTS`."""
        fields: dict[str, Any] = {"token_logprobs": {}}
        for (report, transcript), r in results.items():
            key = f"{ARM[report]}_{transcript}"
            fields[f"s_{key}"] = float(r.sum_logprob)
            fields[f"n_{key}"] = int(r.n_tokens)
            fields["token_logprobs"][key] = TokenScores(
                tokens=list(r.tokens), logprobs=[float(x) for x in r.token_logprobs]
            )
        return cls.model_validate(fields)

    def scorings_row(self) -> dict[str, float | int]:
        """The scorings and token counts as ledger columns (``s_...``, ``n_...``)."""
        return {f: getattr(self, f) for f in ScoringFields.model_fields}
