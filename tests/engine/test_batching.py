"""Cross-sample batching: the scheduler's join/leave rules, and results unchanged by
batching on real weights (tiny random model, SmolLM2-135M): greedy CoTs token for token,
sampled CoTs and sampled forced answers identical to each job decoded alone."""

from __future__ import annotations

import asyncio
import contextvars
import threading

import pytest
import torch
from helpers import run_eval

from cotaudit.engine.base import PrefixRequest
from cotaudit.engine.batcher import CALLER_GONE, CallerGone, Scheduler
from cotaudit.engine.hf_batch import DecodedCaches
from cotaudit.studies.selfcommit.prompts import SELFCOMMIT_FORCED_ANSWER_TAG, selfcommit_messages

QUESTIONS = [
    "Tom has 3 apples and buys 4 more. How many apples does he have?",
    "A box holds 12 eggs. How many eggs are in 5 boxes?",
    "Sara reads 15 pages a day. How many pages does she read in 6 days?",
    "A shirt costs $20 and is 25% off. What does it cost now?",
    "There are 30 students and 6 leave. How many stay?",
]
MESSAGES = [selfcommit_messages(q, "honest", 0) for q in QUESTIONS]


# --- the scheduler (pure logic, fake jobs) -------------------------------------------------


class FakeStepper:
    def __init__(self, max_rows: int) -> None:
        self.max_rows = max_rows
        self.steps: list[list[str]] = []

    def step(self, jobs):
        self.steps.append([j.name for j in jobs])
        if any(j.name == "boom" for j in jobs):
            raise RuntimeError("step failed")
        return [None] * len(jobs)


class FakeJob:
    """``rows`` rows that finish after ``steps`` decode steps."""

    def __init__(self, stepper, name: str, rows: int, steps: int) -> None:
        self.stepper, self.name, self.rows, self.left = stepper, name, rows, steps

    def start(self) -> bool:
        if self.name == "bad-start":
            raise ValueError("bad prompt")
        return self.left == 0

    def advance(self, logits) -> bool:
        self.left -= 1
        return self.left == 0

    def result(self):
        return self.name


def _submit_all(scheduler: Scheduler, jobs):
    """Queue ``jobs`` behind a held call, so the worker sees them all at once."""
    gate = threading.Event()
    scheduler.submit(gate.wait)
    futures = [scheduler.submit_job(j) for j in jobs]
    gate.set()
    return futures


def test_jobs_join_and_leave_under_the_row_cap_first_come_first_served():
    stepper = FakeStepper(max_rows=3)
    jobs = [
        FakeJob(stepper, "a", 1, 4),
        FakeJob(stepper, "b", 1, 2),
        FakeJob(stepper, "c", 2, 2),
        FakeJob(stepper, "big", 5, 1),
        FakeJob(stepper, "d", 1, 1),
    ]
    futures = _submit_all(Scheduler("test-batcher"), jobs)
    assert [f.result(timeout=10) for f in futures] == ["a", "b", "c", "big", "d"]
    # a and b decode together (2 rows); c (2 rows) would make 4 > 3: it waits, and so does
    # every job behind it; it joins when b leaves. big (5 rows > cap) runs alone once a and c
    # are done; d, behind it, waits for big to leave.
    assert stepper.steps == [["a", "b"], ["a", "b"], ["a", "c"], ["a", "c"], ["big"], ["d"]]


def test_failures_reach_their_callers_and_the_worker_keeps_going():
    stepper = FakeStepper(max_rows=8)
    scheduler = Scheduler("test-batcher-errors")
    bad_start, boom, ok = _submit_all(
        scheduler,
        [
            FakeJob(stepper, "bad-start", 1, 1),
            FakeJob(stepper, "boom", 1, 3),
            FakeJob(stepper, "ok", 1, 3),
        ],
    )
    with pytest.raises(ValueError, match="bad prompt"):
        bad_start.result(timeout=10)
    # a step that fails fails every job in it
    for f in (boom, ok):
        with pytest.raises(RuntimeError, match="step failed"):
            f.result(timeout=10)
    assert scheduler.submit(lambda: 42).result(timeout=10) == 42
    assert scheduler.run([FakeJob(stepper, "after", 2, 2)]) == ["after"]


def test_calls_on_the_worker_run_jobs_alone_inline():
    stepper = FakeStepper(max_rows=8)
    scheduler = Scheduler("test-batcher-inline")

    def decode_two():
        return scheduler.run([FakeJob(stepper, "x", 1, 2), FakeJob(stepper, "y", 1, 1)])

    assert scheduler.call(decode_two) == ["x", "y"]
    assert stepper.steps == [["x"], ["x"], ["y"]]


