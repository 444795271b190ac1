"""The answer-form registry (pure): every form's entry owns its detection, extractor, tag,
verification text, exact references and exact plan, and nothing outside the registry compares
a form's name."""

from __future__ import annotations

import ast
import string
from pathlib import Path

import pytest

from cotaudit.engine.base import Vocabulary
from cotaudit.probing.choices import ALPHABET, ShownChoice
from cotaudit.probing.exact import token_classes
from cotaudit.probing.forms import (
    FORM_NAMES,
    FORMS,
    ExactReference,
    TaskFacts,
    detect_form,
    get_form,
)
from cotaudit.probing.settings import ProbeSettings

ROOT = Path(__file__).resolve().parents[2]
CHARS = ("", *string.printable)  # a character vocabulary; id 0 is the end of sequence
CHAR_VOCAB = Vocabulary(CHARS, frozenset({0}))


def char_tokenize(text: str) -> list[int]:
    return [CHARS.index(ch) for ch in text]


# Each form: a response stating an answer, its canonical answer, a target entry and the exact
# reference value that target gives (all by hand from the extractors' docstrings). A new form
# adds its row here: test_every_form_has_an_example fails until it does.
EXAMPLES: dict[str, tuple[str, str, str, int | str]] = {
    "letter": ("18 eggs, so\nANSWER: c", "C", "C", "C"),
    "integer": ("Step 1: 9 * 2 = 18.\nThe final answer is 1,234.", "1234", "1,234", 1234),
    "string": ("It is in France.\nThe answer is Paris.", "paris", "Paris", "paris"),
}


def test_the_names_are_the_registrys():
    assert FORM_NAMES == tuple(FORMS)
    assert all(form.name == name for name, form in FORMS.items())
    assert all(form.tag == "\n\n" + form.lead for form in FORMS.values())
    assert all(form.answer_max_tokens > 0 for form in FORMS.values())


def test_every_form_has_an_example():
    assert set(EXAMPLES) == set(FORM_NAMES)


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_each_form_reads_its_own_verification_text(name):
    form = get_form(name)
    stated, canonical, target, reference = EXAMPLES[name]
    assert form.extract(stated) == canonical
    # a forced answer reaches the scorer as lead + its first line, and reads back the same
    assert form.same(form.verification_text(f" {target}\nbecause ..."), stated)
    assert form.extract(form.verification_text(target)) == canonical


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_each_forms_references_name_the_form_and_plan_through_it(name):
    form = get_form(name)
    stated, _, target, reference = EXAMPLES[name]
    by_target = form.target_reference([target], None)
    by_final = form.final_reference(stated, None, None)
    assert (by_target.form, by_target.value) == (form, reference)
    assert (by_final.form, by_final.value) == (form, reference)
    assert form.final_reference("  \n", None, None).value is None  # no final answer
    # the form's plan counts the reference as written: p is read at one node at least
    plan = by_target.plan(char_tokenize, token_classes(CHAR_VOCAB), 8)
    assert plan.p_reads or plan.p_paths


def test_a_letter_reference_reads_every_choice_letter():
    ref = ExactReference(get_form("letter"), "A", letters=("A", "B"))
    plan = ref.plan(char_tokenize, token_classes(CHAR_VOCAB), 4)
    assert plan.letter_reads.keys() == {"A", "B"}
    bare = get_form("letter").target_reference(["b"], None)
    assert (bare.value, bare.letters) == ("B", ALPHABET)


@pytest.mark.parametrize(
    ("facts", "expected"),
    [
        (TaskFacts(has_choices=True, numeric_scorer=False, targets=("B",)), "letter"),
        # choices come first: a choice task whose scorer reads numbers is still letters
        (TaskFacts(has_choices=True, numeric_scorer=True, targets=("12",)), "letter"),
        (TaskFacts(has_choices=False, numeric_scorer=True, targets=("Paris",)), "integer"),
        (TaskFacts(has_choices=False, numeric_scorer=False, targets=("18", "1,234")), "integer"),
        (TaskFacts(has_choices=False, numeric_scorer=False, targets=("18", "Paris")), "string"),
        # a list target is not a text that is one integer
        (TaskFacts(has_choices=False, numeric_scorer=False, targets=(["18", "19"],)), "string"),
        (TaskFacts(has_choices=False, numeric_scorer=False, targets=()), "string"),
    ],
)
def test_detection_by_hand(facts, expected):
    assert detect_form(facts).name == expected


def test_only_a_form_that_reads_choices_answers_from_marked_choices():
    assert [f.name for f in FORMS.values() if f.reads_choices] == ["letter"]
    probed = [ShownChoice(value=v, original_position=i) for i, v in enumerate(["17", "18"])]
    marked = [ShownChoice(value="18", original_position=0)]  # shown first, dataset letter B
    assert get_form("letter").choice_answer(marked, probed) == "B"
    assert get_form("string").choice_answer(marked, probed) is None


def test_an_unknown_form_is_an_error_where_it_is_named():
    with pytest.raises(ValueError, match=r"^unknown answer form 'date'; expected one of"):
        get_form("date")
    with pytest.raises(ValueError, match=r"-T answer: must be auto or one of"):
        ProbeSettings(answer="date")


def _name_comparisons(path: Path) -> list[str]:
    """Comparisons in a module with a form's name as a literal (``form == "letter"``)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if not isinstance(node, ast.Compare):
            continue
        sides = [node.left, *node.comparators]
        literals = [
            k
            for side in sides
            for k in (side.elts if isinstance(side, ast.Tuple | ast.List | ast.Set) else [side])
        ]
        if any(isinstance(k, ast.Constant) and k.value in FORM_NAMES for k in literals):
            found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {ast.unparse(node)}")
    return found


def test_no_module_compares_a_forms_name():
    code = [p for d in ("src", "solvers", "scorers", "tasks") for p in (ROOT / d).rglob("*.py")]
    assert code
    assert [hit for p in code for hit in _name_comparisons(p)] == []
