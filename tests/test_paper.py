"""Each study's paper configuration against the study's own text (``../shared/seeds/``, or
``$COTAUDIT_SEEDS``; skipped where neither exists, unless ``COTAUDIT_REQUIRE_SEEDS=1``).

Every setting's quote must appear in the study verbatim (whitespace and typographic quotes
aside) and must state the value it fixes; every setting names a real task parameter.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import os
import re
from pathlib import Path

import pytest

from cotaudit.params import ParameterError
from cotaudit.studies.paper import PaperConfiguration, PaperSetting, parameters_used

SEEDS = Path(
    os.environ.get("COTAUDIT_SEEDS")
    or Path(__file__).resolve().parents[1].parent / "shared" / "seeds"
)
STUDIES = ("selfcommit", "trace_tutor", "report_ll")


def _normalised(text: str) -> str:
    text = text.replace("\u201c", '"').replace("\u201d", '"').replace("\u2019", "'")
    return re.sub(r"\s+", " ", text).strip()


def _paper(study: str) -> PaperConfiguration:
    return importlib.import_module(f"cotaudit.studies.{study}.paper").PAPER


def _task_function(study: str):
    return getattr(importlib.import_module(f"cotaudit.tasks.{study}"), study)


@pytest.fixture(scope="module")
def seeds() -> dict[str, str]:
    if not SEEDS.is_dir():
        why = (
            f"the studies' texts are not at {SEEDS} (the shared folder beside the checkout; "
            "set COTAUDIT_SEEDS)"
        )
        if os.environ.get("COTAUDIT_REQUIRE_SEEDS") == "1":
            pytest.fail(why)
        pytest.skip(why)
    return {p.name: _normalised(p.read_text(encoding="utf-8")) for p in SEEDS.glob("*.txt")}


@pytest.mark.parametrize("study", STUDIES)
def test_every_quote_is_the_studys_own_words_and_states_its_value(study, seeds):
    paper = _paper(study)
    assert paper.study == study
    text = seeds[paper.seed]
    assert paper.settings, f"{study}: no settings"
    for name, setting in paper.settings.items():
        quote = _normalised(setting.quote)
        assert quote in text, f"{study}.{name}: quote not in {paper.seed}: {setting.quote!r}"
        assert _normalised(setting.stated_as()) in quote, (
            f"{study}.{name}: the quote does not state {setting.stated_as()!r}"
        )


@pytest.mark.parametrize("study", STUDIES)
def test_every_setting_names_a_task_parameter(study):
    parameters = inspect.signature(_task_function(study)).parameters
    defaults = {name: p.default for name, p in parameters.items()}
    assert "paper" in defaults and defaults["paper"] is False
    assert set(_paper(study).settings) <= set(defaults)


_TOY = PaperConfiguration(
    study="s",
    source="S",
    seed="x.txt",
    model="m",
    settings={
        "k": PaperSetting(5, "k=5"),
        "stride": PaperSetting(30, "stride 30"),
        "problems": PaperSetting(50, "first 50"),
    },
)


def test_the_paper_is_the_base_that_given_values_overlay():
    # the task's values (defaults k=1, stride=10, problems=2, seed=0), k given at its default
    arguments = {"k": 1, "stride": 30, "problems": 5, "seed": 3}
    resolved, overrides = _TOY.apply(arguments, given={"k", "stride", "problems", "seed"})
    # k given at the task's default 1 stays 1 and is an override; stride given as the paper's
    # own value is no override; problems given stays 5; seed is not a paper knob
    assert resolved == {"k": 1, "stride": 30, "problems": 5, "seed": 3}
    assert overrides == {"k": 1, "problems": 5}
    # nothing given: the paper's values, no override
    resolved, overrides = _TOY.apply({"k": 1, "stride": 10, "problems": 2, "seed": 0}, given=())
    assert resolved == {"k": 5, "stride": 30, "problems": 50, "seed": 0} and overrides == {}


def test_configure_records_what_ran_and_refuses_a_non_bool():
    arguments = {"k": 1, "stride": 10, "problems": 2, "seed": 0}
    assert _TOY.configure(False, arguments, given=()) == (arguments, None)
    resolved, record = _TOY.configure(True, arguments, given={"problems"})
    assert record is not None
    assert record["parameters"] == resolved == {"k": 5, "stride": 30, "problems": 2, "seed": 0}
    assert record["overrides"] == {"problems": 2}
    with pytest.raises(ParameterError, match="-T paper: must be true or false"):
        _TOY.configure("yes", arguments, given=())


def test_parameters_used_reads_what_ran():
    # Inspect's task_args list the defaults for parameters not given
    task_args = {"k": 1, "stride": 10, "problems": 2, "paper": True}
    record = _TOY.configure(True, {"k": 1, "stride": 10, "problems": 2}, {"problems"})[1]
    assert parameters_used(task_args, {"paper_configuration": record}) == {
        "k": 5,
        "stride": 30,
        "problems": 2,
    }
    # a log whose record has no parameters: the settings' values, then the overrides
    older = {k: v for k, v in record.items() if k != "parameters"}
    assert parameters_used(task_args, {"paper_configuration": older}) == {
        "k": 5,
        "stride": 30,
        "problems": 2,
        "paper": True,
    }
    assert parameters_used(task_args, {}) == task_args


# --- every quotation the docs and docstrings attribute to a study ----------------------------

ROOT = Path(__file__).resolve().parents[1]
ATTRIBUTION = re.compile(
    r"\b(stud(y|y's|ies)|the paper|paper's|its words|its text|Sec\. [IVX]|Table [IVX]+)", re.I
)
"""Words that, within :data:`ATTRIBUTION_WINDOW` characters before a quotation, attribute it to
a study."""
ATTRIBUTION_WINDOW = 100
ELISION = re.compile(r"\s*(?:\.\.\.|…|\[\.\.\.\])\s*")
OURS = {
    "... (Qwen base model)": "a column label of cotaudit report's published table",
    "The answer is 18.": "the default model's forced answer under the study's tag",
    "2 (of 50 asked; --limit 4)": "a settings line of cotaudit report",
}
"""Quotations beside a study's name that are not the study's words, and what they are."""


def _documents() -> dict[str, str]:
    """The docs pages and README, and the docstrings and string constants of every module."""
    texts = {str(p.relative_to(ROOT)): p.read_text(encoding="utf-8") for p in ROOT.glob("*.md")}
    texts |= {
        str(p.relative_to(ROOT)): p.read_text(encoding="utf-8") for p in ROOT.glob("docs/*.md")
    }
    for folder in ("src", "tasks", "scorers", "solvers"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            strings = [
                n.value
                for n in ast.walk(tree)
                if isinstance(n, ast.Constant) and isinstance(n.value, str)
            ]
            texts[str(path.relative_to(ROOT))] = "\n\n".join(strings)
    return texts


def _passages(text: str) -> list[str]:
    """Paragraphs (a table row each on its own) of prose: code blocks and spans left out."""
    text = re.sub(r"```.*?```", " ", text, flags=re.S)
    text = re.sub(r"`[^`\n]*`", " ", text)
    out: list[str] = []
    for block in re.split(r"\n\s*\n", text):
        rows = block.split("\n") if block.lstrip().startswith("|") else [block]
        # a docstring's escapes as the text reads: "\\n" a line break, "\\\\" one backslash
        out += [_normalised(row.replace("\\n", " ").replace("\\\\", "\\")) for row in rows]
    return out


def attributed_quotations(passage: str) -> list[str]:
    """The double-quoted spans of at least three words that a study's name (or a section or
    table of it) precedes within the window, or that open the passage."""
    found = []
    for m in re.finditer(r'"([^"]+)"', passage):
        before = passage[max(0, m.start() - ATTRIBUTION_WINDOW) : m.start()]
        if len(m.group(1).split()) >= 3 and (m.start() == 0 or ATTRIBUTION.search(before)):
            found.append(m.group(1))
    return found


def verbatim_in(quotation: str, text: str) -> bool:
    """Each part of ``quotation`` between elisions ("...", "…", "[...]") appears in ``text``
    (a part's first letter in either case: a quotation may start mid-sentence)."""
    parts = [p.strip(" .,;:") for p in ELISION.split(quotation)]
    parts = [p for p in parts if p]
    return bool(parts) and all(p in text or p[0].swapcase() + p[1:] in text for p in parts)


def _our_texts() -> list[str]:
    """Our prompt texts (every string constant of at least three words in the studies' prompt
    modules) and the docs' headings: a quotation of one (or of part of one, or of one completed,
    as a tag with the answer after it) is ours or a cross-reference."""
    texts: list[str] = []
    for module in ("selfcommit.prompts", "trace_tutor.prompts", "report_ll.fixtures.schema"):
        source = importlib.import_module(f"cotaudit.studies.{module}").__file__
        tree = ast.parse(Path(source).read_text(encoding="utf-8"))
        texts += [
            _normalised(n.value)
            for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str)
        ]
    for page in ROOT.glob("docs/*.md"):
        texts += re.findall(r"^#+ (.+)$", page.read_text(encoding="utf-8"), flags=re.M)
    return [t for t in texts if len(t.split()) >= 3]


def test_quotation_rules_by_hand():
    passage = 'The study: "We use the first 50 examples", it says.'
    assert attributed_quotations(passage) == ["We use the first 50 examples"]
    assert attributed_quotations('Our tag, "a b c d", names nobody.') == []
    assert attributed_quotations('"Opening words quoted here": then ours') == [
        "Opening words quoted here"
    ]
    assert verbatim_in("at each prefix ... the fraction", "At each prefix, the fraction")
    assert not verbatim_in("The 144 scenarios come from 48 bugs", "the same 144 scenarios")


def test_every_quotation_attributed_to_a_study_is_verbatim(seeds):
    ours = _our_texts()
    wrong = []
    for name, text in _documents().items():
        for passage in _passages(text):
            for quotation in attributed_quotations(passage):
                q = quotation.rstrip("\\ ")
                if q in OURS or any(q.strip(" .") in t or t in q for t in ours):
                    continue
                if not any(verbatim_in(q, study) for study in seeds.values()):
                    wrong.append(f"{name}: {quotation!r}")
    assert not wrong, "quoted as a study's words, not in its text:\n" + "\n".join(wrong)
