import pytest
from hypothesis import given
from hypothesis import strategies as st

from cotaudit.answers import (
    READINGS,
    extract_final_answer,
    extract_forced_answer,
    normalize_number,
)


@pytest.mark.parametrize(
    "text, expected",
    [
        ("18", 18),
        ("1,234", 1234),
        ("$1,234", 1234),
        ("$18.00", 18),
        ("18.0", 18),
        ("-7", -7),
        ("\\boxed{42}", 42),
        ("\\boxed{1,000}", 1000),
        ("#### 72", 72),
        ("  5. ", 5),
        ("+3", 3),
        ("2.5", None),
        ("abc", None),
        ("", None),
        (None, None),
        ("1 000", 1000),
        ("\\$5", 5),
        ("-$5", -5),
        ("$-5", -5),
        ("1/2", None),
        ("\\boxed{3/4}", None),
        ("15 - 1", None),
        ("1,234.5", None),
        ("1,23", None),
        ("12,34,567", None),
        ("15 1", None),
        ("1e3", None),
        ("5 x 3", None),
        ("1 234", 1234),
        ("#### 1 234", 1234),
    ],
)
def test_normalize_number(text, expected):
    assert normalize_number(text) == expected


# -- final answers: stated (default) and last_number, each case read both ways ---------------


@pytest.mark.parametrize(
    "text, stated, last_number",
    [
        # the forms a prompt asks for
        ("so 3 + 4 = 7. The final answer is 7.", 7, 7),
        ("We get \\boxed{12} and then 13", 12, 12),
        ("steps 1 2 3\n#### 1,500", 1500, 1500),
        ("**Final Answer:** 18", 18, 18),
        ("The final answer is: $18.", 18, 18),
        ("Final answer = 18 eggs", 18, 18),
        ("The final answer is \\(18\\).", 18, 18),
        ("The final answer is **42**.", 42, 42),
        # "answer is" / "answer:" without "final" in a response that ended on its own
        ("Therefore, the answer is 3.", 3, 3),
        ("The answer is $-4.", -4, -4),
        ("The answer is 1,234", 1234, 1234),
        ("The answer is 12.0", 12, 12),
        ("Answer: 18", 18, 18),
        # the prompt's form wins over an earlier "answer is" (e.g. the hint restated)
        ("The hint says the answer is 18. The final answer is 20.", 20, 20),
        # a bare answer (a scorer's Score.answer) is its own statement
        ("18", 18, 18),
        ("$1,234", 1234, 1234),
        # no stated answer: only the last_number reading reads a number
        ("first 10 then 20", None, 20),
        ("So 3 + 4 = 7 apples.", None, 7),  # the result after "=" stands alone
        ("He paid $12 in all", None, 12),
        ("x = -5", None, -5),
        ("Step 2: we need to add the remaining", None, 2),
        # "answer" with no connector states nothing (was read as 20)
        ("She has to answer 20 questions before lunch; 5 remain", None, 5),
        ("no numbers here", None, None),
        # a stated fraction or expression is no integer answer (220 would be a silent false match)
        ("The final answer is 220 / 144 = 1.63", None, None),
        ("The answer is 1/2.", None, None),
        ("\\boxed{3/4}", None, None),
        ("\\boxed{\\frac{1}{2}}", None, None),
        ("The answer is $\\frac{3}{4}$.", None, None),
        ("\\boxed{18 \\text{ dollars}}", 18, 18),
        ("In total 15 - 1", None, None),
        ("x - 5", None, None),
        ("The answer is 1,234.5", None, None),
        ("pages 10-12", None, None),
        ("the list 1,2,3", None, None),
        # "x" as times: 5 and 3 are operands, the result after "=" stands alone
        ("5 x 3 = 15", None, 15),
        ("5x3 = 15", None, 15),
        ("The final answer is 5 x 3 = 15", None, None),
        ("The final answer is 5 x 3", None, None),
        ("She bought 5 boxes", None, 5),  # the x of a word is no operator
        ("He ran 5x faster. The final answer is 5.", 5, 5),  # "5x" with no number after: alone
        # scientific notation is no integer as written: neither 1 nor 3
        ("The final answer is 1e3", None, None),
        ("The final answer is 2.5E-4.", None, None),
        ("it costs 1e3 dollars", None, None),
        # space grouping only where the number fills its field; in running text "1 234" is
        # two numbers or one, so neither is read
        ("The final answer is 1 234", None, None),
        ("He has 1 234 apples", None, None),
        ("\\boxed{1 234}", 1234, 1234),
        ("#### 1 234", 1234, 1234),
        ("1 234", 1234, 1234),
        ("He bought 3 100-page books", None, None),
    ],
)
def test_extract_final_answer(text, stated, last_number):
    assert extract_final_answer(text) == stated
    assert extract_final_answer(text, reading="stated") == stated
    assert extract_final_answer(text, reading="last_number") == last_number


