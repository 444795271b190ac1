"""The recorded-log probe on real logs: an agent log written by Inspect's own tool loop with
scripted tool calls (``mockllm/``), a single-response log written by Inspect's ``hf/`` provider
(the tiny random model's folder), and a log written by the generic probe on the embedded model
(recorded against live). Each forced answer is recomputed straight from the engine: the
recorded prompt, the recorded text tokenized by the probing model, cut at the recorded
positions, then the cut tag, seeded as the probe seeds a sample."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest
from helpers import run_eval
from inspect_ai import Task
from inspect_ai.dataset import Sample
from inspect_ai.model import (
    ChatCompletionChoice,
    ChatMessageAssistant,
    ContentReasoning,
    ContentText,
    ModelOutput,
    ModelUsage,
    get_model,
)
from inspect_ai.scorer import match, model_graded_qa, pattern, value_to_float
from inspect_ai.solver import generate, use_tools
from inspect_ai.tool import Tool, ToolCall, tool
from inspect_ai.util import registry_info
from transcript_audit import audit_of

import cotaudit
from cotaudit.engine.base import PrefixRequest
from cotaudit.engine.chat import to_plain
from cotaudit.logs.read import run_from_log
from cotaudit.models.tiny import tiny_model_path
from cotaudit.params import ParameterError
from cotaudit.probing.forms import clip, extract_string
from cotaudit.probing.record import ProbeRecord
from cotaudit.probing.think import compose_reasoning
from cotaudit.report import probe as probe_report
from cotaudit.solvers.engine import sample_seed

ANSWER_TOKENS = 4
MOCK = "mockllm/model"


@tool
def add() -> Tool:
    async def execute(a: int, b: int) -> int:
        """Add two integers.

        Args:
          a: The first integer.
          b: The second integer.
        """
        return a + b

    return execute


@tool
def submit() -> Tool:
    async def execute(answer: str) -> str:
        """Submit the final answer.

        Args:
          answer: The answer.
        """
        return "submitted"

    return execute


def _scripted(*outputs: ModelOutput):
    for o in outputs:  # mockllm counts tokens with tiktoken (a download) unless usage is set
        o.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
    return get_model("mockllm/model", custom_outputs=list(outputs))


def _agent_log(log_dir: Path, scorer: bool = True):
    """One sample through Inspect's tool loop: add(1, 2) with a note, its result, submit("3"),
    its result, a closing message; scored by match(numeric=True)."""
    model = _scripted(
        ModelOutput.for_tool_call(
            "mockllm/model", "add", {"a": 1, "b": 2}, content="I add 1 and 2."
        ),
        ModelOutput.for_tool_call("mockllm/model", "submit", {"answer": "3"}, content="It is 3."),
        ModelOutput.from_content("mockllm/model", "Done."),
    )
    task = Task(
        dataset=[Sample(id="q1", input="What is 1 + 2?", target="3")],
        solver=[use_tools([add(), submit()]), generate()],
        scorer=match(numeric=True) if scorer else None,
    )
    return run_eval(task, model, log_dir)


def _record(sample) -> ProbeRecord:
    return ProbeRecord.model_validate(sample.store["probe"])


def _probed_on_tiny(recorded, tmp_path: Path, **settings):
    """``recorded``'s log probed on hf-probe/tiny (``settings``: ``probe_log``'s parameters; forced
    answers of at most :data:`ANSWER_TOKENS` tokens), logged under ``tmp_path / "probe"``: the
    log, its one sample and that sample's probe record."""
    task = cotaudit.probe_log(recorded.location, answer_max_tokens=ANSWER_TOKENS, **settings)
    log = run_eval(task, "hf-probe/tiny", tmp_path / "probe")
    [probed] = log.samples
    return log, probed, _record(probed)


def _recomputed(engine, prompt, rec: ProbeRecord, sample_id: str, max_tokens: int):
    """The forced answers straight from the engine: the recorded prompt, the probed text
    tokenized by the probing model, cut at offset + t, then the cut tag."""
    ids = engine.tokenize(rec.response)
    return engine.continue_prefixes_sync(
        PrefixRequest(
            messages=prompt,
            cot_token_ids=ids[: rec.offset + rec.trace_tokens],
            positions=[rec.offset + t for t in rec.probed],
            tag=rec.cut_tag,
            k=rec.k,
            max_tokens=max_tokens,
            temperature=rec.temperature,
            seed=sample_seed(0, sample_id),
        )
    )


