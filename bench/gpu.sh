#!/usr/bin/env bash
# The vLLM work counts and times on a CUDA machine, beside the in-process engine on CUDA.
#
# NOT RUN HERE: this project's machine has no GPU. It is written for a machine with CUDA, the
# project venv (.venv, `pip install -e ".[test]"`) and vLLM's CUDA build in its own venv
# (VLLM_GPU_VENV, default .venv-vllm-gpu: `python3 -m venv .venv-vllm-gpu &&
# .venv-vllm-gpu/bin/pip install vllm`). It
#   1. starts `vllm serve` on the GPU with the probes' flags (prefix caching, every
#      log-probability, processed log-probabilities, per-request cached-token counts, the
#      /inference/v1/generate endpoint that report scoring reads through the prefix cache),
#   2. runs bench/vllm_work.py against it (the same probes, counts and table as on CPU),
#   3. runs bench/exact_vs_sampled.py on the in-process engine on CUDA (hf-probe/, same model),
#   4. prints both tables, then stops the server by its PID.
#
#   bash bench/gpu.sh                      # the embedded default model (SmolLM2-135M)
#   MODEL=Qwen/Qwen2.5-7B-Instruct bash bench/gpu.sh
set -euo pipefail
cd "$(dirname "$0")/.."
VENV="${VLLM_GPU_VENV:-.venv-vllm-gpu}"
PORT="${PORT:-8765}"
MODEL="${MODEL:-$(.venv/bin/python -c 'from cotaudit.models.default import default_model_path; print(default_model_path())')}"
command -v nvidia-smi > /dev/null || { echo "bench/gpu.sh: no nvidia-smi: this needs a CUDA machine" >&2; exit 1; }
[ -x "$VENV/bin/vllm" ] || { echo "bench/gpu.sh: no vLLM in $VENV (pip install vllm there)" >&2; exit 1; }

LOG="$(mktemp -t vllm-gpu-XXXX.log)"
"$VENV/bin/vllm" serve "$MODEL" --host 127.0.0.1 --port "$PORT" --enable-prefix-caching \
    --max-logprobs -1 --logprobs-mode processed_logprobs --enable-prompt-tokens-details \
    --enable-scale-out \
    > "$LOG" 2>&1 &
SERVER=$!
trap 'kill "$SERVER" 2>/dev/null || true' EXIT
for _ in $(seq 600); do
    curl -sf "http://127.0.0.1:$PORT/health" > /dev/null && break
    kill -0 "$SERVER" 2>/dev/null || { tail -40 "$LOG" >&2; exit 1; }
    sleep 1
done
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
echo "## vLLM on CUDA ($MODEL)"
.venv/bin/python bench/vllm_work.py --url "http://127.0.0.1:$PORT/v1" --model "$MODEL" "$@"
kill "$SERVER"; wait "$SERVER" 2>/dev/null || true
echo "## in-process engine on CUDA (hf-probe/, same model)"
.venv/bin/python bench/exact_vs_sampled.py --model "$MODEL" --device cuda --repeats 1
