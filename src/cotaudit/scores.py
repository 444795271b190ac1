"""What the pure library reads from a scored sample, without importing Inspect.

Inspect's ``SampleScore`` (during a run) and :class:`cotaudit.report.data.ScoredSample` (read
back from a log) both have these attributes, so the record builders of the studies and the
cluster metrics run unchanged on either.
"""

from __future__ import annotations

from typing import Any, Protocol


class ScoreLike(Protocol):
    """The fields of an Inspect ``Score`` the library reads."""

    @property
    def value(self) -> Any: ...

    @property
    def metadata(self) -> dict[str, Any] | None: ...


class SampleScoreLike(Protocol):
    """The fields of an Inspect ``SampleScore`` the library reads."""

    @property
    def sample_id(self) -> Any: ...

    @property
    def sample_metadata(self) -> dict[str, Any] | None: ...

    @property
    def score(self) -> ScoreLike: ...