def test_agent_log_cut_after_each_step(tmp_path, tiny_engine):
    recorded = _agent_log(tmp_path / "agent")
    [sample] = recorded.samples
    assert [m.role for m in sample.messages] == [
        "user",
        "assistant",
        "tool",
        "assistant",
        "tool",
        "assistant",
    ]
    log, probed, rec = _probed_on_tiny(recorded, tmp_path, probe="trace", cuts="steps")
    steps = [
        "I add 1 and 2.",
        '[tool call] add({"a": 1, "b": 2})',
        "[tool result add] 3",
        "It is 3.",
        '[tool call] submit({"answer": "3"})',
        "[tool result submit] submitted",
        "Done.",
    ]
    assert rec.response == "\n\n".join(steps)
    assert rec.final_text == "3"  # the submit() call's argument
    assert rec.verification_lead == ""  # forced answers verified alone, as submitted
    assert [(s.kind, s.name) for s in rec.steps] == [
        ("assistant", None),
        ("tool_call", "add"),
        ("tool_result", "add"),
        ("assistant", None),
        ("tool_call", "submit"),
        ("tool_result", "submit"),
        ("assistant", None),
    ]
    # a cut after step i keeps exactly steps 1..i: the prefix decodes to them, nothing after
    ids = tiny_engine.tokenize(rec.response)
    for i, step in enumerate(rec.steps):
        kept = tiny_engine.detokenize(ids[: step.end])
        assert kept == "\n\n".join(steps[: i + 1])
    assert rec.positions == [s.end for s in rec.steps]
    assert rec.probed == [0, *rec.positions]
    prompt = to_plain(sample.messages[:1])
    own = rec.context("own")
    assert own.answers == _recomputed(tiny_engine, prompt, rec, "q1", ANSWER_TOKENS)
    score = probed.scores["probe_scorer"]
    # the task score is the log's own scorer on the recorded final state, as the log scored it
    assert score.value["task_score"] == value_to_float()(sample.scores["match"].value)
    # the viewer's record of the cuts: steps done per probed position, the step list in the
    # explanation, the step ends in the sweep's header, each cut's prefix ending on its step
    assert score.metadata["steps_done"] == list(range(len(steps) + 1))
    assert "7 recorded steps" in score.explanation
    assert "5. tool\\_call submit, ends at t =" in score.explanation
    audit = audit_of(probed)
    [header] = audit.headers["own"]
    assert header["step_ends"] == rec.positions
    for cut, step in zip(audit.cuts["own"][1:], steps, strict=True):
        assert cut["prefix_end"].endswith(step[-10:])
    # cotaudit report: the probe section, its metrics checked, the curve over steps by hand
    section = probe_report.section(run_from_log(log, log.location), tmp_path, "run")
    assert section.consistency.ok
    assert "written by mockllm/model, probed on hf-probe/tiny (a transfer probe" in "".join(
        b for b in section.blocks if isinstance(b, str)
    )
    by_step = section.tables["steps"].row("q1")
    p_at_cut = [sum(row) / len(row) for row in score.metadata["own"]["values"]]
    assert [by_step[f"j={j}"] for j in range(len(steps) + 1)] == p_at_cut
    assert section.figures["step_curves"].path.exists()
    meta = log.eval.metadata["probe_log"]
    assert meta["recorded_model"] == "mockllm/model"
    assert meta["scorer"] == {"name": "match", "args": {"numeric": True}, "source": "log"}
    assert probed.metadata["recorded_model"] == "mockllm/model"
    assert log.eval.model == "hf-probe/tiny"


