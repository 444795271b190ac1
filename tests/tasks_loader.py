"""Import the task files under tasks/ (they are not a package)."""

import importlib.util
from pathlib import Path

TASKS = Path(__file__).resolve().parents[1] / "tasks"


def load_task_module(name: str):
    spec = importlib.util.spec_from_file_location(f"cotaudit_task_{name}", TASKS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def load_selfcommit():
    return load_task_module("selfcommit").selfcommit
