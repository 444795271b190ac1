"""Cross-check report_ll's scorings against lm-eval's log-likelihood (an outside implementation).

    python -m venv /tmp/lmeval && /tmp/lmeval/bin/pip install torch==2.13.0 lm-eval==0.4.13 -e .
    /tmp/lmeval/bin/python scripts/crosscheck_loglikelihood.py [--units 6]

For the first ``--units`` fixture versions of the committed corpus, each of the four scorings
S(r, T) = log p(report r | transcript T) (nats) is computed twice on the embedded default model
(SmolLM2-135M-Instruct, float32, CPU):

- ours: ``HFEngine.loglikelihood_many`` (the chat context rendered by our engine, the report
  tokenised on its own and scored as the assistant's reply);
- lm-eval: ``HFLM(pretrained=<folder>).loglikelihood`` on (context string, report), the context
  string being the tokenizer's own chat template with the generation prompt
  (``apply_chat_template(..., tokenize=False, add_generation_prompt=True)``); lm-eval tokenises
  context + report jointly and scores the tokens after the context. lm-eval moves a context's
  trailing whitespace into the continuation, so it scores the assistant header's final newline
  too; that term, log p("\n" | context without it), is lm-eval's own score of the pair
  (context.rstrip(), "\n") and is subtracted (chain rule), leaving log p(report | context).

Prints, per scoring, both values, their token counts and the difference, then the largest
|difference| and the DiD of each unit both ways. Exit 0 when every scoring agrees within
``--tol`` nats per token and the token counts are equal, else 1.
"""

from __future__ import annotations

import argparse
import sys
from typing import Literal

TRANSCRIPTS: tuple[Literal["hack", "clean"], ...] = ("hack", "clean")
REPORTS: tuple[Literal["honest", "concealing"], ...] = ("honest", "concealing")


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--units", type=int, default=6)
    parser.add_argument("--tol", type=float, default=1e-4, help="nats per token")
    args = parser.parse_args()

    # lm-eval is this script's own install (not a project dependency), without type information
    from lm_eval.api.instance import Instance  # type: ignore[import-not-found]
    from lm_eval.models.huggingface import HFLM  # type: ignore[import-not-found]

    from cotaudit.engine.hf import HFEngine
    from cotaudit.models.default import default_model_path
    from cotaudit.studies.report_ll.fixtures import DEFAULT_CORPUS, expand, load_fixtures

    folder = str(default_model_path())
    ours = HFEngine.load(folder)
    lm = HFLM(pretrained=folder, device="cpu", dtype="float32", batch_size=1)
    versions = expand(load_fixtures(DEFAULT_CORPUS))[: args.units]

    worst, ok = 0.0, True
    print("| fixture | transcript | report | ours | lm-eval | tokens (ours/lm-eval) | diff |")
    print("|---|---|---|---:|---:|---|---:|")
    for v in versions:
        s: dict[tuple[str, str], tuple[float, float]] = {}
        for t in TRANSCRIPTS:
            context = v.context_messages(t)
            reports = [v.report(r) for r in REPORTS]
            mine = ours._locked(ours.loglikelihood_many_sync, context, reports)
            text = ours.tokenizer.apply_chat_template(
                context, tokenize=False, add_generation_prompt=True
            )
            trailing = text[len(text.rstrip()) :]
            pairs = [(text, rep) for rep in reports] + [(text.rstrip(), trailing)]
            requests = [
                Instance(request_type="loglikelihood", doc={}, arguments=pair, idx=i)
                for i, pair in enumerate(pairs)
            ]
            *theirs, (header, _) = lm.loglikelihood(requests, disable_tqdm=True)
            for r, rep, m, (with_header, _) in zip(REPORTS, reports, mine, theirs, strict=True):
                lp = with_header - header
                n_theirs = len(lm.tok_encode(text + rep)) - len(lm.tok_encode(text))
                diff = m.sum_logprob - lp
                worst = max(worst, abs(diff))
                ok &= abs(diff) <= args.tol * max(m.n_tokens, 1) and m.n_tokens == n_theirs
                s[(r, t)] = (m.sum_logprob, lp)
                print(
                    f"| {v.id} | {t} | {r} | {m.sum_logprob:.4f} | {lp:.4f} | "
                    f"{m.n_tokens}/{n_theirs} | {diff:+.2e} |"
                )
        did = [
            (s[("honest", "hack")][i] - s[("honest", "clean")][i])
            - (s[("concealing", "hack")][i] - s[("concealing", "clean")][i])
            for i in (0, 1)
        ]
        print(f"| {v.id} | DiD | | {did[0]:.4f} | {did[1]:.4f} | | {did[0] - did[1]:+.2e} |")
    print(
        f"largest |difference|: {worst:.2e} nats; agree within {args.tol} nats/token and "
        f"same token counts: {'yes' if ok else 'NO'}"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