def test_agent_log_self_commitment_across_steps(tmp_path):
    recorded = _agent_log(tmp_path / "agent")
    log, probed, rec = _probed_on_tiny(
        recorded, tmp_path, probe="selfcommit", cuts="tokens", stride=20, k=2
    )
    score = probed.scores["probe_scorer"]
    # a_final is the submitted answer as the task's scorer reads it; token cuts every 20
    # tokens across the steps, each with the steps complete before it
    assert score.metadata["a_final"] == "3"
    assert rec.probed == [*range(20, rec.trace_tokens, 20), rec.trace_tokens]
    ends = [s.end for s in rec.steps]
    assert score.metadata["steps_done"] == [sum(e <= t for e in ends) for t in rec.probed]
    assert score.metadata["steps_done"][-1] == len(ends)


def test_reasoning_inside_a_step_is_closed_before_the_tag(tmp_path, tiny_engine):
    call = ChatMessageAssistant(
        content=[ContentReasoning(reasoning="I should add them."), ContentText(text="Adding.")],
        tool_calls=[ToolCall(id="c1", function="add", arguments={"a": 1, "b": 2})],
        model=MOCK,
    )
    model = _scripted(
        ModelOutput(
            model=MOCK, choices=[ChatCompletionChoice(message=call, stop_reason="tool_calls")]
        ),
        ModelOutput.from_content(MOCK, "The answer is 3"),
    )
    recorded = run_eval(
        Task(
            dataset=[Sample(id="q1", input="What is 1 + 2?", target="3")],
            solver=[use_tools([add()]), generate()],
            scorer=match(numeric=True),
        ),
        model,
        tmp_path / "rec",
    )
    log, probed, rec = _probed_on_tiny(recorded, tmp_path, probe="trace", cuts="tokens", stride=3)
    assert rec.response.startswith("<think>\nI should add them.\n</think>\n\nAdding.")
    ids = tiny_engine.tokenize(rec.response)
    assert rec.probed == [0, *range(3, len(ids), 3), len(ids)]  # in order, the zero probe first

    def inside(t: int) -> bool:
        kept = tiny_engine.detokenize(ids[:t])
        return "<think>" in kept and "</think>" not in kept

    assert rec.think_cuts == [t for t in rec.probed if inside(t)]
    assert len(rec.think_cuts) >= 2
    assert probed.scores["probe_scorer"].metadata["think_cuts"] == rec.think_cuts
    prompt = to_plain(recorded.samples[0].messages[:1])
    for t, answers in zip(rec.probed, rec.context("own").answers, strict=True):
        [row] = tiny_engine.continue_prefixes_sync(
            PrefixRequest(
                messages=prompt,
                cot_token_ids=ids,
                positions=[t],
                tag=("\n</think>" if inside(t) else "") + rec.cut_tag,
                k=1,
                max_tokens=ANSWER_TOKENS,
                temperature=0.0,
                seed=sample_seed(0, "q1"),
            )
        )
        assert answers == row, t


def test_hf_provider_log_probed_on_another_model(tmp_path, tiny_engine):
    folder = tiny_model_path()
    recorded = run_eval(
        Task(
            dataset=[Sample(id="c1", input="Capital of France?", target="Paris")],
            solver=[generate()],
            scorer=match(),
        ),
        f"hf/{folder}",
        tmp_path / "hf",
        max_tokens=12,
        model_args={"device": "cpu"},
    )
    [sample] = recorded.samples
    log, probed, rec = _probed_on_tiny(recorded, tmp_path, probe="trace")
    written = sample.messages[-1].text
    ids = tiny_engine.tokenize(written)
    assert rec.response == tiny_engine.detokenize(ids)
    assert (rec.offset, rec.trace_tokens, rec.steps) == (0, len(ids), None)
    assert rec.verification_lead is None  # the form's lead
    assert rec.positions == [round(f * len(ids)) for f in (0.1, 0.25, 0.5, 0.75, 1.0)]
    own = rec.context("own")
    assert own.answers == _recomputed(
        tiny_engine, to_plain(sample.messages[:-1]), rec, "c1", ANSWER_TOKENS
    )
    assert log.eval.metadata["probe_log"]["recorded_model"] == f"hf/{folder}"
    assert probed.metadata["recorded_model"] == f"hf/{folder}"


