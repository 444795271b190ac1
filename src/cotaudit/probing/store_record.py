"""The per-sample record a study's solver saves in Inspect's sample store and its scorer reads.

A record is a pydantic model saved as plain JSON under its ``store_key`` (so a log's store holds
a plain dict, and every field added later has a default so older logs still validate).
"""

from __future__ import annotations

from typing import Any, ClassVar, Protocol

from pydantic import BaseModel


class SampleStore(Protocol):
    """What a record is read from: Inspect's ``Store``, or a log's store as a dict."""

    def get(self, key: str, default: Any = None) -> Any: ...


class StoreRecord(BaseModel):
    """Base of the stored records: ``store_key`` in the store, written by ``solver``, read by
    ``scorer`` (names for the error when the solver did not run)."""

    store_key: ClassVar[str]
    solver: ClassVar[str]
    scorer: ClassVar[str]

    @classmethod
    def from_store(cls, store: SampleStore) -> Any:
        """The record in a sample store; a clear error when the solver did not run."""
        rec = store.get(cls.store_key)
        if rec is None:
            raise RuntimeError(f"{cls.scorer} needs the {cls.solver} solver to run first")
        return cls.model_validate(rec)

    def save(self, store: Any) -> None:
        """Save the record in a sample store (``Store.set``) as JSON."""
        store.set(self.store_key, self.model_dump(mode="json"))
