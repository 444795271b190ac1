"""Reproduce the vLLM CPU crash that ``--no-enable-chunked-prefill`` prevents (docs/vllm.md).

    .venv/bin/python scripts/vllm_chunked_prefill_crash.py      # starts its own server (minutes)

Starts a second server with chunked prefill on and a 256-token step budget
(``vllm_cpu_server.launch(unsafe_defaults=True)``) and sends seeded, sampled prefix requests of
~400 tokens, which the scheduler splits across steps: the engine dies ("CPU Generator does not
use offset" in its log) and the request fails at once with ``DeadServerError`` (or the
endpoint is already gone). Prints what happened and exits 0 when the crash reproduced, 1 when
it did not (e.g. a vLLM release that fixed it).
"""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SIGNATURE = "CPU Generator does not use offset"


def main() -> int:
    from inspect_ai.model import get_model
    from openai import APIConnectionError
    from transformers import AutoTokenizer

    from cotaudit.engine.base import PrefixRequest
    from cotaudit.engine.inspect_prefill import DeadServerError, InspectPrefillEngine
    from cotaudit.studies.report_ll.fixtures import DEFAULT_CORPUS, expand, load_fixtures

    sys.path.insert(0, str(ROOT / "scripts"))
    import vllm_cpu_server

    server = vllm_cpu_server.launch(unsafe_defaults=True).wait()
    try:
        tokenizer = AutoTokenizer.from_pretrained(server.model)
        model = get_model(
            f"vllm/{server.model}", base_url=server.url, api_key="crash", memoize=False
        )
        engine = InspectPrefillEngine.for_model(model)
        context = expand(load_fixtures(DEFAULT_CORPUS))[0].context_messages("hack")
        cot = tokenizer.encode(
            " Let me think step by step about what the test checks." * 8, add_special_tokens=False
        )
        request = PrefixRequest(
            context,
            cot,
            list(range(0, len(cot) + 1, 4)),
            " So the answer is",
            k=3,
            max_tokens=6,
            temperature=1.0,
            seed=11,
        )
        start = time.monotonic()
        try:
            asyncio.run(engine.continue_prefixes(request))
        except (DeadServerError, APIConnectionError) as e:
            assert server.log is not None  # launched here, so it writes a log
            logged = SIGNATURE in server.log.read_text(errors="replace")
            print(
                f"crashed after {time.monotonic() - start:.1f} s: {type(e).__name__}; "
                f"server log names the cause ({SIGNATURE!r}): {'yes' if logged else 'no'}"
            )
            return 0 if logged else 1
        print("no crash: the seeded burst was served with chunked prefill on")
        return 1
    finally:
        server.stop()


if __name__ == "__main__":
    sys.exit(main())