def test_answer_pattern_of_the_scorer_leads_the_verification(tmp_path):
    answer_pattern = r"ANSWER\s*:\s*(\w+)"
    model = _scripted(ModelOutput.from_content(MOCK, "Paris is it.\n\nANSWER: Paris"))
    recorded = run_eval(
        Task(
            dataset=[Sample(id="c", input="Capital of France?", target="Paris")],
            solver=generate(),
            scorer=pattern(answer_pattern),
        ),
        model,
        tmp_path / "rec",
    )
    log, probed, rec = _probed_on_tiny(recorded, tmp_path, probe="trace")
    assert rec.verification_lead == "ANSWER: "
    assert log.eval.metadata["probe_log"]["verification_lead"] == "ANSWER: "
    own = probed.scores["probe_scorer"].metadata["own"]
    # each forced answer read by the task's own pattern after "ANSWER: "
    for row, canonical in zip(own["answers"], own["canonical"], strict=True):
        found = re.search(answer_pattern, "ANSWER: " + clip(row[0]), re.IGNORECASE)
        assert canonical[0] == (extract_string(found.group(1)) if found else None)
    assert any(c[0] is not None for c in own["canonical"])


def test_bad_input_names_the_log_sample_or_scorer(tmp_path):
    unscored = _agent_log(tmp_path / "unscored", scorer=False)
    with pytest.raises(
        ParameterError, match=f"-T log={unscored.location}: the log records no scorer"
    ):
        cotaudit.probe_log(unscored.location)
    with pytest.raises(ParameterError, match=r"-T samples: \['q9'\] not in log"):
        cotaudit.probe_log(unscored.location, samples="q9", scorer="match")
    with pytest.raises(ParameterError, match="-T scorer=no_such_scorer: cannot create the scorer"):
        cotaudit.probe_log(unscored.location, scorer="no_such_scorer")
    task = cotaudit.probe_log(
        unscored.location, scorer="includes", scorer_args={"ignore_case": False}
    )
    assert task.metadata["probe_log"]["scorer"]["source"] == "-T scorer"


def test_model_graded_scorer_recreated_from_its_record(tmp_path):
    model = _scripted(ModelOutput.from_content(MOCK, "Paris"))
    recorded = run_eval(
        Task(
            dataset=[Sample(id="c", input="Capital of France?", target="Paris")],
            solver=generate(),
            scorer=model_graded_qa(
                partial_credit=True, model=_scripted(ModelOutput.from_content(MOCK, "GRADE: C"))
            ),
        ),
        model,
        tmp_path / "logs",
    )
    task = cotaudit.probe_log(recorded.location)
    scorer = task.metadata["probe_log"]["scorer"]
    assert scorer["name"] == "model_graded_qa"
    # the grader as the log records it (a model spec), passed back to the scorer
    assert scorer["args"]["partial_credit"] is True
    assert scorer["args"]["model"]["model"] == MOCK
    assert registry_info(task.scorer[1]).name.endswith("model_graded_qa")


def test_registry_task_epochs_and_unknown_parameters(tmp_path):
    """``inspect eval cotaudit/probe_log -T ...`` as Inspect creates it (no model runs): a log
    of two epochs names its samples ``<id>@<epoch>``; a misspelt -T name is refused."""
    from inspect_ai._eval.loader import load_tasks

    model = _scripted(*(ModelOutput.from_content(MOCK, "The answer is 3") for _ in range(2)))
    task = Task(
        dataset=[Sample(id="q1", input="1 + 2?", target="3")], solver=generate(), scorer=match()
    )
    recorded = run_eval(task, model, tmp_path / "logs", epochs=2)
    [probe] = load_tasks(
        ["cotaudit/probe_log"], {"log": recorded.location, "samples": ["q1@2"], "cuts": "tokens"}
    )
    assert [s.id for s in probe.dataset] == ["q1@2"]
    assert probe.metadata["probe"]["schedule"]["kind"] == "stride"
    with pytest.raises(ParameterError, match="-T cut: not a parameter of task probe_log"):
        load_tasks(["cotaudit/probe_log"], {"log": recorded.location, "cut": "steps"})


