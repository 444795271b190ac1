"""Cross-sample batching for the in-process engines: one worker thread owns the model.

Samples run concurrently under Inspect; each verb call becomes either a *call* (an exclusive
piece of model work, e.g. scoring a continuation) or a decode *job* (a CoT generation, a prefix
sweep). The worker runs, in arrival order, every queued call, and admits queued jobs into the
running batch (continuous batching):

- a job *starts* alone (its prefill: prompt, CoT, forced-answer tag), then joins the batch;
- every decode step feeds one token per row of every active job in **one** forward pass; each
  job consumes its own rows' logits (its own sampling, generators and stop rule);
- a job leaves when its own rows are done; waiting jobs join at the next step.

Row cap (``max_rows`` of a job's stepper): a job is admitted when the rows already decoding
plus its own fit under the cap, or when nothing decodes (a job larger than the cap runs alone,
as it would unbatched). Jobs are admitted first come, first served: a job that does not fit
holds back those behind it, so a large prefix sweep is never starved by a stream of CoTs.

Results do not depend on the batch: a job's attention reads only its own cache, with the same
shapes as when it runs alone, and every row is sampled with its job's own generators. What is
left is the matrix products over the merged rows (see :mod:`cotaudit.engine.hf_batch`).
"""

from __future__ import annotations

import abc
import collections
import contextlib
import contextvars
import functools
import logging
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from typing import Any, Concatenate, ParamSpec, Protocol, TypeVar

T = TypeVar("T")
P = ParamSpec("P")

DEFAULT_MAX_BATCH_ROWS = 64
"""Rows (sequences) decoding together across samples, unless ``max_batch_rows`` says otherwise."""

CALLER_GONE: contextvars.ContextVar[threading.Event | None] = contextvars.ContextVar(
    "cotaudit_caller_gone", default=None
)
"""Set (by :meth:`cotaudit.engine.base.SyncVerbs._run`) around a verb's blocking call: the event
its waiting caller sets when it stops waiting (its sample cancelled: Ctrl-C, a time limit).
Work submitted under it is dropped, queued or mid-decode, at the next decode step, so an
interrupted run does not first finish every sweep in flight."""


class CallerGone(Exception):
    """The caller that submitted this work stopped waiting for it (see :data:`CALLER_GONE`)."""


class Stepper(Protocol):
    """Runs one decode step for a batch of jobs of the same model."""

    max_rows: int

    def step(self, jobs: Sequence[Job]) -> list[Any]:
        """Feed every job's next tokens in one forward pass; returns each job's logits."""
        ...


class Job(Protocol):
    """A decode job: ``rows`` sequences decoding together until its own stop rule."""

    rows: int

    @property
    def stepper(self) -> Stepper:
        """The stepper of the job's model (jobs of one stepper decode in one forward pass)."""
        ...

    def start(self) -> bool:
        """Prefill (alone) and pick the first tokens; True when already finished."""
        ...

    def advance(self, logits: Any) -> bool:
        """Pick the next tokens from this job's logits; True when finished."""
        ...

    def result(self) -> Any:
        """The job's output once finished."""
        ...


class DecodeJob(abc.ABC):
    """What every engine's decode jobs share: the job's ``stepper``, the stepper's ``engine``,
    and ``rows`` rows whose tokens its ``decoder`` picks (``decoder.advance(logits)``: True
    when every row is done)."""

    rows: int
    decoder: Any

    def __init__(self, stepper: Any) -> None:
        self.stepper = stepper
        self.engine = stepper.engine

    @abc.abstractmethod
    def start(self) -> bool:
        """Prefill (alone) and pick the first tokens; True when already finished."""

    def advance(self, logits: Any) -> bool:
        return self.decoder.advance(logits)

    @abc.abstractmethod
    def result(self) -> Any:
        """The job's output once finished."""


def job_spans(jobs: Sequence[Job]) -> tuple[list[tuple[int, int]], int]:
    """Each job's rows ``[a, b)`` in the merged batch of a step (the jobs' rows one after
    another, in order), and the batch's row count."""
    spans, start = [], 0
    for job in jobs:
        spans.append((start, start + job.rows))
        start += job.rows
    return spans, start


def warn_rows_dependent(logger: logging.Logger, backend: str, device: Any) -> None:
    """Warn on ``logger`` that ``backend``'s matrix products on ``device`` are not
    row-independent (batched decoding may then differ from unbatched in the last float bits)."""
    logger.warning(
        "cotaudit %s: matrix products on %s are not row-independent; batched decoding may "
        "differ from unbatched in the last float bits (-M max_batch_rows=1 for the unbatched "
        "computation)",
        backend,
        device,
    )


def run_alone(job: Job) -> Any:
    """Decode ``job`` by itself (the unbatched computation the batch must reproduce)."""
    done = job.start()
    while not done:
        [logits] = job.stepper.step([job])
        done = job.advance(logits)
    return job.result()


Active = tuple[Future[Any], Job, "threading.Event | None"]
"""A job in the running batch: its future, the job, its caller's :data:`CALLER_GONE` event."""


