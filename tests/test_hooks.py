"""cotaudit's Inspect hooks act and speak only where a cotaudit task runs: installed, the
package adds nothing to an ``inspect eval`` of someone else's task (Inspect lists every
registered hook when a model starts), while a cotaudit task still gets its headline lines."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

FOREIGN_TASK = textwrap.dedent(
    """
    from inspect_ai import Task, task
    from inspect_ai.dataset import Sample
    from inspect_ai.scorer import match
    from inspect_ai.solver import solver


    @solver
    def answer_four():
        async def solve(state, generate):
            state.output.completion = "4"
            return state

        return solve


    @task
    def arithmetic():
        return Task(
            dataset=[Sample(input="2 + 2?", target="4")], solver=answer_four(), scorer=match()
        )
    """
)


def _inspect(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    inspect = Path(sys.executable).with_name("inspect")
    env = {**os.environ, "COLUMNS": "200"}
    return subprocess.run(
        [str(inspect), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=600
    )


def test_another_tasks_eval_hears_nothing_from_cotaudit(tmp_path):
    """``inspect eval`` of a task that is not cotaudit's, with cotaudit installed: no "hooks
    enabled" banner, no cotaudit hook listed, no headline line; the run itself as usual."""
    (tmp_path / "arithmetic.py").write_text(FOREIGN_TASK)
    run = _inspect(
        "eval", "arithmetic.py", "--model", "mockllm/model", "--log-dir", "logs", cwd=tmp_path
    )
    out = run.stdout + run.stderr
    assert run.returncode == 0, out
    assert "accuracy" in out  # Inspect's own summary
    assert "hooks enabled" not in out and "cotaudit" not in out


def test_hooks_register_when_a_cotaudit_task_is_created():
    """Importing the entry point registers no hook; creating a cotaudit task registers each,
    once (run in a fresh interpreter: the test process has created tasks already)."""
    code = textwrap.dedent(
        """
        from inspect_ai.hooks._hooks import get_all_hooks
        import cotaudit._registry
        print(sorted(type(h).__name__ for h in get_all_hooks()))
        from cotaudit.tasks.selfcommit import selfcommit
        selfcommit(problems=1)
        selfcommit(problems=1)
        print(sorted(type(h).__name__ for h in get_all_hooks()))
        """
    )
    run = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=True
    )
    assert run.stdout.splitlines() == [
        "[]",
        "['ClusterContrastHook', 'HeadlineHook', 'ResumeHintHook']",
    ]
