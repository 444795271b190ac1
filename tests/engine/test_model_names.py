"""Model names of the local providers: an alias, a model folder or a hub id, else one line at once.

The hub look-ups go to a local HTTP server answering as the Hugging Face hub does (200 with the
model's info; 401 for a model it does not have, which is what the hub answers an anonymous
request for a missing or private repository; 500 for a server error), reached by pointing
``huggingface_hub.constants.ENDPOINT`` at it; no test needs the internet.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from huggingface_hub import constants

from cotaudit.providers._local import MODEL_ALIASES, ModelNameError, resolve_model_path

ROOT = Path(__file__).resolve().parents[2]
ALIAS_LIST = ", ".join(MODEL_ALIASES)  # "default, tiny, tiny-think"


def _fails_at_once(name: str, provider: str = "hf-probe") -> str:
    """The one-line message for ``name``, checked to come within a second."""
    start = time.monotonic()
    with pytest.raises(ModelNameError) as err:
        resolve_model_path(name, f"{provider}/")
    assert time.monotonic() - start < 1.0
    text = str(err.value)
    assert text.startswith(f"{provider}/{name}: no such model (")
    assert text.endswith(f"or an alias: {ALIAS_LIST}.") and "\n" not in text
    return text


@pytest.mark.parametrize("name", ["a/b/c", "../no/such/model", "~/no-such-model", "x y"])
def test_a_name_of_no_hub_id_shape_fails_without_asking_the_hub(name, monkeypatch):
    monkeypatch.setattr(constants, "ENDPOINT", "http://127.0.0.1:9")  # never reached
    assert "(not a local folder, nor a hub id)" in _fails_at_once(name)


def test_folders_and_files(tmp_path):
    model = tmp_path / "model"
    model.mkdir()
    (model / "config.json").write_text("{}")
    assert resolve_model_path(str(model)) == str(model)
    tokenizer = tmp_path / "tokenizer"  # mlx-server/ takes a tokenizer folder
    tokenizer.mkdir()
    (tokenizer / "tokenizer_config.json").write_text("{}")
    assert resolve_model_path(str(tokenizer), "-M tokenizer=") == str(tokenizer)
    empty = tmp_path / "empty"
    empty.mkdir()
    assert f"the folder {empty} has no config.json or tokenizer_config.json" in _fails_at_once(
        str(empty)
    )
    weights = model / "model.gguf"
    weights.write_text("")
    assert f"{weights} is a file, not a model folder" in _fails_at_once(str(weights), "mlx")


def _cache_entry(cache: Path, repo_id: str) -> None:
    """The layout huggingface_hub writes for a downloaded ``config.json`` of ``repo_id``."""
    repo = cache / f"models--{repo_id.replace('/', '--')}"
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text("0123abcd")
    snapshot = repo / "snapshots" / "0123abcd"
    snapshot.mkdir(parents=True)
    (snapshot / "config.json").write_text("{}")


def test_offline_only_the_hub_cache_counts(tmp_path, monkeypatch):
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path))
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(constants, "ENDPOINT", "http://127.0.0.1:9")  # never reached
    _cache_entry(tmp_path, "owner/cached")
    assert resolve_model_path("owner/cached") == "owner/cached"
    text = _fails_at_once("owner/missing")
    assert "nor in the local Hugging Face cache, and HF_HUB_OFFLINE is set" in text


def test_a_misspelt_alias_is_told_the_nearest(tmp_path, monkeypatch):
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path))
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    assert "). Did you mean hf-probe/default? Give" in _fails_at_once("defualt")
    assert "Did you mean mlx/tiny-think?" in _fails_at_once("tiny-thinks", "mlx")
    assert "Did you mean" not in _fails_at_once("owner/missing")


class _Hub(BaseHTTPRequestHandler):
    """``/api/models/<id>``: 200 for owner/known, 500 for owner/flaky, 401 for owner/private,
    else 404 with the hub's ``X-Error-Code: RepoNotFound``."""

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        repo = self.path.split("?")[0].removeprefix("/api/models/")
        status, body = {
            "owner/known": (200, {"id": "owner/known", "private": False}),
            "owner/flaky": (500, {"error": "internal"}),
            "owner/private": (401, {"error": "Invalid username or password."}),
        }.get(repo, (404, {"error": "Repository not found"}))
        data = json.dumps(body).encode()
        self.send_response(status)
        if status == 404:
            self.send_header("X-Error-Code", "RepoNotFound")
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def hub(tmp_path, monkeypatch):
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Hub)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    monkeypatch.setattr(constants, "ENDPOINT", f"http://127.0.0.1:{server.server_port}")
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "empty-cache"))
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    yield constants.ENDPOINT
    server.shutdown()
    server.server_close()


def test_online_the_hub_decides(hub):
    assert resolve_model_path("owner/known") == "owner/known"
    assert resolve_model_path("owner/flaky") == "owner/flaky"  # a server error: the loader's
    for name, status in (("does-not-exist", 404), ("owner/private", 401)):
        assert (
            f"(not a local folder, and the hub {hub} answers {status} for it: no such "
            "model, or a private one needing `hf auth login`)" in _fails_at_once(name)
        )


def test_an_unreachable_hub_fails_at_once(tmp_path, monkeypatch):
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path))
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(constants, "ENDPOINT", "http://127.0.0.1:9")  # nothing listens: refused
    text = _fails_at_once("owner/name")
    assert (
        "nor in the local Hugging Face cache, and the hub http://127.0.0.1:9 cannot be "
        "reached to look it up: ConnectError" in text
    )


@pytest.mark.parametrize("provider", ["hf-probe", "mlx", "mlx-server"])
def test_every_local_provider_checks_before_loading(provider):
    from inspect_ai.model import get_model

    with pytest.raises(ModelNameError, match=rf"^{provider}/a/b/c: no such model"):
        get_model(f"{provider}/a/b/c", memoize=False)


def test_inspect_eval_prints_the_one_line_without_a_traceback():
    """The command of the README with a model name that names nothing (offline, so the answer
    does not depend on the network)."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "COLUMNS": "300"}
    start = time.monotonic()
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "inspect_ai",
            "eval",
            "tasks/probe_examples.py@capitals",
            "--model",
            "hf-probe/defualt",
            "--limit",
            "1",
            "--log-dir",
            "/dev/null",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    elapsed = time.monotonic() - start
    out = run.stdout + run.stderr
    assert run.returncode == 1, out
    assert "Traceback" not in out and len(out.strip().splitlines()) < 12, out
    assert (
        "hf-probe/defualt: no such model (not a local folder, nor in the local "
        "Hugging Face cache, and HF_HUB_OFFLINE is set). Did you mean hf-probe/default? "
        "Give a model folder, a Hugging Face "
        f"hub id (owner/name) or an alias: {ALIAS_LIST}."
    ) in out
    assert elapsed < 60  # the process's own start-up; the check itself is the tests above
