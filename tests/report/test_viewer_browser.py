"""The log viewer in a real browser: Inspect's ``inspect view`` serving real logs, read by headless
Chromium (Debian's ``chromium``, driven through playwright's Python API).

Each study, and the generic probe on a task of its own, runs once on a real model into a
temporary log folder; the viewer must show the study's headline statistic first in the title bar
(the value the log holds, under the reducer name ``avg``), every score column's header and
sparkline whole in the sample table, and in a sample's Scoring tab its curve as a chart (a PNG
image) and as an aligned monospace block with a sparkline; a per-sample number as the viewer
formats it in the sample table, the sample header and the Scoring tab (docs/viewer.md, *What
the viewer decides*). A copy of one log whose explanation holds an inline SVG, an SVG data
URI, a PNG data URI and escaped Markdown shows which of them the viewer renders. Screenshots
of the title bar, the sample table and the Scoring tab go to ``$COTAUDIT_VIEWER_SHOTS``
(default: the test's temporary folder).

Needs ``apt-get install chromium`` and ``pip install playwright`` (``.ci/run`` does both). Without
them the tests skip, unless ``COTAUDIT_REQUIRE_BROWSER=1`` (CI), where they fail instead.
"""

from __future__ import annotations

import math
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

import pytest
from helpers import run_eval