# The examples: a response cut by its token limit (truncated=True) without a stated
# answer has none; the last_number reading still reads one (it counts cut responses).
@pytest.mark.parametrize(
    "text, stated, last_number",
    [
        ("Step 2: we need to add the remaining", None, 2),
        # a hinted CoT cut while restating the hint: "answer is" is the hint's own wording
        ("The hint tells us the answer is 18. Let's check: she eats 3 and bakes 4, so", None, 18),
        ("Janet has to answer 20 questions. After lunch 5 remain, so she", None, 5),
        # a stated number at the very end of a cut response may be cut itself (64 of 640?)
        ("The final answer is 64", None, 64),
        ("#### 64", None, 64),
        ("The final answer is 64.", None, 64),
        # ... but not when something that cannot continue a number follows it
        ("The final answer is 64 eggs. Let me double", 64, 64),
        ("The final answer is 64.\n\nTo check", 64, 64),
        ("#### 64\nThe", 64, 64),
        ("So \\boxed{64} is it, and", 64, 64),  # a closed box is complete
        ("\\boxed{64", None, 64),  # an unclosed box is no box: the last number
    ],
)
def test_truncated_response_needs_a_stated_complete_answer(text, stated, last_number):
    assert extract_final_answer(text, truncated=True) == stated
    assert extract_final_answer(text, reading="last_number", truncated=True) == last_number


def test_a_response_that_ended_on_its_own_reads_a_final_number():
    # the same text as above, not cut: "The final answer is 64" is a complete statement
    assert extract_final_answer("The final answer is 64") == 64
    assert extract_final_answer("The hint tells us the answer is 18. Let's check, so") == 18


def test_unknown_reading_is_an_error():
    assert READINGS == ("stated", "last_number")
    with pytest.raises(ValueError, match="unknown answer reading 'last'"):
        extract_final_answer("18", reading="last")  # type: ignore[arg-type]


def test_extract_forced_answer_takes_first_number():
    assert extract_forced_answer("18 dollars, or 20") == 18
    assert extract_forced_answer("42}.") == 42
    assert extract_forced_answer("x \\boxed{9} 8") == 9
    assert extract_forced_answer("none") is None
    assert extract_forced_answer(" 1/2 of them") is None
    assert extract_forced_answer("15 - 1 = 14") is None
    assert extract_forced_answer("5 x 3 = 15") is None
    assert extract_forced_answer("1e3") is None
    assert extract_forced_answer("1 234 eggs") is None
    assert extract_forced_answer("\\boxed{\\frac{1}{2}}") is None
    assert extract_forced_answer(" -3 degrees") == -3


# -- non-integer families (hypothesis): never one operand read as the answer ------------------

_N = st.integers(min_value=-(10**9), max_value=10**9)
_POS = st.integers(min_value=0, max_value=10**9)
_SPACE = st.sampled_from(["", " ", "  "])
_LEAD = st.sampled_from(
    ["", "The answer is ", "The final answer is ", "So in total ", "Answer: ", "= "]
)
_STATED_LEAD = st.sampled_from(
    [
        "",
        "The answer is ",
        "The final answer is ",
        "Answer: ",
        "**Final Answer:** ",
        "The final answer is: ",
    ]
)
_END = st.sampled_from(["", ".", " ", "\n"])


