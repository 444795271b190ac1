"""The log viewer in a real browser: Inspect's ``inspect view`` serving real logs, read by headless
Chromium (Debian's ``chromium``, driven through playwright's Python API).

Each study runs once on a real model into a temporary log folder; the viewer must show the
study's headline statistic first in the title bar (the value the log holds) and a sample's
Scoring tab must show its curve as an aligned monospace block and a sparkline.

Needs ``apt-get install chromium`` and ``pip install playwright`` (``.ci/run`` does both). Without
them the tests skip, unless ``COTAUDIT_REQUIRE_BROWSER=1`` (CI), where they fail instead.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval

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
            [*_inspect_command(), "view", "--host", "127.0.0.1", "--port", str(self.port),
             "--log-dir", str(log_dir)],
            stdout=self.out, stderr=subprocess.STDOUT, start_new_session=True,
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
    cwd = os.getcwd()
    os.chdir(ROOT)  # Inspect resolves task files relative to the working directory
    try:
        [log] = inspect_eval(task, model=model, task_args=task_args, log_dir=str(log_dir),
                             display="none")
    finally:
        os.chdir(cwd)
    assert log.status == "success", log.error
    return log


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
    logs = {
        "selfcommit": _run("tasks/selfcommit.py", "hf-probe/default", log_dir, problems=2,
                           max_cot_tokens=60, stride=20, k=2,
                           final_answer_reading="last_number"),  # cut before they state one
        "trace_tutor": _run("tasks/trace_tutor.py", "hf-probe/tiny", log_dir, problems=2,
                            max_explanation_tokens=30, bootstrap_samples=200),
        "report_ll": _run("tasks/report_ll.py", "hf-probe/tiny", log_dir, scenarios=1,
                          n_resamples=200, cluster_boot=20),
    }
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
    return list(zip(names, values))


# each headline's n beside it, then its interval or paired counts
HEADLINES = {
    "selfcommit": ["auroc/tau_0.8", "n_pairs", "wins/tau_0.8", "ties/tau_0.8", "cluster_f1"],
    "trace_tutor": [f"visible_vs_masked/answer_key/{f}"
                    for f in ("mean_diff", "n", "mean_ci_low", "mean_ci_high")],
    "report_ll": None,  # filled from the task module: its headline keys
}


def _expected(study: str) -> list[str]:
    if HEADLINES[study] is not None:
        return HEADLINES[study]
    from cotaudit import compact

    return compact.report_ll_headline_keys()


@pytest.mark.parametrize("study", ["selfcommit", "trace_tutor", "report_ll"])
def test_title_bar_leads_with_the_headline(viewed, browser, study) -> None:
    viewer, logs = viewed
    log = logs[study]
    expected = _expected(study)
    name, value = _headline(log)
    assert name == expected[0]
    page = _page(browser, f"{viewer.url}/#/logs/{Path(log.location).name}")
    shown = _title_metrics(page)
    page.close()
    names = [n for n, _ in shown]
    n = min(len(names), len(expected))
    assert n >= min(len(expected), 4) and names[:n] == expected[:n], shown
    if value == value:  # not NaN: the number shown is the log's, to the viewer's rounding
        assert float(shown[0][1]) == pytest.approx(value, abs=0.0051), shown
    else:
        assert shown[0][1] == "NaN"


def _scoring(browser, viewer, log, sample) -> tuple[str, list[str]]:
    url = (f"{viewer.url}/#/logs/{Path(log.location).name}/samples/sample/"
           f"{sample.id}/{sample.epoch}/scoring")
    page = _page(browser, url)
    page.wait_for_selector("pre")
    blocks = page.locator("pre").all_inner_texts()
    text = page.inner_text("body")
    page.close()
    return text, blocks


def _aligned_rows(blocks: list[str], header: list[str]) -> list[str]:
    """The data lines of the shown block whose header starts with ``header``, checked aligned:
    on every line the header's last named column ends in the same text column."""
    block = next(b for b in blocks if b.split()[: len(header)] == header)
    lines = [line for line in block.splitlines() if line.strip()]
    col = len(header) - 1
    ends = {[m.end() for m in re.finditer(r"\S+", line)][col] for line in lines}
    assert len(ends) == 1, block
    return lines[1:]