def test_scorer_from_the_task_file_on_disk(tmp_path):
    task_file = tmp_path / "my_task.py"
    task_file.write_text(
        textwrap.dedent(
            """
            from inspect_ai import Task, task
            from inspect_ai.dataset import Sample
            from inspect_ai.scorer import CORRECT, INCORRECT, Score, accuracy, scorer
            from inspect_ai.solver import generate


            @scorer(metrics=[accuracy()])
            def ends_with_target(strip: bool = True):
                async def score(state, target):
                    text = state.output.completion.strip() if strip else state.output.completion
                    return Score(value=CORRECT if text.endswith(target.text) else INCORRECT)

                return score


            @task
            def my_task():
                return Task(
                    dataset=[Sample(id="a", input="Say 7.", target="7")],
                    solver=generate(),
                    scorer=ends_with_target(strip=False),
                )
            """
        )
    )
    model = _scripted(ModelOutput.from_content("mockllm/model", "It is 7"))
    recorded = run_eval(f"{task_file}@my_task", model, tmp_path / "logs")
    task = cotaudit.probe_log(recorded.location)
    scorer = task.metadata["probe_log"]["scorer"]
    assert scorer["name"].endswith("ends_with_target")
    assert scorer["args"] == {"strip": False}
    assert scorer["source"] == f"log (task file {recorded.eval.task_file})"


def _reasoned(reasoning: str, text: str) -> ModelOutput:
    message = ChatMessageAssistant(
        content=[ContentReasoning(reasoning=reasoning), ContentText(text=text)], model=MOCK
    )
    return ModelOutput(
        model=MOCK, choices=[ChatCompletionChoice(message=message, stop_reason="stop")]
    )


def test_reasoning_parts_and_replay_under_a_recorded_sibling(tmp_path, tiny_engine):
    """A log whose responses carry ``ContentReasoning`` (an API model's reasoning) in a paired
    honest/hinted task: the trace is the reasoning, cut inside its think block; the hinted
    trace is also probed under the honest sample's recorded prompt."""
    samples = [
        Sample(
            id=f"p1-{c}",
            input=f"{c}: 6 times 7?",
            target="42",
            metadata={"pair_id": "p1", "condition": c},
        )
        for c in ("honest", "hinted")
    ]
    model = _scripted(
        _reasoned("Six sevens are forty-two.", "The answer is 42"),
        _reasoned("The hint says 42, so 42.", "The answer is 42"),
    )
    recorded = run_eval(
        Task(dataset=samples, solver=generate(), scorer=match(numeric=True)),
        model,
        tmp_path / "rec",
        max_samples=1,
    )
    log = run_eval(
        cotaudit.probe_log(
            recorded.location, probe="trace", replay_under="honest", answer_max_tokens=ANSWER_TOKENS
        ),
        "hf-probe/tiny",
        tmp_path / "probe",
    )
    by_id = {s.id: s for s in recorded.samples}
    hinted = next(s for s in log.samples if s.id == "p1-hinted")
    rec = _record(hinted)
    reasoning = by_id["p1-hinted"].messages[-1].content[0].reasoning
    assert rec.think_source == "reasoning_content"
    assert rec.cut_tag.startswith("\n</think>")
    assert rec.response == compose_reasoning(reasoning, "The answer is 42")
    # the span starts right after the think opener
    assert tiny_engine.detokenize(tiny_engine.tokenize(rec.response)[: rec.offset]) == "<think>"
    own, replay = rec.context("own"), rec.context("replay")
    assert replay.sample_id == "p1-honest"
    honest_prompt = to_plain(by_id["p1-honest"].messages[:-1])
    assert honest_prompt[-1]["content"] == "honest: 6 times 7?"
    assert replay.answers == _recomputed(
        tiny_engine, honest_prompt, rec, "p1-hinted", ANSWER_TOKENS
    )
    own_prompt = to_plain(by_id["p1-hinted"].messages[:-1])
    assert own.answers == _recomputed(tiny_engine, own_prompt, rec, "p1-hinted", ANSWER_TOKENS)
    honest = _record(next(s for s in log.samples if s.id == "p1-honest"))
    assert honest.context("replay") is None  # already of the replay condition


