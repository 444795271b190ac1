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
        ("1 000", 1000), ("\\$5", 5),
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
        ("The final answer is 220 / 144 = 1.63", 220),
    ],
)
def test_extract_final_answer(text, expected):
    assert extract_final_answer(text) == expected


def test_extract_forced_answer_takes_first_number():
    assert extract_forced_answer("18 dollars, or 20") == 18
    assert extract_forced_answer("42}.") == 42
    assert extract_forced_answer("x \\boxed{9} 8") == 9
    assert extract_forced_answer("none") is None


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
