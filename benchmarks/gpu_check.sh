#!/usr/bin/env bash
# The GPU check (benchmarks/gpu_check.py; benchmarks/README.md "gpu_check"): install the gpu extra, the
# gpu-marked tests, the Qwen3-Embedding benchmark, a vLLM app of a tiny Qwen3 and `sws eval` episodes
# against it, under 10 minutes, every figure in one JSON file ($OUT/gpu_check.json if OUT is set).
#
#   bash benchmarks/gpu_check.sh --wheelhouse /path/to/wheels     # no internet: wheels made beforehand
#   bash benchmarks/gpu_check.sh --no-install                      # the gpu extra is there already
#   bash benchmarks/gpu_check.sh --dry-run                         # list the steps, write the JSON, run nothing
#
# The orchestration needs only the standard library of any Python 3.11+ (GPU_CHECK_PYTHON, default python3);
# the steps run under --python (default: $SWS_PYTHON, else .venv/bin/python, else that same interpreter).
set -euo pipefail
cd "$(dirname "$0")/.."
exec "${GPU_CHECK_PYTHON:-python3}" benchmarks/gpu_check.py "$@"
