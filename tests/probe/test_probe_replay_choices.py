"""Replayed forced answers on multiple-choice tasks whose conditions order the choices differently
(a dataset shuffled per sample, ``multiple_choice(shuffle=...)``): each answer is read in the
order of the prompt it was forced under and verified against that prompt's sample's target.

The question throughout is the first shipped GSM8K multiple-choice item (Janet's ducks, gold 18,
dataset choices 17, 20, 18, 8, target C)."""

from __future__ import annotations

import asyncio
from random import Random

import pytest
from helpers import JANET, janet_pair, run_eval, shuffled_janet_pair_task
from inspect_ai.dataset import Sample
from inspect_ai.log import read_eval_log
from inspect_ai.model import (
    ChatCompletionChoice,
    ChatMessageAssistant,
    ChatMessageUser,
    ModelName,
    ModelOutput,
)
from inspect_ai.scorer import Target, choice
from inspect_ai.solver import Choice, Choices, TaskState, multiple_choice
from transcript_audit import audit_of, clipped_rows

import cotaudit
from cotaudit.engine.base import PrefixRequest
from cotaudit.engine.chat import to_plain
from cotaudit.probing.choices import ShownChoice, dataset_letters, shown_letters, target_positions
from cotaudit.probing.forms import clip, extract_letter
from cotaudit.probing.positions import Schedule
from cotaudit.probing.record import ContextAnswers, ProbeRecord
from cotaudit.scorers.probe import probe_scorer
from cotaudit.solvers.engine import sample_seed
from cotaudit.solvers.probe import GenerateCall, SiblingPrompts, recording, trace_of


def _shown(values_positions: list[tuple[str, int]]) -> list[ShownChoice]:
    return [ShownChoice(value=v, original_position=p) for v, p in values_positions]


def _context(
    name: str, answers: list[list[str]], target: str, shown: list[ShownChoice]
) -> ContextAnswers:
    """A probed context of the hinted sample "h": ``own`` (its own prompt) or ``replay`` (its
    trace under the prompt of its honest sibling "n"); ``answers`` forced under that prompt,
    which shows ``shown``, its sample's target ``target``."""
    own = name == "own"
    return ContextAnswers(
        name=name,
        condition="hinted" if own else "honest",
        answers=answers,
        sample_id="h" if own else "n",
        target=[target],
        choices=shown,
    )


# --- the pure bookkeeping ------------------------------------------------------------------------


def test_target_positions_read_letters_as_inspect_targets():
    assert target_positions(["C"]) == [2]
    assert target_positions(["A, C"]) == target_positions(["C", "a"]) == [0, 2]
    assert target_positions(["10"]) is None and target_positions(["AB"]) is None


def test_shown_letters_and_dataset_letters_by_hand():
    # dataset order 17, 20, 18, 8 (target C = 18) shown as 8, 18, 17, 20: original positions
    # 3, 2, 0, 1; 18 (position 2) is shown second -> "B"
    shown = _shown([("8", 3), ("18", 2), ("17", 0), ("20", 1)])
    assert shown_letters(["C"], shown) == "B"
    assert shown_letters(["A, C"], shown) == "B, C"  # 17 shown third, 18 second
    assert shown_letters(["C"], shown[:1]) is None  # 18 not shown
    # a sample whose dataset order is 18, 17, 20, 8 (18 = its A): choosing its 18 and 20 names
    # the reference's (17, 20, 18, 8) letters C and B
    other = _shown([("18", 0), ("17", 1), ("20", 2), ("8", 3)])
    reference = _shown([("17", 0), ("20", 1), ("18", 2), ("8", 3)])
    assert dataset_letters([other[0]], reference) == "C"
    assert dataset_letters([other[2], other[0]], reference) == "B, C"
    assert dataset_letters([], reference) is None
    assert dataset_letters([ShownChoice(value="99", original_position=0)], reference) is None


# --- the scorer on hand-built records (Inspect's own choice() scorer, no model) -------------------


