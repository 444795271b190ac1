import pytest
from hypothesis import given
from hypothesis import strategies as st

from cotaudit.answers import extract_final_answer, extract_forced_answer, normalize_number


@pytest.mark.parametrize(
    "text, expected",
    [
        ("18", 18), ("1,234", 1234), ("$1,234", 1234), ("$18.00", 18), ("18.0", 18),
        ("-7", -7), ("\\boxed{42}", 42), ("\\boxed{1,000}", 1000), ("#### 72", 72),
        ("  5. ", 5), ("+3", 3), ("2.5", None), ("abc", None), ("", None), (None, None),
        ("1 000", 1000), ("\\$5", 5), ("-$5", -5), ("$-5", -5),
        ("1/2", None), ("\\boxed{3/4}", None), ("15 - 1", None), ("1,234.5", None),
        ("1,23", None), ("12,34,567", None), ("15 1", None),
    ],
)
def test_normalize_number(text, expected):
    assert normalize_number(text) == expected


@pytest.mark.parametrize(
    "text, expected",
    [
        ("so 3 + 4 = 7. The final answer is 7.", 7),
        ("We get \\boxed{12} and then 13", 12),
        ("steps 1 2 3\n#### 1,500", 1500),
        ("The answer is $-4.", -4),
        ("first 10 then 20", 20),
        ("no numbers here", None),
        # a stated fraction is no integer answer (was read as 220, a silent false match)
        ("The final answer is 220 / 144 = 1.63", None),
        ("So 3 + 4 = 7 apples.", 7),  # the result after "=" stands alone
        ("The answer is **42**.", 42),
        ("The answer is 1/2.", None),
        ("\\boxed{3/4}", None),
        ("\\boxed{\\frac{1}{2}}", None),
        ("The answer is $\\frac{3}{4}$.", None),
        ("\\boxed{18 \\text{ dollars}}", 18),
        ("In total 15 - 1", None),
        ("x - 5", None),
        ("x = -5", -5),
        ("The answer is 1,234.5", None),
        ("The answer is 1,234", 1234),
        ("He paid $12 in all", 12),
        ("The answer is 12.0", 12),
        ("pages 10-12", None),
        ("the list 1,2,3", None),
    ],
)
def test_extract_final_answer(text, expected):
    assert extract_final_answer(text) == expected


def test_extract_forced_answer_takes_first_number():
    assert extract_forced_answer("18 dollars, or 20") == 18
    assert extract_forced_answer("42}.") == 42
    assert extract_forced_answer("x \\boxed{9} 8") == 9
    assert extract_forced_answer("none") is None
    assert extract_forced_answer(" 1/2 of them") is None
    assert extract_forced_answer("15 - 1 = 14") is None
    assert extract_forced_answer("\\boxed{\\frac{1}{2}}") is None
    assert extract_forced_answer(" -3 degrees") == -3


# -- non-integer families (hypothesis): never one operand read as the answer ------------------

_N = st.integers(min_value=-10**9, max_value=10**9)
_POS = st.integers(min_value=0, max_value=10**9)
_SPACE = st.sampled_from(["", " ", "  "])
_LEAD = st.sampled_from(["", "The answer is ", "The final answer is ", "So in total ",
                         "Answer: ", "= "])
_END = st.sampled_from(["", ".", " ", "\n"])


def _all_parsers(text):
    return extract_final_answer(text), extract_forced_answer(text)


@given(_LEAD, _N, _SPACE, st.integers(min_value=1, max_value=10**6), _END)
def test_a_final_fraction_is_no_integer(lead, a, space, b, end):
    for text in (f"{lead}{a}{space}/{space}{b}{end}", f"{lead}\\boxed{{{a}/{b}}}{end}",
                 f"{lead}\\boxed{{\\frac{{{a}}}{{{b}}}}}{end}", f"{lead}$\\frac{{{a}}}{{{b}}}${end}"):
        assert _all_parsers(text) == (None, None), text
    assert normalize_number(f"{a}/{b}") is None
    assert normalize_number(f"\\boxed{{{a}/{b}}}") is None


@given(_LEAD, _POS, st.sampled_from(["-", "+", "*", "/", "×", "÷"]), _SPACE, _POS, _END)
def test_a_final_expression_is_no_integer(lead, a, op, space, b, end):
    """ "15 - 1" is neither -1 nor 15 nor 1: an unevaluated expression has no integer answer."""
    text = f"{lead}{a}{space}{op}{space}{b}{end}"
    assert _all_parsers(text) == (None, None), text
    assert normalize_number(f"{a}{space}{op}{space}{b}") is None


@given(_LEAD, _N, st.integers(min_value=1, max_value=999), _END)
def test_a_grouped_decimal_is_no_integer(lead, n, frac, end):
    """ "1,234.5" is not 1234 (nor 1, nor 234); "1,234.50" neither; "1,234.0" is 1234."""
    frac_text = f"{frac:03d}".rstrip("0") or "5"
    text = f"{lead}{n:,}.{frac_text}{end}"
    assert _all_parsers(text) == (None, None), text
    assert normalize_number(f"{n:,}.{frac_text}") is None
    assert extract_final_answer(f"{lead}{n:,}.0{end}") == n


@given(_LEAD, _N, _END)
def test_valid_forms_still_parse(lead, n, end):
    sign = "-" if n < 0 else ""
    for form in (f"{n}", f"{n:,}", f"{sign}${abs(n):,}", f"${n}", f"{n}.0", f"{n:,}.00",
                 f"\\boxed{{{n:,}}}"):
        text = f"{lead}{form}{end}"
        assert _all_parsers(text) == (n, n), text
    assert extract_final_answer(f"steps 3 + 4 = 7\n#### {n:,}") == n


@given(st.integers(min_value=-10**12, max_value=10**12))
def test_normalize_roundtrip_integers(n):
    assert normalize_number(str(n)) == n
    assert normalize_number(f"{n:,}") == n
    assert normalize_number(f"{n}.0") == n


@given(st.text())
def test_parsers_never_raise(text):
    normalize_number(text)
    extract_final_answer(text)
    extract_forced_answer(text)