def test_selfcommit_scoring_tab_shows_the_curve_aligned_with_its_sparkline(viewed, browser):
    viewer, logs = viewed
    log = logs["selfcommit"]
    sample = next(
        s for s in log.samples if s.scores["selfcommit_scorer"].metadata.get("c") is not None
    )
    score = sample.scores["selfcommit_scorer"]
    text, blocks = _scoring(browser, viewer, log, sample)
    rows = _aligned_rows(blocks, ["t", "t/T", "c(t)"])
    meta = score.metadata
    assert len(rows) == len(meta["positions"])
    for line, t, m in zip(rows, meta["positions"], meta["matches"]):
        cells = line.split()
        assert int(cells[0]) == t
        assert float(cells[2]) == pytest.approx(m / meta["k"], abs=0.0005)
    spark = score.value["c_t"]
    assert len(spark) == len(meta["positions"]) and spark in text


def test_trace_scoring_tab_shows_both_curves_aligned(viewed, browser):
    viewer, logs = viewed
    log = logs["trace_tutor"]
    sample = next(s for s in log.samples if s.metadata["condition"] == "answer_key")
    score = sample.scores["trace_tutor_scorer"]
    text, blocks = _scoring(browser, viewer, log, sample)
    rows = _aligned_rows(blocks, ["f", "t", "p(visible)"])
    assert len(rows) == 1 + len(score.metadata["fractions"])  # the 0% probe, then F
    for spark in (score.value["p_visible"], score.value["p_masked"]):
        assert len(spark) == len(score.metadata["fractions"]) and spark in text


def test_transcript_tab_shows_the_probe_requests(viewed, browser):
    """A sample's Transcript tab shows its probe sweep: the span, the visible prompt's header
    and its first cuts titled with t and the matches, as the log's events hold them."""
    from transcript_audit import audit_of

    viewer, logs = viewed
    log = logs["trace_tutor"]
    sample = next(s for s in log.samples if s.metadata["condition"] == "answer_key")
    cuts = audit_of(sample).cuts["visible"]
    url = (f"{viewer.url}/#/logs/{Path(log.location).name}/samples/sample/"
           f"{sample.id}/{sample.epoch}/transcript")
    page = _page(browser, url)
    page.wait_for_selector("text=probe sweep")
    text = page.inner_text("body").upper()  # the viewer writes event titles in capitals
    page.close()
    assert "PROBE SWEEP" in text and "INFO: PROBE VISIBLE\n" in text
    for cut in cuts[:2]:  # t = 0 and the first fraction, on screen without scrolling
        k = len(cut["answers"])
        assert f"INFO: PROBE VISIBLE T={cut['t']}: {cut['matches']}/{k} MATCH" in text
        assert f'"PREFIX_TOKENS": {cut["prefix_tokens"]}' in text


def test_sample_table_shows_the_reader_columns_sorted_by_pair(viewed, browser):
    viewer, logs = viewed
    log = logs["selfcommit"]
    page = _page(browser, f"{viewer.url}/#/logs/{Path(log.location).name}")
    page.wait_for_selector("text=p0000-honest")
    head = page.inner_text("body")
    page.close()
    for label in ("PAIR", "CONDITION", "TAU_FIRST 0.8", "C(T)", "A_FINAL", "GOLD", "CORRECT"):
        assert label in head.upper(), label
    ids = [line for line in head.splitlines() if re.fullmatch(r"p\d{4}-\w+", line.strip())]
    assert ids[:4] == ["p0000-hinted", "p0000-honest", "p0001-hinted", "p0001-honest"]