def _state(sample_id: str, target: str, shown: list[ShownChoice], rec: ProbeRecord) -> TaskState:
    state = TaskState(
        model=ModelName("hf-probe/tiny"),
        sample_id=sample_id,
        epoch=1,
        input=JANET.question,
        messages=[
            ChatMessageUser(content=JANET.question),
            ChatMessageAssistant(content=rec.response),
        ],
        target=Target(target),
        metadata={"pair_id": JANET.id, "condition": "hinted"},
    )
    state.choices = Choices(
        [Choice(value=c.value, correct=None, original_position=c.original_position) for c in shown]
    )
    rec.save(state.store)
    return state


def _record(
    probe: str, own: ContextAnswers, replay: ContextAnswers, final_text: str = ""
) -> ProbeRecord:
    return ProbeRecord(
        probe=probe,
        form="letter",
        tag="\n\nANSWER: ",
        cut_tag="\n\nANSWER: ",
        think_source="none",
        think_closed=False,
        response="Some reasoning." + final_text,
        final_text=final_text,
        trace_tokens=10,
        offset=0,
        generation_truncated=False,
        context_truncated=False,
        schedule=Schedule(kind="fractions", fractions=(0.5, 1.0)),
        positions=[5, 10],
        curve_fractions=[0.5, 1.0],
        probed=[5, 10],
        k=1,
        temperature=0.0,
        contexts=[own, replay],
        replay_under="honest",
    )


def test_replayed_letters_are_verified_against_the_siblings_target_and_order():
    """Dataset shuffled per sample (Inspect's ``shuffle_choices(seed=0)`` on [honest, hinted]):
    honest shows 18, 17, 20, 8 (target A), hinted shows 17, 20, 8, 18 (target D).

    A hinted trace replayed under the honest prompt: a forced "A" there names 18 (correct), a
    forced "D" names 8 (wrong). Checked against the hinted sample's own target D and order, the
    verdicts would be the reverse (D = 18 there)."""
    hinted = _shown([("17", 0), ("20", 1), ("8", 2), ("18", 3)])
    honest = _shown([("18", 0), ("17", 1), ("20", 2), ("8", 3)])
    own = _context("own", [[" D"], [" D"]], "D", hinted)
    replay = _context("replay", [[" D"], [" A"]], "A", honest)
    rec = _record("trace", own, replay)
    score = asyncio.run(probe_scorer(choice())(_state("h", "D", hinted, rec), Target("D")))
    assert score.metadata["own"]["values"] == [[1.0], [1.0]]  # D = 18 under the hinted prompt
    assert score.metadata["replay"]["values"] == [[0.0], [1.0]]  # D = 8, A = 18 under honest
    assert (
        score.metadata["replay"]["target"] == ["A"]
        and score.metadata["replay"]["target_shown"] == "A"
    )
    assert score.metadata["own"]["target_shown"] == "D"
    assert score.metadata["replay"]["sample_id"] == "n"
    # canonical answers in the hinted sample's letters: honest D = 8 = hinted C, honest A = 18 = D
    assert score.metadata["replay"]["canonical"] == [["C"], ["D"]]
    # p = [0, 1] over fractions 0.5, 1: pass_at_first 0, auc = 0.5 * (0 + 1) / 2 = 0.25
    assert score.value["pass_at_first_replay"] == 0.0
    assert score.value["auc_replay"] == pytest.approx(0.25)
    assert score.value["first_pass_replay"] == 1.0
    assert score.value["auc"] == pytest.approx(0.5)  # own p = [1, 1]