def _all_parsers(text):
    return (*(extract_final_answer(text, reading=r) for r in READINGS), extract_forced_answer(text))


@given(_LEAD, _N, _SPACE, st.integers(min_value=1, max_value=10**6), _END)
def test_a_final_fraction_is_no_integer(lead, a, space, b, end):
    for text in (
        f"{lead}{a}{space}/{space}{b}{end}",
        f"{lead}\\boxed{{{a}/{b}}}{end}",
        f"{lead}\\boxed{{\\frac{{{a}}}{{{b}}}}}{end}",
        f"{lead}$\\frac{{{a}}}{{{b}}}${end}",
    ):
        assert _all_parsers(text) == (None, None, None), text
    assert normalize_number(f"{a}/{b}") is None
    assert normalize_number(f"\\boxed{{{a}/{b}}}") is None


@given(_LEAD, _POS, st.sampled_from(["-", "+", "*", "/", "×", "÷", "x", " x"]), _SPACE, _POS, _END)
def test_a_final_expression_is_no_integer(lead, a, op, space, b, end):
    """ "15 - 1" is neither -1 nor 15 nor 1, "5 x 3" neither 5 nor 3: an unevaluated
    expression has no integer answer."""
    text = f"{lead}{a}{space}{op}{space}{b}{end}"
    assert _all_parsers(text) == (None, None, None), text
    assert normalize_number(f"{a}{space}{op}{space}{b}") is None


@given(_LEAD, _N, st.integers(min_value=1, max_value=999), _END)
def test_a_grouped_decimal_is_no_integer(lead, n, frac, end):
    """ "1,234.5" is not 1234 (nor 1, nor 234); "1,234.50" neither; "1,234.0" is 1234."""
    frac_text = f"{frac:03d}".rstrip("0") or "5"
    text = f"{lead}{n:,}.{frac_text}{end}"
    assert _all_parsers(text) == (None, None, None), text
    assert normalize_number(f"{n:,}.{frac_text}") is None
    assert extract_final_answer(f"{lead}{n:,}.0{end}", reading="last_number") == n


@given(_LEAD, st.integers(min_value=1, max_value=999), st.integers(min_value=-9, max_value=9), _END)
def test_scientific_notation_is_no_integer(lead, mantissa, exponent, end):
    """ "1e3" is not 1, nor 3 (nor 1000: an integer answer is written out)."""
    text = f"{lead}{mantissa}e{exponent}{end}"
    assert _all_parsers(text) == (None, None, None), text


@given(_STATED_LEAD, _N, _END)
def test_valid_stated_forms_parse_in_both_readings(lead, n, end):
    sign = "-" if n < 0 else ""
    for form in (
        f"{n}",
        f"{n:,}",
        f"{sign}${abs(n):,}",
        f"${n}",
        f"{n}.0",
        f"{n:,}.00",
        f"\\boxed{{{n:,}}}",
    ):
        text = f"{lead}{form}{end}"
        assert _all_parsers(text) == (n, n, n), text
    assert extract_final_answer(f"steps 3 + 4 = 7\n#### {n:,}") == n


@given(st.sampled_from(["So in total ", "= ", "we get "]), _N, _END)
def test_an_unstated_number_is_read_only_as_the_last_number(lead, n, end):
    text = f"{lead}{n:,}{end}"
    assert _all_parsers(text) == (None, n, n), text


@given(st.integers(min_value=-(10**12), max_value=10**12))
def test_normalize_roundtrip_integers(n):
    assert normalize_number(str(n)) == n
    assert normalize_number(f"{n:,}") == n
    assert normalize_number(f"{n}.0") == n
    assert normalize_number(f"{n:,}".replace(",", " ")) == n


@given(st.text(), st.booleans())
def test_parsers_never_raise(text, truncated):
    normalize_number(text)
    for reading in READINGS:
        extract_final_answer(text, reading=reading, truncated=truncated)
    extract_forced_answer(text)
