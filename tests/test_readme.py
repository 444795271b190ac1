"""The README's commands as a new user copies them: each ``inspect eval`` and ``inspect
eval-retry`` line in its ``bash`` blocks parses with Inspect's own command line (no unknown
option, no bad value), names a task file that exists, and its ``-T`` parameters create that
task (Inspect's parsing of ``-T``, then the task's own checks, which stop a misspelt name).
A command with a value the reader fills in (``path/to/my_task.py``) is parsed only. No model
runs: a task is created, not evaluated.
"""

from __future__ import annotations

import os
import re
import shlex
from pathlib import Path

import pytest
from inspect_ai._cli.eval import eval_command, eval_retry_command
from inspect_ai._cli.util import parse_cli_args
from inspect_ai._eval.loader import load_tasks

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
PLACEHOLDER = re.compile(r"<[^>]+>|^path/to/")
"""A value the reader replaces (``<interrupted log>``, ``path/to/my_task.py``)."""


def bash_commands(markdown: str) -> list[str]:
    """Each command of the ``bash`` blocks of ``markdown``: continuation lines joined, each
    ``&&`` part on its own, comments dropped."""
    commands = []
    for block in re.findall(r"```bash\n(.*?)```", markdown, flags=re.S):
        for line in block.replace("\\\n", " ").splitlines():
            words = shlex.split(line, comments=True)
            part: list[str] = []
            for w in [*words, "&&"]:
                if w == "&&":
                    if part:
                        commands.append(shlex.join(part))
                    part = []
                else:
                    part.append(w)
    return commands


ENV_ASSIGNMENT = re.compile(r"[A-Z_][A-Z0-9_]*=")


def inspect_commands(prefix: tuple[str, ...]) -> list[list[str]]:
    """The README's commands starting with ``prefix`` (after any ``NAME=value`` environment
    settings), as argument lists after it."""
    found = []
    for command in bash_commands(README.read_text()):
        words = shlex.split(command)
        while words and ENV_ASSIGNMENT.match(words[0]):
            words = words[1:]
        if tuple(words[: len(prefix)]) == prefix:
            found.append(words[len(prefix) :])
    return found


EVALS = inspect_commands(("inspect", "eval"))
RETRIES = inspect_commands(("inspect", "eval-retry"))


def test_the_readme_shows_commands_to_check() -> None:
    """The README's examples: the first run, the probe's four, the backends' two."""
    assert len(EVALS) >= 7 and RETRIES


def test_bash_commands_splits_continuations_chains_and_comments() -> None:
    text = "```bash\na -x 1 \\\n  -y 2   # note\nb && c 'd e'\n```\n```text\nz\n```\n"
    assert bash_commands(text) == ["a -x 1 -y 2", "b", "c 'd e'"]


@pytest.mark.parametrize("args", EVALS, ids=[" ".join(a)[:60] for a in EVALS])
def test_each_inspect_eval_command_parses_and_creates_its_task(args: list[str]) -> None:
    params = eval_command.make_context("eval", list(args)).params
    [spec] = params["tasks"]
    task_args = parse_cli_args(params["t"])
    if PLACEHOLDER.search(spec) or any(
        isinstance(v, str) and PLACEHOLDER.search(v) for v in task_args.values()
    ):
        return  # parsed; the reader names the task
    assert (ROOT / spec.partition("@")[0]).is_file(), spec
    cwd = os.getcwd()
    os.chdir(ROOT)  # as the README runs them: from the clone's root
    try:
        [task] = load_tasks([spec], task_args)
    finally:
        os.chdir(cwd)
    assert len(task.dataset) > 0


@pytest.mark.parametrize("args", RETRIES, ids=[" ".join(a)[:60] for a in RETRIES])
def test_each_eval_retry_command_parses(args: list[str]) -> None:
    params = eval_retry_command.make_context("eval-retry", list(args)).params
    assert params["log_files"] and params["log_dir"]