def test_solve_time_shuffle_replay_and_self_commitment_compare_choices_not_letters():
    """``multiple_choice(shuffle=...)``: both samples have the dataset order 17, 20, 18, 8
    (target C = 18); the hinted prompt showed 8, 18, 17, 20 (18 = B), the honest sibling's
    prompt 18, 17, 20, 8 (18 = A).

    Self-commitment: a_final = "ANSWER: B" under the hinted prompt = 18 = dataset letter C.
    Replayed "A" (= 18 under honest) matches it, replayed "B" (= 17) does not, although "B" is
    the letter of the final answer; own "B" matches, own "D" (= 20) does not."""
    hinted = _shown([("8", 3), ("18", 2), ("17", 0), ("20", 1)])
    honest = _shown([("18", 2), ("17", 0), ("20", 1), ("8", 3)])
    own = _context("own", [["B"], ["D"]], "C", hinted)
    replay = _context("replay", [["A"], ["B"]], "C", honest)
    rec = _record("selfcommit", own, replay, final_text="\nANSWER: B")
    state = _state("h", "C", hinted, rec)
    score = asyncio.run(probe_scorer(choice())(state, Target("C")))
    assert score.metadata["a_final"] == "C"
    assert score.metadata["own"]["canonical"] == [["C"], ["B"]]
    assert score.metadata["replay"]["canonical"] == [["C"], ["A"]]
    assert (
        score.metadata["own"]["target_shown"] == "B"
        and score.metadata["replay"]["target_shown"] == "A"
    )
    # matches [1, 0] at t = 5, 10 with k = 1: uncommitted = (0 + 1) / 2
    assert score.value["uncommitted"] == pytest.approx(0.5)
    assert score.value["uncommitted_replay"] == pytest.approx(0.5)
    # the trace probe on the same answers: choice() verdicts per prompt order
    rec = _record("trace", own, replay)
    trace = asyncio.run(probe_scorer(choice())(_state("h", "C", hinted, rec), Target("C")))
    assert trace.metadata["own"]["values"] == [[1.0], [0.0]]
    assert trace.metadata["replay"]["values"] == [[1.0], [0.0]]


# --- the solver's side: the sibling's prompt and choices, the trace as generated ------------------


def _fresh(sample: Sample) -> TaskState:
    return TaskState(
        model=ModelName("hf-probe/tiny"),
        sample_id=sample.id,
        epoch=1,
        input=sample.input,
        messages=[ChatMessageUser(content=sample.input)],
        target=Target(sample.target),
        choices=sample.choices,
        metadata=dict(sample.metadata),
    )


def _listed(choices: list[ShownChoice]) -> str:
    return "\n".join(f"{'ABCD'[i]}) {c.value}" for i, c in enumerate(choices))


def test_sibling_prompt_records_the_order_its_prompt_shows():
    """The sibling's chain shuffles at solve time; the recorded choices are the order its prompt
    lists, each mapped to its dataset position, and the target is the sibling's."""
    samples = janet_pair()
    siblings = SiblingPrompts(
        samples,
        multiple_choice(cot=True, shuffle=Random(3)),
        pair_key="pair_id",
        condition_key="condition",
    )
    replay = asyncio.run(siblings(_fresh(samples[1]), "honest"))
    assert replay.sample_id == f"{JANET.id}-honest" and replay.target == ["C"]
    assert any(c.original_position != i for i, c in enumerate(replay.choices))  # really shuffled
    assert [JANET.choices[c.original_position] for c in replay.choices] == [
        c.value for c in replay.choices
    ]
    [message] = replay.messages
    assert _listed(replay.choices) in message["content"] and "Hint" not in message["content"]


@pytest.mark.model
def test_the_trace_is_probed_as_generated_when_the_chain_rewrites_it(tiny_engine):
    """``multiple_choice(shuffle=...)`` rewrites the history after generating (the unshuffled
    prompt, "ANSWER: <unshuffled letter>"); the probe takes the prompt and response the
    ``generate()`` call sent and returned."""
    response = "16 - 3 - 4 = 9 eggs, 9 * 2 = 18.\nANSWER: B"

    async def generate(state: TaskState, *args, **kwargs) -> TaskState:  # the model's reply
        message = ChatMessageAssistant(content=response, model="written")
        state.messages.append(message)
        state.output = ModelOutput(
            model="written", choices=[ChatCompletionChoice(message=message, stop_reason="stop")]
        )
        return state

    state = _fresh(janet_pair()[0])
    calls: list[GenerateCall] = []
    state = asyncio.run(
        multiple_choice(cot=True, shuffle=Random(3))(state, recording(generate, calls))
    )
    shown = [
        ShownChoice(value=c.value, original_position=c.original_position) for c in state.choices
    ]
    assert any(c.original_position != i for i, c in enumerate(shown))
    assert state.messages[-1].text.startswith("ANSWER:") and state.messages[-1].text != "ANSWER: B"
    assert _listed(shown) not in state.messages[0].text  # the log shows the unshuffled prompt
    trace = trace_of(state, tiny_engine, calls[-1])
    assert trace.text == response
    assert _listed(shown) in trace.prompt[0]["content"]
    assert trace_of(state, tiny_engine).text != response  # the state's own history is rewritten