def test_recorded_log_resampled_from_its_sentence_ends(tmp_path, tiny_engine):
    """``probe=resample`` on a recorded log: the recorded response cut at its sentence ends,
    continued by the probing model (greedy: one continuation repeated), each continuation's
    answer read by the log's own scorer (match) from the recorded text up to the cut and the
    continuation; the reference is the log's reading of the recorded answer."""
    from cotaudit.probing.resample_record import ResampleDraws, ResampleRecord
    from cotaudit.probing.sentences import sentence_ends

    written = "Paris is the capital. It is in France.\n\nThe answer is Paris."
    recorded = run_eval(
        Task(
            dataset=[Sample(id="c", input="Capital of France?", target="Paris")],
            solver=generate(),
            scorer=match(),
        ),
        _scripted(ModelOutput.from_content(MOCK, written)),
        tmp_path / "rec",
    )
    log = run_eval(
        cotaudit.probe_log(
            recorded.location,
            probe="resample",
            resample=2,
            resample_temperature=0.0,
            resample_max_tokens=24,
            k=1,
            temperature=0.0,
        ),
        "hf-probe/tiny",
        tmp_path / "probe",
    )
    [probed] = log.samples
    draws = ResampleDraws.model_validate(probed.store["resample_draws"])
    ids = tiny_engine.tokenize(written)
    assert draws.cuts == [0, *sentence_ends(ids, tiny_engine.detokenize)]
    assert draws.prefix_texts == [tiny_engine.detokenize(ids[:t]) for t in draws.cuts]
    assert all(len(row) == 2 and row[0] == row[1] for row in draws.continuations)
    score = probed.scores["resample_probe_scorer"]
    record = ResampleRecord.model_validate(score.metadata["resample"])
    assert record.reference == "paris"  # match() read the recorded "The answer is Paris."
    assert record.resampled == [sum(a == "paris" for a in row) / 2 for row in record.answers]
    # the chunks: the recorded text between the cuts (a space before a word is its token's)
    assert "".join(c.text for c in record.chunks) == written
    assert [c.text.strip() for c in record.chunks] == [
        "Paris is the capital.",
        "It is in France.",
        "The answer is Paris.",
    ]


def test_one_step_log_cut_after_steps_has_no_auc(tmp_path):
    """``inspect eval cotaudit/probe_log -T log=<a single-turn log> -T cuts=steps``: each sample
    has one step, so one cut; a trapezoid over one point has no area, so the AUC is NaN (not
    0), in the score, the logged metric, the explanation, the headline line and the report,
    each saying why, while p at that cut is still read."""
    from cotaudit.scorers.headline import headline_lines

    model = _scripted(
        *(ModelOutput.from_content(MOCK, f"The answer is {n}") for n in ("3", "5", "7"))
    )
    task = Task(
        dataset=[
            Sample(id=f"q{i}", input=f"{a} + {b}?", target=str(a + b))
            for i, (a, b) in enumerate(((1, 2), (2, 3), (3, 4)))
        ],
        solver=generate(),
        scorer=match(numeric=True),
    )
    recorded = run_eval(task, model, tmp_path / "recorded", max_samples=1)
    log = run_eval(
        "cotaudit/probe_log",
        "hf-probe/tiny",
        tmp_path / "probe",
        task_args={"log": recorded.location, "cuts": "steps", "answer_max_tokens": ANSWER_TOKENS},
    )
    for probed in log.samples:
        rec = _record(probed)
        assert rec.curve_fractions == [1.0]  # one step: one cut, at its end
        score = probed.scores["probe_scorer"]
        p_at_cut = [sum(row) / len(row) for row in score.metadata["own"]["values"]]
        assert score.value["pass_at_first"] == p_at_cut[-1]
        assert score.value["auc"] != score.value["auc"]  # NaN
        assert "AUC not computed: a TRACE AUC needs at least two cuts" in score.explanation
    metrics = {k: m.value for s in log.results.scores for k, m in s.metrics.items()}
    assert metrics["auc"] != metrics["auc"] and metrics["n_units"] == 0
    [line] = headline_lines(log)
    assert line == (
        "task_trace (hf-probe/tiny): auc cannot be computed: a TRACE AUC needs at least two cuts "
        "per sample (one point has no area) (n = 0 units)"
    )
    section = probe_report.section(run_from_log(log, log.location), tmp_path, "run")
    assert section.consistency.ok
    assert "auc cannot be computed: a TRACE AUC needs at least two cuts" in "".join(
        b for b in section.blocks if isinstance(b, str)
    )