from cotaudit.display import chart
from cotaudit.display.text import cell_sparkline, md_text, sparkline

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = os.environ.get("COTAUDIT_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
RENDER_TIMEOUT_MS = 60_000

pytestmark = pytest.mark.model


def _require_browser() -> None:
    missing = []
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        missing.append("playwright (pip install playwright)")
    if not Path(CHROMIUM).exists():
        missing.append(f"{CHROMIUM} (apt-get install chromium)")
    if missing:
        why = "no browser for the viewer test: " + ", ".join(missing)
        if os.environ.get("COTAUDIT_REQUIRE_BROWSER") == "1":
            pytest.fail(why)
        pytest.skip(why)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _inspect_command() -> list[str]:
    exe = shutil.which("inspect", path=str(Path(sys.executable).parent)) or shutil.which("inspect")
    if exe is None:
        raise RuntimeError("the inspect command is not on PATH")
    return [exe]


class Viewer:
    """``inspect view`` on 127.0.0.1 over ``log_dir``, stopped by its PID."""

    def __init__(self, log_dir: Path) -> None:
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.out = open(log_dir.parent / "inspect_view.out", "w")  # noqa: SIM115
        self.proc = subprocess.Popen(
            [
                *_inspect_command(),
                "view",
                "--host",
                "127.0.0.1",
                "--port",
                str(self.port),
                "--log-dir",
                str(log_dir),
            ],
            stdout=self.out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        deadline = time.monotonic() + 120
        while True:
            try:
                with urllib.request.urlopen(self.url + "/", timeout=2) as r:
                    if r.status == 200:
                        return
            except OSError:
                pass
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"inspect view did not start: {Path(self.out.name).read_text()}")
            time.sleep(0.5)

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.kill(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=10)
        self.out.close()


def _run(task: str, model: str, log_dir: Path, **task_args):
    return run_eval(task, model, log_dir, task_args=task_args)


def _run_probe(log_dir: Path):
    """The generic TRACE probe on a multiple-choice task (Inspect's own ``choice()`` scorer)."""
    import cotaudit
    from cotaudit.tasks.probe_examples import gsm8k_mc

    probe = cotaudit.probe(gsm8k_mc(problems=2), "trace")
    return run_eval(probe, "hf-probe/tiny", log_dir, max_tokens=40)


INLINE_SVG = (
    '<svg xmlns="http://www.w3.org/2000/svg" width="60" height="20">'
    '<rect width="60" height="20"/></svg>'
)
NASTY = "**18** ![x](http://e.example/i.png) [link](javascript:1) `code` #h _a_ ~b~ |c| 1."


def _formats_log(log, log_dir: Path):
    """A copy of ``log`` whose last sample's explanation holds, in turn, an inline SVG, an SVG
    data URI, a PNG data URI (a chart) and ``NASTY`` through ``md_text``: which the viewer
    renders, tested below."""
    import base64

    from inspect_ai.log import read_eval_log, write_eval_log

    copy = read_eval_log(log.location)
    svg_uri = "data:image/svg+xml;base64," + base64.b64encode(INLINE_SVG.encode()).decode()
    png = chart.line_chart(
        [chart.Series([(1, 0.5), (2, 1.0)], chart.BLUE)], 2, [(0, "0")], "c(t)", "t"
    )
    score = next(iter(copy.samples[-1].scores.values()))
    score.explanation = "\n\n".join(
        [
            "INLINE SVG:",
            INLINE_SVG,
            "SVG DATA URI:",
            f"![svg chart]({svg_uri})",
            "PNG DATA URI:",
            chart.markdown_image(png, "png chart"),
            "ESCAPED:",
            md_text(NASTY),
            "END",
        ]
    )
    path = log_dir / Path(log.location).name.replace(".eval", "-formats.eval")
    write_eval_log(copy, str(path))
    copy.location = str(path)
    return copy


WIDE = ("register", "rendering", "richness")
"""report_ll's factor columns, which its sample table declares ``wide``."""


def _narrow_log(log, log_dir: Path):
    """A copy of report_ll's ``log`` whose viewer config is built from its sample table with no
    wide column (the viewer's column widths from the labels alone)."""
    from dataclasses import replace

    from inspect_ai.log import read_eval_log, write_eval_log

    from cotaudit.scorers.viewer import viewer_config
    from cotaudit.studies.report_ll.display import sample_table

    copy = read_eval_log(log.location)
    assert sample_table().wide == WIDE
    copy.eval.viewer = viewer_config(replace(sample_table(), wide=()))
    path = log_dir / Path(log.location).name.replace(".eval", "-narrow.eval")
    write_eval_log(copy, str(path))
    copy.location = str(path)
    return copy


@pytest.fixture(scope="module")
def shots(tmp_path_factory) -> Path:
    """Where the screenshots go."""
    out = os.environ.get("COTAUDIT_VIEWER_SHOTS")
    path = Path(out) if out else tmp_path_factory.mktemp("viewer_shots")
    path.mkdir(parents=True, exist_ok=True)
    return path


@pytest.fixture(scope="module")
def browser():
    _require_browser()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield b
        finally:
            b.close()


@pytest.fixture(scope="module")
def viewed(tmp_path_factory):
    """The studies' logs (real models, small budgets) and a viewer serving them. selfcommit runs
    the default model (the tiny one gives no final answer, hence no curve); the others the tiny
    model (their curves and headline exist whatever the answers). Runs before the browser
    starts: playwright's sync API holds an event loop that Inspect's eval cannot share."""
    _require_browser()
    log_dir = tmp_path_factory.mktemp("viewer") / "logs"
    logs: dict = {
        "selfcommit": _run(
            "tasks/selfcommit.py",
            "hf-probe/default",
            log_dir,
            problems=2,
            max_cot_tokens=60,
            stride=20,
            k=2,
            final_answer_reading="last_number",
        ),  # cut before they state one
        "trace_tutor": _run(
            "tasks/trace_tutor.py",
            "hf-probe/tiny",
            log_dir,
            problems=2,
            max_explanation_tokens=30,
            bootstrap_samples=200,
        ),
        "report_ll": _run(
            "tasks/report_ll.py",
            "hf-probe/tiny",
            log_dir,
            scenarios=1,
            n_resamples=200,
            cluster_boot=20,
        ),
        "probe": _run_probe(log_dir),
    }
    logs["formats"] = _formats_log(logs["selfcommit"], log_dir)
    logs["report_ll_narrow"] = _narrow_log(logs["report_ll"], log_dir)
    viewer = Viewer(log_dir)
    try:
        yield viewer, logs
    finally:
        viewer.stop()


def _page(browser, url: str):
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.set_default_timeout(RENDER_TIMEOUT_MS)
    page.goto(url)
    return page


def _headline(log) -> tuple[str, float]:
    ref = log.results.headline
    score = next(s for s in log.results.scores if s.name == ref.score)
    return ref.metric, score.metrics[ref.metric].value


def _title_metrics(page) -> list[tuple[str, str]]:
    """(name, shown value) of the metrics in the log's title bar, in display order."""
    page.wait_for_selector(".vertical-metric-value")
    names = page.locator(".vertical-metric-label").evaluate_all(
        "els => els.map(e => e.firstChild ? e.firstChild.textContent : e.textContent)"
    )
    values = page.locator(".vertical-metric-value").all_text_contents()
    return list(zip(names, values, strict=True))


# each headline's n beside it, then its interval or paired counts
HEADLINES = {
    "selfcommit": ["auroc/tau_0.8", "n_pairs", "wins/tau_0.8", "ties/tau_0.8", "cluster_f1"],
    "trace_tutor": [f"delta_context/{f}" for f in ("mean", "n", "ci_low", "ci_high")],
    "report_ll": None,  # filled from the task module: its headline keys
}


def _expected(study: str) -> list[str]:
    if HEADLINES[study] is not None:
        return HEADLINES[study]
    from cotaudit.studies.report_ll.metrics import report_ll_headline_keys

    return report_ll_headline_keys()


def _title_bar(page, shot: Path) -> str:
    """The title bar's metric block as text (name, reducer, value per metric), screenshot to
    ``shot``."""
    block = page.locator(".vertical-metric-value").first.locator("xpath=../..")
    box = block.bounding_box()
    page.screenshot(
        path=str(shot), clip={"x": 0, "y": 0, "width": 1400, "height": box["y"] + box["height"] + 8}
    )
    return block.inner_text()


@pytest.mark.parametrize("study", ["selfcommit", "trace_tutor", "report_ll"])
def test_title_bar_leads_with_the_headline(viewed, browser, shots, study) -> None:
    viewer, logs = viewed
    log = logs[study]
    expected = _expected(study)
    name, value = _headline(log)
    assert name == expected[0]
    page = _page(browser, f"{viewer.url}/#/logs/{Path(log.location).name}")
    shown = _title_metrics(page)
    bar = _title_bar(page, shots / f"{study}_title.png")
    crowded = _labels_over_the_title(page, log)
    page.close()
    assert not crowded, f"metric labels drawn over the title: {crowded}"
    # the epoch reducer's name under each metric is the plain "avg" (the viewer writes labels
    # in capitals); its registry name mean_keep_text is nowhere
    assert "MEAN_KEEP_TEXT" not in bar.upper() and bar.upper().count("\nAVG\n") == len(shown)
    names = [n for n, _ in shown]
    n = min(len(names), len(expected))
    assert n >= min(len(expected), 4) and names[:n] == expected[:n], shown
    if value == value:  # not NaN: the number shown is the log's, to the viewer's rounding
        assert float(shown[0][1]) == pytest.approx(value, abs=0.0051), shown
    else:
        assert shown[0][1] == "NaN"


def _overlap(a: dict, b: dict) -> bool:
    """Whether two bounding boxes (x, y, width, height) share any area."""
    return (
        a["x"] < b["x"] + b["width"]
        and b["x"] < a["x"] + a["width"]
        and a["y"] < b["y"] + b["height"]
        and b["y"] < a["y"] + a["height"]
    )


def _labels_over_the_title(page, log) -> list[tuple[str, str]]:
    """(metric label, title text) of each title bar metric label drawn over the task name or
    one of the log's tags shown as chips beside it (the viewer folds the others into "...")."""
    shown = [page.get_by_text(t, exact=True) for t in [log.eval.task, *log.tags]]
    boxes = [(s.first.inner_text(), s.first.bounding_box()) for s in shown if s.count()]
    labels = page.locator(".vertical-metric-label")
    return [
        (label.inner_text(), text)
        for label in labels.all()
        for text, box in boxes
        if box is not None and _overlap(label.bounding_box(), box)
    ]


def _scoring_page(browser, viewer, log, sample):
    from urllib.parse import quote

    url = (
        f"{viewer.url}/#/logs/{Path(log.location).name}/samples/sample/"
        f"{quote(str(sample.id), safe='')}/{sample.epoch}/scoring"
    )
    page = _page(browser, url)
    # the Markdown is rendered after the text first shows: a <pre> (a fenced block) or the
    # last paragraph as its own <p> exists only once it is
    page.wait_for_selector("p:text-is('END')" if "formats" in log.location else "pre")
    return page


def _scoring(
    browser, viewer, log, sample, chart_alt: str | None = None, shot: Path | None = None
) -> tuple[str, list[str]]:
    """The Scoring tab's text and its <pre> blocks; with ``chart_alt``, its chart checked
    (:func:`_assert_chart`); with ``shot``, a screenshot there."""
    page = _scoring_page(browser, viewer, log, sample)
    blocks = page.locator("pre").all_inner_texts()
    text = page.inner_text("body")
    if chart_alt is not None:
        _assert_chart(page, chart_alt)
    if shot is not None:
        page.screenshot(path=str(shot))
    page.close()
    return text, blocks


def _images(page) -> list[dict]:
    """Each <img> of the page: alt, source scheme, whether it loaded, natural and shown size."""
    page.wait_for_function("() => [...document.images].every(i => i.complete)")
    return page.evaluate("""() => [...document.images].map(i => ({
        alt: i.alt, src: i.src.slice(0, 22), loaded: i.complete && i.naturalWidth > 0,
        natural: [i.naturalWidth, i.naturalHeight],
        shown: [Math.round(i.getBoundingClientRect().width),
                Math.round(i.getBoundingClientRect().height)]}))""")


def _assert_chart(page, alt: str) -> None:
    """The explanation's PNG data URI shows as an image (``alt``) at the chart's own size,
    above the text block."""
    [img] = [i for i in _images(page) if i["alt"] == alt]
    assert img["loaded"] and img["src"] == "data:image/png;base64,"
    assert img["natural"] == img["shown"] == [chart.WIDTH, chart.HEIGHT]
    chart_top = page.locator(f'img[alt="{alt}"]').bounding_box()["y"]
    assert chart_top < page.locator("pre").first.bounding_box()["y"]  # the picture first


def test_viewer_renders_png_data_uris_only_and_escaped_text_literally(viewed, browser, shots):
    """Of an inline SVG, an SVG data URI and a PNG data URI in an explanation, only the PNG is
    drawn (the viewer HTML-escapes the Markdown, and renders raster data URIs only): the SVG
    markup and the SVG image's source show as text. Text through ``md_text`` shows as written:
    no link, image, emphasis or code made of it."""
    viewer, logs = viewed
    log = logs["formats"]
    page = _scoring_page(browser, viewer, log, log.samples[-1])
    images = _images(page)
    text = page.inner_text("body")
    found = page.evaluate("""() => {
        const el = [...document.querySelectorAll('div, p')].filter(
            e => e.innerText && e.innerText.includes('INLINE SVG:')
                 && e.innerText.includes('END')).pop();
        return {svg: el.querySelectorAll('svg').length, a: el.querySelectorAll('a').length,
                em: el.querySelectorAll('em, strong, code, h1').length};
    }""")
    page.screenshot(path=str(shots / "formats_scoring.png"))
    page.close()
    assert [i["alt"] for i in images] == ["png chart"] and images[0]["loaded"]
    assert INLINE_SVG in text  # shown as its markup
    assert "![svg chart](data:image/svg+xml;base64," in text  # shown as its source
    assert found == {"svg": 0, "a": 0, "em": 0}, found
    assert NASTY in text


def _aligned_rows(blocks: list[str], header: list[str]) -> list[str]:
    """The data lines of the shown block whose header starts with ``header``, checked aligned:
    on every line the header's last named column ends in the same text column."""
    block = next(b for b in blocks if b.split()[: len(header)] == header)
    lines = [line for line in block.splitlines() if line.strip()]
    col = len(header) - 1
    ends = {[m.end() for m in re.finditer(r"\S+", line)][col] for line in lines}
    assert len(ends) == 1, block
    return lines[1:]


def test_selfcommit_scoring_tab_shows_the_curve_as_a_chart_and_aligned(viewed, browser, shots):
    viewer, logs = viewed
    log = logs["selfcommit"]
    sample = next(
        s for s in log.samples if s.scores["selfcommit_scorer"].metadata.get("c") is not None
    )
    score = sample.scores["selfcommit_scorer"]
    text, blocks = _scoring(
        browser, viewer, log, sample, "c(t) chart", shots / "selfcommit_scoring.png"
    )
    rows = _aligned_rows(blocks, ["t", "t/T", "c(t)"])
    meta = score.metadata
    assert len(rows) == len(meta["positions"])
    for line, t, m in zip(rows, meta["positions"], meta["matches"], strict=True):
        cells = line.split()
        assert int(cells[0]) == t
        assert float(cells[2]) == pytest.approx(m / meta["k"], abs=0.0005)
    # the table's sparkline: one character per point up to 8; the explanation's: every point
    assert score.value["c_t"] == cell_sparkline(meta["c"]) and sparkline(meta["c"]) in text


def test_trace_scoring_tab_shows_both_curves_as_a_chart_and_aligned(viewed, browser, shots):
    viewer, logs = viewed
    log = logs["trace_tutor"]
    sample = next(s for s in log.samples if s.metadata["condition"] == "answer_key")
    score = sample.scores["trace_tutor_scorer"]
    text, blocks = _scoring(
        browser, viewer, log, sample, "p(f) chart", shots / "trace_tutor_scoring.png"
    )
    rows = _aligned_rows(blocks, ["f", "t", "p(visible)"])
    assert len(rows) == 1 + len(score.metadata["fractions"])  # the 0% probe, then F
    for name in ("visible", "masked"):
        passes = score.metadata[f"passes_{name}"]
        assert score.value[f"p_{name}"] == cell_sparkline(passes) and sparkline(passes) in text


def test_probe_scoring_tab_shows_its_curve_as_a_chart_and_aligned(viewed, browser, shots):
    """The generic probe's chart, and its block: a row per cut, the zero probe first, p(t) in
    one column."""
    viewer, logs = viewed
    log = logs["probe"]
    sample = log.samples[0]
    meta = sample.scores["probe_scorer"].metadata
    _, blocks = _scoring(browser, viewer, log, sample, "p(t) chart", shots / "probe_scoring.png")
    block = next(b for b in blocks if b.split()[:4] == ["t", "t/T", "p(t)", "own"])
    lines = block.splitlines()
    assert len({len(line) for line in lines}) == 1, block  # right-aligned columns
    rows = lines[1:]
    assert [int(r.split()[0]) for r in rows] == meta["probed"]  # 0, then each cut's t
    # p(t) = mean over the k forced answers of the task scorer's verdicts
    assert [float(r.split()[2]) for r in rows] == pytest.approx(
        [sum(v) / len(v) for v in meta["own"]["values"]], abs=0.0005
    )


def test_report_ll_scoring_tab_table_is_aligned(viewed, browser):
    """report_ll's scorings and differences: right-aligned columns, every line as long."""
    viewer, logs = viewed
    log = logs["report_ll"]
    sample = log.samples[0]
    _, blocks = _scoring(browser, viewer, log, sample)
    block = next(b for b in blocks if b.startswith("report"))
    lines = block.splitlines()
    assert len(lines) == 3 and len({len(line) for line in lines}) == 1, block
    d = sample.scores["report_ll_scorer"].value
    assert float(lines[1].split()[3]) == pytest.approx(d["d_h"], abs=0.0005)


def test_transcript_tab_shows_the_probe_requests(viewed, browser):
    """A sample's Transcript tab shows its probe sweep: the span, the visible prompt's header
    and its first cuts titled with t and the matches, as the log's events hold them."""
    from transcript_audit import audit_of

    viewer, logs = viewed
    log = logs["trace_tutor"]
    sample = next(s for s in log.samples if s.metadata["condition"] == "answer_key")
    cuts = audit_of(sample).cuts["visible"]
    url = (
        f"{viewer.url}/#/logs/{Path(log.location).name}/samples/sample/"
        f"{sample.id}/{sample.epoch}/transcript"
    )
    page = _page(browser, url)
    page.wait_for_selector("text=probe sweep")
    text = page.inner_text("body").upper()  # the viewer writes event titles in capitals
    page.close()
    assert "PROBE SWEEP" in text and "INFO: PROBE VISIBLE\n" in text
    for cut in cuts[:2]:  # t = 0 and the first fraction, on screen without scrolling
        k = len(cut["answers"])
        assert f"INFO: PROBE VISIBLE T={cut['t']}: {cut['matches']}/{k} MATCH" in text
        assert f'"PREFIX_TOKENS": {cut["prefix_tokens"]}' in text


CUT_JS = """() => {
    const cut = e => e.scrollWidth > e.clientWidth + 1;  // the viewer's ellipsis
    const headers = [...document.querySelectorAll('[data-header-col-id]')];
    const cells = [...document.querySelectorAll('[role=gridcell]')];
    return {
        headers: headers.map(h => [h.dataset.headerColId, h.textContent, cut(h)]),
        cells: cells.filter(c => c.firstElementChild).map(
            c => [c.dataset.colId, c.textContent, cut(c.firstElementChild)]),
    };
}"""
SCORERS = {
    "selfcommit": "selfcommit_scorer",
    "trace_tutor": "trace_tutor_scorer",
    "report_ll": "report_ll_scorer",
}
SPARKLINES = {"selfcommit": ["c_t"], "trace_tutor": ["p_visible", "p_masked"], "report_ll": []}


@pytest.mark.parametrize("study", list(SPARKLINES))
def test_sample_table_headers_and_sparklines_are_whole(viewed, browser, shots, study):
    """No score column's header is cut (each label fits the width the viewer gives it; no sort
    mark in a score column), nor a sparkline (at most 8 characters); screenshot:
    ``<study>_table.png``. Long numbers and long text values are cut by the viewer (it prints
    a number with all its digits) and are not checked. selfcommit's table shows the reader's
    columns and its rows by pair, then condition."""
    viewer, logs = viewed
    log = logs[study]
    page = _page(browser, f"{viewer.url}/#/logs/{Path(log.location).name}")
    page.wait_for_selector("[role=gridcell]")
    got = page.evaluate(CUT_JS)
    head = page.inner_text("body")
    top = page.locator("[role=columnheader]").first.bounding_box()["y"]
    rows = page.locator("[role=row]")
    last = rows.nth(rows.count() - 1).bounding_box()
    page.screenshot(
        path=str(shots / f"{study}_table.png"),
        clip={"x": 0, "y": top - 4, "width": 1400, "height": last["y"] + last["height"] - top + 8},
    )
    page.close()
    scorer = SCORERS[study]
    score_headers = [h for h in got["headers"] if h[0].startswith(f"score__{scorer}__")]
    assert len(score_headers) == len(log.samples[0].scores[scorer].value)  # every key
    assert [h for h in got["headers"] if h[2]] == [], got["headers"]
    sparks = [
        c
        for c in got["cells"]
        if c[0] in {f"score__{scorer}__{k}" for k in SPARKLINES[study]} and c[1]
    ]
    assert len(sparks) >= (1 if SPARKLINES[study] else 0)
    assert [c for c in sparks if c[2]] == [], sparks
    if study == "selfcommit":
        for label in ("PAIR", "CONDITION", "TAU_0.8", "C(T) PLOT", "A_FINAL", "GOLD", "CORRECT"):
            assert label in head.upper(), label
        ids = [line for line in head.splitlines() if re.fullmatch(r"p\d{4}-\w+", line.strip())]
        assert ids[:4] == ["p0000-hinted", "p0000-honest", "p0001-hinted", "p0001-honest"]


def js_string(v: float) -> str:
    """JavaScript's ``String(v)`` of a double: the shortest digits that read back as ``v``
    (Python's ``repr``), a whole number without ``.0``."""
    return str(int(v)) if v.is_integer() else repr(v)


def pretty_decimal(v: float, max_decimals: int = 3) -> str:
    """The viewer's ``formatPrettyDecimal`` (its ``format.ts``): ``v.toFixed(1)`` when
    ``String(v)`` has no decimals, ``v.toFixed(max_decimals)`` when it has more, else
    ``String(v)``. ``toFixed`` rounds the double's exact value, halves up."""
    shown = js_string(v)
    decimals = len(shown.partition(".")[2])
    if decimals == 0:
        return f"{v:.1f}"
    if decimals > max_decimals:
        exact = Decimal(v).quantize(Decimal(1).scaleb(-max_decimals), rounding=ROUND_HALF_UP)
        return str(exact)
    return shown


def grid_value(v: object) -> str:
    """What the Scoring tab's score grid shows for one key's value (the viewer's object score
    renderer): a truthy number, or text that reads as one, through :func:`pretty_decimal`;
    anything else (0, booleans, other text) as JavaScript's ``String``."""
    if isinstance(v, bool):
        return str(v).lower()
    if isinstance(v, int | float) and v:
        return pretty_decimal(float(v))
    if isinstance(v, str):
        try:
            number = float(v)
        except ValueError:
            return v
        if math.isfinite(number):
            return pretty_decimal(number)
        return v
    if isinstance(v, int | float):
        return js_string(float(v))
    return "null" if v is None else str(v)


ROW_CELLS_JS = """() => [...document.querySelectorAll('[role=row]')].map(r => Object.fromEntries(
    [...r.querySelectorAll('[role=gridcell]')].map(c => [c.dataset.colId, c.textContent])))
    .filter(r => r.sampleId)"""
SCORE_PANELS_JS = """() => ({
    header: Object.fromEntries([...document.querySelectorAll('div[title]')]
        .filter(d => d.lastElementChild && d.lastElementChild.tagName === 'SPAN'
                     && d.firstElementChild.textContent === d.title)
        .map(d => [d.title, d.lastElementChild.textContent])),
    grid: Object.fromEntries([...document.querySelectorAll('div[title] + div')]
        .filter(v => v.previousElementSibling.textContent === v.previousElementSibling.title)
        .map(v => [v.previousElementSibling.title, v.textContent])),
})"""


def _numbers(value: dict) -> dict[str, float]:
    return {
        k: float(v)
        for k, v in value.items()
        if isinstance(v, int | float) and not isinstance(v, bool) and v == v
    }


def test_per_sample_numbers_show_as_the_viewer_formats_them(viewed, browser, shots) -> None:
    """What docs/viewer.md says the viewer does with a per-sample number, which no task
    setting changes: the sample table and the sample header print every digit
    (``String(v)``); the Scoring tab's grid prints at most 3 decimals, a whole number and text
    that reads as one with one decimal (``3.0``), 0 as ``0``. A log's values stay exact."""
    viewer, logs = viewed
    log = logs["selfcommit"]
    scorer = SCORERS["selfcommit"]
    page = _page(browser, f"{viewer.url}/#/logs/{Path(log.location).name}")
    page.wait_for_selector("[role=gridcell]")
    rows = {r["sampleId"]: r for r in page.evaluate(ROW_CELLS_JS)}
    page.close()
    assert set(rows) == {str(s.id) for s in log.samples}
    long_digits = 0
    for sample in log.samples:
        value = sample.scores[scorer].value
        row = rows[str(sample.id)]
        for k, v in _numbers(value).items():
            assert row[f"score__{scorer}__{k}"] == js_string(v), (sample.id, k)
            long_digits += len(js_string(v).partition(".")[2]) > 3
    assert long_digits > 0  # the run has a number the grid rounds and the table does not

    sample = max(log.samples, key=lambda s: len(_numbers(s.scores[scorer].value)))
    value = sample.scores[scorer].value
    page = _scoring_page(browser, viewer, log, sample)
    shown = page.evaluate(SCORE_PANELS_JS)
    page.close()
    for k, v in _numbers(value).items():
        assert shown["header"][k] == js_string(v), k
    assert {k: shown["grid"][k] for k in value} == {k: grid_value(v) for k, v in value.items()}
    # the gold answer, text: as written in the header, with a decimal in the grid
    assert (shown["header"]["gold"], shown["grid"]["gold"]) == (
        value["gold"],
        f"{float(value['gold']):.1f}",
    )


def test_a_wide_column_holds_text_of_up_to_104_px(viewed, browser, shots) -> None:
    """A ``wide`` column (its label padded with no-break spaces) is the viewer's widest, 120 px,
    its header shows the label alone, and it holds report_ll's ``honest_dressed`` (94 px in
    the cell's font) and ``outcome_clause`` (97 px) whole, which a 90 px column cuts;
    ``concealing_dressed`` (118 px) stays cut."""
    viewer, logs = viewed
    scorer = SCORERS["report_ll"]
    widths = """() => Object.fromEntries([...document.querySelectorAll('[data-header-col-id]')]
        .map(h => [h.dataset.headerColId, [Math.round(document.querySelector(
            `[role=gridcell][data-col-id="${h.dataset.headerColId}"]`)
            .getBoundingClientRect().width), h.textContent]]))"""
    shown = {}
    for name in ("report_ll_narrow", "report_ll"):
        page = _page(browser, f"{viewer.url}/#/logs/{Path(logs[name].location).name}")
        page.wait_for_selector("[role=gridcell]")
        shown[name] = (page.evaluate(widths), page.evaluate(CUT_JS)["cells"])
        if name == "report_ll":
            page.screenshot(path=str(shots / "report_ll_wide_table.png"))
        page.close()
    for name, (headers, cells) in shown.items():
        cut = {
            (col.removeprefix(f"score__{scorer}__"), text): is_cut
            for col, text, is_cut in cells
            if col.removeprefix(f"score__{scorer}__") in WIDE
        }
        wide = name == "report_ll"
        for k in WIDE:
            width, text = headers[f"score__{scorer}__{k}"]
            assert text.strip() == k, text  # the padding does not show
            # the viewer's widest score column (a table narrower than the page is stretched)
            assert width >= 120 if wide else width < 120, (name, k, width)
        assert cut[("register", "honest_dressed")] is not wide
        assert cut[("richness", "outcome_clause")] is not wide
        assert cut[("register", "concealing_dressed")] is True
        assert cut[("register", "plain")] is False
