import json

import pytest

from cotaudit.datasets.gsm8k import DatasetError, load_problems


def test_vendored_split_loads_all_integer_problems():
    problems = load_problems()
    assert len(problems.items) == 1319
    assert problems.items[0].answer == 18
    assert problems.items[0].index == 0


def test_limit_takes_first_problems():
    assert [p.index for p in load_problems(limit=3).items] == [0, 1, 2]


def test_non_integer_answers_are_filtered_and_counted(tmp_path):
    f = tmp_path / "d.jsonl"
    rows = [
        {"question": "q1", "answer": "x\n#### 3"},
        {"question": "q2", "answer": "y\n#### 2.5"},
        {"question": "q3", "answer": "z\n#### $1,200"},
    ]
    f.write_text("\n".join(json.dumps(r) for r in rows))
    loaded = load_problems(f)
    assert [p.answer for p in loaded.items] == [3, 1200]
    assert loaded.non_integer_dropped == 1


def test_json_list_file(tmp_path):
    f = tmp_path / "d.json"
    f.write_text(json.dumps([{"question": "q", "answer": "#### 4"}]))
    assert load_problems(f).items[0].answer == 4


@pytest.mark.parametrize(
    "line, message",
    [
        ('{"question": "q"}', "line 2: missing field 'answer'"),
        ('{"question": "", "answer": "#### 1"}', "line 2: field 'question' is empty"),
        ('{"question": "q", "answer": "no final"}', "line 2: field 'answer' has no '#### N'"),
        ('{"question": "q", "answer": ', "line 2: not valid JSON"),
        ("[1, 2]", "line 2: expected a JSON object"),
    ],
)
def test_malformed_row_names_file_line_and_field(tmp_path, line, message):
    f = tmp_path / "bad.jsonl"
    f.write_text('{"question": "ok", "answer": "#### 1"}\n' + line + "\n")
    with pytest.raises(DatasetError) as err:
        load_problems(f)
    assert str(f) in str(err.value)
    assert message in str(err.value)