def test_work_of_a_caller_that_stopped_waiting_is_dropped():
    """A cancelled sample (Ctrl-C) sets its CALLER_GONE event: its job leaves the batch at the
    next step and its queued job is never started, while another caller's job decodes on."""
    stepper = FakeStepper(max_rows=8)
    scheduler = Scheduler("test-batcher-gone")
    gone = threading.Event()
    gate = threading.Event()
    scheduler.submit(gate.wait)
    context = contextvars.copy_context()
    context.run(CALLER_GONE.set, gone)
    endless = context.run(scheduler.submit_job, FakeJob(stepper, "endless", 1, 10**9))
    other = scheduler.submit_job(FakeJob(stepper, "other", 1, 3))
    gate.set()
    assert other.result(timeout=10) == "other"
    gone.set()
    with pytest.raises(CallerGone):
        endless.result(timeout=10)
    queued = context.run(scheduler.submit_job, FakeJob(stepper, "never", 1, 1))
    with pytest.raises(CallerGone):
        queued.result(timeout=10)
    assert stepper.steps[:3] == [["endless", "other"]] * 3
    assert not any("never" in step for step in stepper.steps)
    assert scheduler.run([FakeJob(stepper, "after", 1, 1)]) == ["after"]


# --- real weights: batched == alone ---------------------------------------------------------


def _record_steps(engine, monkeypatch):
    """Rows and jobs of every batched decode step the engine runs."""
    steps = []
    real = engine._stepper.step

    def step(jobs):
        steps.append([(type(j).__name__, j.rows) for j in jobs])
        return real(jobs)

    monkeypatch.setattr(engine._stepper, "step", step)
    return steps


