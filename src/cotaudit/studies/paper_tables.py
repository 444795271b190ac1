"""A study's published numbers read off its tables: a row of cells, or a whole table, as
:class:`~cotaudit.studies.paper.PaperValue` entries keyed by this package's metric names."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from cotaudit.studies.paper import PaperValue


def published_row(
    prefix: str, fields: Sequence[str], values: Sequence[float | str], where: str
) -> dict[str, PaperValue]:
    """One row of published cells: ``{prefix}/{field}`` -> the study's value of that field
    (``fields`` and ``values`` in the same order), each stated at ``where``."""
    return {
        f"{prefix}/{field}": PaperValue(value, where)
        for field, value in zip(fields, values, strict=True)
    }


def published_table(
    metric: str,
    columns: Sequence[str],
    rows: Mapping[str, Sequence[float | str]],
    where: str,
) -> dict[str, PaperValue]:
    """A published table cell by cell: ``{metric}/{row}/{column}`` -> the cell (each row's
    values in ``columns`` order), each stated at ``where``."""
    return {
        key: value
        for row, values in rows.items()
        for key, value in published_row(f"{metric}/{row}", columns, values, where).items()
    }
