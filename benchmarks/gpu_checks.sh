#!/usr/bin/env bash
# The prepared GPU checks of one lease (docs/benchmarks.md, "On a GPU"), in one call, each step under its own
# time limit so that a slow step leaves the others their share; everything is written under $OUT as it runs.
#
# On the device machine (its own torch and transformers; no registry): the wheels it lacks travel in .whl
# (textual, plotext, optimum-quanto, gguf …) and .whl24 (transformers 5.24, whose MtpModel runs one head layer
# alone, for --draft mtp), downloaded here with the device README's `pip download … --python-version 3.12`.
#
#     bash benchmarks/gpu_checks.sh            # carry: .whl, .whl24
set -u
export PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false
OUT=${OUT:-/tmp/gpu-checks}
mkdir -p "$OUT"
pip() { python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target "$1" "${@:2}"; }
pip /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=$PWD:/tmp/site
step() {   # step LIMIT NAME COMMAND…: run under LIMIT seconds, its output into $OUT/NAME.txt
    local lim=$1 name=$2
    shift 2
    echo "== $name: $* (limit ${lim} s, $(date +%T))"
    timeout -k 5 "$lim" "$@" > "$OUT/$name.txt" 2>&1
    echo "== $name: exit $? ($(date +%T))"
    tail -n "${TAILS:-40}" "$OUT/$name.txt"
}
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm,clocks.max.sm --format=csv | tee "$OUT/smi.txt"
python3 -c "import torch, transformers; print('torch', torch.__version__, 'transformers', transformers.__version__)"

TAILS=8 step "${T_TESTS:-130}" cuda_tests python3 -m pytest -q -p no:cacheprovider --durations=5 tests/engine/test_cuda_runners.py
# uncompiled first: every section in a minute or two (the first lease's compiled 8B step had not finished
# compiling after about three minutes, docs/benchmarks-gpu.md); the compiled rows after, with what time is left
TAILS=45 GAMMATUNE_COMPILE=0 step "${T_ENGINE:-150}" gpu_engine python3 benchmarks/gpu_engine.py --no-compile \
    --json "$OUT/gpu_engine.json" --capacities 1024,4096 --windows 1,5 --prompts 2 --tokens 96

pip /tmp/site24 .whl24/*.whl || exit 1
export PYTHONPATH=$PWD:/tmp/site24:/tmp/site
TAILS=16 step "${T_MTP:-80}" mtp_step python3 benchmarks/mtp_step.py --device cuda --dtype bfloat16 \
    --json "$OUT/mtp_step.json"
TAILS=6 step "${T_EAGLE:-55}" eagle3_step python3 benchmarks/eagle3_step.py --device cuda --dtype bfloat16
TAILS=30 step "${T_COMPILED:-150}" gpu_engine_compiled python3 benchmarks/gpu_engine.py \
    --json "$OUT/gpu_engine_compiled.json" --capacities 1024 --windows 1 --prompts 1 --tokens 64