def _alone_and_batched(engine, messages, cot_tokens, k, monkeypatch):
    """The same work unbatched (each job alone on the worker) and batched (all concurrent):
    greedy CoTs, sampled CoTs (n=2), then sampled forced-answer sweeps and sampled
    continuations from cuts (resampling) over the greedy CoTs, together with more sampled
    CoTs."""
    alone_greedy = [
        engine._locked(engine.generate_sync, m, cot_tokens, 0.0, 0)[0] for m in messages
    ]
    requests = [
        PrefixRequest(
            m,
            g.token_ids,
            list(range(0, len(g.token_ids) + 1, 10)),
            SELFCOMMIT_FORCED_ANSWER_TAG,
            k=k,
            max_tokens=6,
            temperature=0.7,
            seed=i,
        )
        for i, (m, g) in enumerate(zip(messages, alone_greedy, strict=True))
    ] + [
        # resampling: sampled continuations of the CoT itself from two cuts (no tag)
        PrefixRequest(m, g.token_ids, [3, 11], "", k=2, max_tokens=12, temperature=0.9, seed=i)
        for i, (m, g) in enumerate(zip(messages, alone_greedy, strict=True))
    ]
    alone_sweeps = [engine._locked(engine.continue_prefixes_sync, r) for r in requests]
    alone_sampled = [
        engine._locked(engine.generate_sync, m, cot_tokens // 2, 0.8, 5, 2) for m in messages
    ]
    steps = _record_steps(engine, monkeypatch)
    # the batched sweeps read the caches of the batched CoTs, not those kept from the alone ones
    monkeypatch.setattr(engine, "decoded", DecodedCaches())

    async def batched():
        greedy = await asyncio.gather(
            *[engine.generate(m, max_tokens=cot_tokens) for m in messages]
        )
        rest = await asyncio.gather(
            *[engine.continue_prefixes(r) for r in requests],
            *[
                engine.generate_n(m, max_tokens=cot_tokens // 2, temperature=0.8, seed=5, n=2)
                for m in messages
            ],
        )
        return greedy, rest[: len(requests)], rest[len(requests) :]

    greedy, sweeps, sampled = asyncio.run(batched())
    return (alone_greedy, alone_sweeps, alone_sampled), (greedy, sweeps, sampled), steps


def _assert_same(alone, batched, steps, n_messages):
    (a_greedy, a_sweeps, a_sampled), (b_greedy, b_sweeps, b_sampled) = alone, batched
    assert [g.token_ids for g in b_greedy] == [g.token_ids for g in a_greedy]
    assert [g.finish_reason for g in b_greedy] == [g.finish_reason for g in a_greedy]
    assert b_sweeps == a_sweeps
    # the continuations from a cut are sampled: the k of some cut differ
    assert any(len(set(cut)) > 1 for sweep in a_sweeps[n_messages:] for cut in sweep)
    assert [[g.token_ids for g in gens] for gens in b_sampled] == [
        [g.token_ids for g in gens] for gens in a_sampled
    ]
    # sampling really sampled: the two samples of a prompt differ somewhere
    assert any(gens[0].token_ids != gens[1].token_ids for gens in a_sampled)
    # and the work really was batched: every sample's CoT in one step, and sweeps with others
    assert max(len(s) for s in steps) >= n_messages
    assert any(len(s) > 1 and any(name == "SweepJob" for name, _ in s) for s in steps)


def test_hf_batched_equals_alone_tiny(tiny_engine, monkeypatch):
    assert tiny_engine.rows_independent  # MKL on x86: rows agree at the row multiple (16)
    alone, batched, steps = _alone_and_batched(tiny_engine, MESSAGES, 60, 3, monkeypatch)
    _assert_same(alone, batched, steps, len(MESSAGES))


def test_hf_batched_equals_alone_tiny_bfloat16(monkeypatch):
    """The bfloat16 weight option (``-M dtype=bfloat16``: this CPU's AVX-512 BF16 products) keeps
    its own results independent of the batch."""
    from cotaudit.providers.hf_probe import _load_engine, resolve_model_path

    engine = _load_engine(resolve_model_path("tiny"), "bfloat16", "cpu")
    assert engine.model.dtype == torch.bfloat16 and engine.rows_independent
    alone, batched, steps = _alone_and_batched(engine, MESSAGES, 60, 3, monkeypatch)
    _assert_same(alone, batched, steps, len(MESSAGES))


@pytest.mark.model
def test_hf_batched_equals_alone_default_model(default_engine, monkeypatch):
    alone, batched, steps = _alone_and_batched(default_engine, MESSAGES[:2], 32, 2, monkeypatch)
    _assert_same(alone, batched, steps, 2)


def test_row_cap_bounds_the_batch(monkeypatch):
    from cotaudit.providers.hf_probe import _load_engine, resolve_model_path

    engine = _load_engine(resolve_model_path("tiny"), "float32", "cpu", 2)
    assert engine.max_batch_rows == 2
    steps = _record_steps(engine, monkeypatch)

    async def run():
        return await asyncio.gather(*[engine.generate(m, max_tokens=12) for m in MESSAGES])

    gens = asyncio.run(run())
    assert max(sum(rows for _, rows in s) for s in steps) == 2
    alone = [engine._locked(engine.generate_sync, m, 12, 0.0, 0)[0].token_ids for m in MESSAGES]
    assert [g.token_ids for g in gens] == alone


def test_provider_max_batch_rows_arg():
    from inspect_ai.model import get_model

    model = get_model("hf-probe/tiny", max_batch_rows=3)
    assert model.api.probe_engine.max_batch_rows == 3
    for bad in (0, -1, "many", 2.5):
        with pytest.raises(ValueError, match="max_batch_rows must be a positive integer"):
            get_model("hf-probe/tiny", max_batch_rows=bad)


def _forward_rows(engine, monkeypatch):
    """The row count of every decode step (one token per row): the written-out step's, or the
    model's forward pass where there is none."""
    rows = []
    step = engine._stepper.decoder_step
    if step is not None:

        class Spy:
            def __getattr__(self, name):
                return getattr(step, name)

            def __call__(self, tokens, *args):
                rows.append(tokens.shape[0])
                return step(tokens, *args)

        monkeypatch.setattr(engine._stepper, "decoder_step", Spy())
        return rows
    real = engine.model.forward

    def forward(*args, input_ids=None, **kwargs):
        if input_ids is not None and input_ids.shape[1] == 1:
            rows.append(input_ids.shape[0])
        return real(*args, input_ids=input_ids, **kwargs)

    monkeypatch.setattr(engine.model, "forward", forward)
    return rows


def test_pad_rows_false_decodes_a_lone_cot_at_one_row(monkeypatch):
    from inspect_ai.model import get_model

    padded = get_model("hf-probe/tiny", max_batch_rows=1).api.probe_engine
    unpadded = get_model("hf-probe/tiny", max_batch_rows=1, pad_rows="false").api.probe_engine
    assert unpadded is not padded
    gens = {}
    for name, engine in (("padded", padded), ("unpadded", unpadded)):
        rows = _forward_rows(engine, monkeypatch)
        gens[name] = engine._locked(engine.generate_sync, MESSAGES[0], 8, 0.0, 0)[0]
        # one CoT row: a step of the row multiple padded (the others inert), 1 row unpadded
        assert set(rows) == {engine._stepper.multiple if name == "padded" else 1}, rows
    assert len(gens["unpadded"].token_ids) == len(gens["padded"].token_ids) == 8
    with pytest.raises(ValueError, match="pad_rows must be true or false"):
        get_model("hf-probe/tiny", pad_rows="sometimes")


def test_selfcommit_study_is_the_same_batched_and_unbatched(tmp_path):
    """The whole study through Inspect, 4 samples at --max-connections 4: every CoT and every
    forced answer of the batched run equals the unbatched run's (max_batch_rows=1)."""
    stores = {}
    for rows in (1, 64):
        log = run_eval(
            "tasks/selfcommit.py",
            "hf-probe/tiny",
            tmp_path / str(rows),
            model_args={"max_batch_rows": rows},
            task_args={
                "problems": 2,
                "max_cot_tokens": 40,
                "stride": 10,
                "k": 3,
                "temperature": 0.7,
            },
            max_connections=4,
        )
        stores[rows] = {
            s.id: (s.output.completion, s.store["selfcommit"]["answers"]) for s in log.samples
        }
    assert len(stores[1]) == 4
    assert stores[64] == stores[1]