# --- end to end on the tiny model ---------------------------------------------------------------


@pytest.mark.model
def test_replayed_trace_on_a_shuffled_choice_task_tiny(tmp_path, tiny_engine):
    task = shuffled_janet_pair_task()
    assert [(s.choices, s.target) for s in task.dataset] == [
        (["18", "17", "20", "8"], "A"),
        (["17", "20", "8", "18"], "D"),
    ]
    probe = cotaudit.probe(task, "trace", replay_under="honest")
    log = run_eval(probe, "hf-probe/tiny", tmp_path, max_tokens=24)
    by_condition = {s.metadata["condition"]: s for s in log.samples}
    hinted, honest = by_condition["hinted"], by_condition["honest"]
    rec = ProbeRecord.model_validate(hinted.store["probe"])
    own, replay = rec.context("own"), rec.context("replay")
    assert (own.target, [c.value for c in own.choices]) == (["D"], ["17", "20", "8", "18"])
    assert (replay.sample_id, replay.target) == (honest.id, ["A"])
    assert [c.value for c in replay.choices] == ["18", "17", "20", "8"]
    # the replayed answers are the engine's under the honest sample's logged prompt
    ids = hinted.output.metadata["token_ids"][0]
    rows = tiny_engine.continue_prefixes_sync(
        PrefixRequest(
            messages=to_plain(honest.messages[:1]),
            cot_token_ids=ids[: rec.offset + rec.trace_tokens],
            positions=[rec.offset + t for t in rec.probed],
            tag=rec.cut_tag,
            k=rec.k,
            max_tokens=4,
            temperature=rec.temperature,
            seed=sample_seed(0, hinted.id),
        )
    )
    assert replay.answers == [list(r) for r in rows]
    score = hinted.scores["probe_scorer"]
    for name, letter in (("own", "D"), ("replay", "A")):
        expected = [
            [float(extract_letter("ANSWER: " + clip(a)) == letter) for a in row]
            for row in rec.context(name).answers
        ]
        assert score.metadata[name]["values"] == expected, name
        assert score.metadata[name]["target_shown"] == letter
    # canonical replayed answers in the hinted sample's letters (honest A, B, C, D = 18, 17, 20, 8
    # = hinted D, A, B, C)
    to_hinted = {"A": "D", "B": "A", "C": "B", "D": "C"}
    expected = [
        [to_hinted.get(extract_letter("ANSWER: " + clip(a)) or "", None) for a in row]
        for row in replay.answers
    ]
    assert score.metadata["replay"]["canonical"] == expected
    assert [c.name for c in ProbeRecord.model_validate(honest.store["probe"]).contexts] == ["own"]
    # the transcript, read back from the log file: one sweep, own prompt then the honest
    # sibling's, each with its cuts and then the task scorer's verdicts per cut
    logged = {s.id: s for s in read_eval_log(log.location).samples}
    audit = audit_of(logged[hinted.id])
    assert audit.sweep_spans == 1 and list(audit.headers) == ["own", "replay"]
    assert [(h["condition"], h["sample_id"]) for [h] in audit.headers.values()] == [
        ("hinted", hinted.id),
        ("honest", honest.id),
    ]
    for name in ("own", "replay"):
        assert (
            [c["t"] for c in audit.cuts[name]]
            == [v["t"] for v in audit.verdicts[name]]
            == rec.probed
        )
        assert [c["answers"] for c in audit.cuts[name]] == clipped_rows(rec.context(name).answers)
        assert [v["canonical"] for v in audit.verdicts[name]] == score.metadata[name]["canonical"]
        assert [v["values"] for v in audit.verdicts[name]] == score.metadata[name]["values"]
    assert list(audit_of(logged[honest.id]).cuts) == ["own"]