class Scheduler:
    """The model's worker thread: exclusive calls and batched decode jobs, in arrival order.

    ``context`` is entered once on the worker thread (e.g. ``torch.inference_mode``). The
    thread is a daemon that never exits (MLX aborts the process when a thread that ran MLX
    work exits first).
    """

    def __init__(
        self, name: str, context: Callable[[], contextlib.AbstractContextManager[Any]] | None = None
    ):
        self._cv = threading.Condition()
        self._queue: collections.deque[
            tuple[Future[Any], Any, tuple[Any, ...], bool, threading.Event | None]
        ]
        self._queue = collections.deque()
        self._context = context or contextlib.nullcontext
        self._thread = threading.Thread(target=self._loop, name=name, daemon=True)
        self._thread.start()

    @property
    def on_worker(self) -> bool:
        return threading.current_thread() is self._thread

    def submit(self, fn: Callable[..., T], *args: Any) -> Future[T]:
        """Run ``fn(*args)`` on the worker, exclusively, between decode steps."""
        return self._put(fn, args, job=False)

    def submit_job(self, job: Job) -> Future[Any]:
        """Decode ``job`` in the running batch; the future holds ``job.result()``."""
        return self._put(job, (), job=True)

    def call(self, fn: Callable[..., T], *args: Any) -> T:
        """``fn(*args)`` on the worker, waiting for it (inline when already on the worker)."""
        return fn(*args) if self.on_worker else self.submit(fn, *args).result()

    def run(self, jobs: Sequence[Job]) -> list[Any]:
        """Decode ``jobs`` (batched with each other and with other callers'), waiting for all.
        On the worker itself (a call that decodes) they run one after another, alone."""
        if self.on_worker:
            return [run_alone(j) for j in jobs]
        futures = [self.submit_job(j) for j in jobs]
        return [f.result() for f in futures]

    def _put(self, item: Any, args: tuple[Any, ...], job: bool) -> Future[Any]:
        future: Future[Any] = Future()
        with self._cv:
            self._queue.append((future, item, args, job, CALLER_GONE.get()))
            self._cv.notify()
        return future

    def _loop(self) -> None:
        with self._context():
            active: list[Active] = []
            while True:
                self._admit(active)
                self._drop_gone(active)
                if active:
                    self._step(active)

    def _admit(self, active: list[Active]) -> None:
        """Run queued calls and admit queued jobs while they fit (first come, first served);
        work whose caller is gone is dropped."""
        while True:
            with self._cv:
                while not self._queue and not active:
                    self._cv.wait()
                if not self._queue:
                    return
                future, item, args, is_job, gone = self._queue[0]
                if is_job and not (gone is not None and gone.is_set()):
                    rows = sum(j.rows for _, j, _ in active if j.stepper is item.stepper)
                    if rows and rows + item.rows > item.stepper.max_rows:
                        return
                self._queue.popleft()
            if not future.set_running_or_notify_cancel():
                continue
            if gone is not None and gone.is_set():
                future.set_exception(CallerGone())
                continue
            try:
                if not is_job:
                    future.set_result(item(*args))
                elif item.start():
                    future.set_result(item.result())
                else:
                    active.append((future, item, gone))
            except BaseException as e:  # noqa: BLE001 - handed to the caller
                future.set_exception(e)

    @staticmethod
    def _drop_gone(active: list[Active]) -> None:
        """Leave out of the batch each job whose caller is gone (its future gets
        :class:`CallerGone`)."""
        for entry in [e for e in active if e[2] is not None and e[2].is_set()]:
            entry[0].set_exception(CallerGone())
            active.remove(entry)

    def _step(self, active: list[Active]) -> None:
        """One decode step per stepper over all its active jobs; finished jobs leave."""
        groups: dict[int, list[Active]] = {}
        for entry in active:
            groups.setdefault(id(entry[1].stepper), []).append(entry)
        for group in groups.values():
            jobs = [j for _, j, _ in group]
            try:
                outs = jobs[0].stepper.step(jobs)
            except BaseException as e:  # noqa: BLE001 - every job of the failed step gets it
                for entry in group:
                    entry[0].set_exception(e)
                    active.remove(entry)
                continue
            for entry, logits in zip(group, outs, strict=True):
                future, job, _ = entry
                try:
                    if job.advance(logits):
                        future.set_result(job.result())
                        active.remove(entry)
                except BaseException as e:  # noqa: BLE001
                    future.set_exception(e)
                    active.remove(entry)


class OnWorker(Protocol):
    """An engine whose model work runs on its own :class:`Scheduler`."""

    _scheduler: Scheduler


E = TypeVar("E", bound=OnWorker)


def on_worker(fn: Callable[Concatenate[E, P], T]) -> Callable[Concatenate[E, P], T]:
    """Run the method on the engine's worker thread (inline when already there)."""

    @functools.wraps(fn)
    def wrapper(self: E, *args: P.args, **kwargs: P.kwargs) -> T:
        return self._scheduler.call(functools.partial(fn, self, *args, **kwargs))

    return wrapper
