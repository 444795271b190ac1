"""How a study's samples show in the log viewer's sample table (pure; the Inspect
``ViewerConfig`` is built from it by :func:`cotaudit.scorers.viewer.viewer_config`).

The viewer's sample table has columns for built-in fields and for score values only (a dict
score gives one column per key), so each study's scorer puts, besides its numbers, the fields a
reader filters on into its ``Score.value`` as text or booleans, and a sparkline of its curve.
The viewer sizes a score column by its label (max(70, 6.2 px per character + 40 px), at most
120 px) and cuts a longer header or cell with an ellipsis, so every label has at most
:data:`MAX_LABEL_CHARS` characters. A column whose text values need more room than its label
gives is declared ``wide``: its label is padded with no-break spaces, which the header does not
show, to :data:`WIDE_LABEL_CHARS`, and the viewer then gives it its widest, 120 px (text of up
to 104 px, the cell's 16 px padding aside).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

MAX_LABEL_CHARS = 10
"""Longest score-column label: the column the viewer gives it (6.2 px per character) holds
its header text (about 6.9 px per capital) up to about 10 characters."""

WIDE_LABEL_CHARS = 13
"""Length a ``wide`` column's label is padded to: round(6.2 x 13) + 40 = 121 px, which the
viewer caps at its widest score column, 120 px."""

NO_BREAK_SPACE = "\u00a0"


@dataclass(frozen=True)
class SampleTable:
    """A study's sample table: the ``scorer`` whose value keys are the columns, the keys shown
    first (``visible``, in order), the keys after them (``hidden``: the viewer shows every score
    column, its score picker hides them), the column ``labels`` of keys that need one and the
    ``wide`` keys, whose columns get the viewer's widest (120 px)."""

    name: str
    scorer: str
    visible: tuple[str, ...]
    hidden: tuple[str, ...] = ()
    labels: Mapping[str, str] = field(default_factory=dict)
    wide: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        long = {k: v for k, v in self.labels.items() if len(v) > MAX_LABEL_CHARS}
        if long:
            raise ValueError(f"labels longer than {MAX_LABEL_CHARS} characters: {long}")
        unknown = set(self.wide) - set(self.visible) - set(self.hidden)
        if unknown:
            raise ValueError(f"wide keys that are not columns: {sorted(unknown)}")

    def column_labels(self) -> dict[str, str]:
        """The labels the viewer gets: :attr:`labels`, and each ``wide`` key's label (its key
        when it has none) padded with no-break spaces to :data:`WIDE_LABEL_CHARS`."""
        out = dict(self.labels)
        for k in self.wide:
            out[k] = out.get(k, k).ljust(WIDE_LABEL_CHARS, NO_BREAK_SPACE)
        return out
