#!/usr/bin/env bash
# Every benchmark, one JSON file of the figures (benchmarks/run_all.py): benchmarks/run_all.sh --quick
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
python="${PYTHON:-$here/../.venv/bin/python}"
[ -x "$python" ] || python=python3
export RAY_AUTH_MODE="${RAY_AUTH_MODE:-disabled}"
exec "$python" "$here/run_all.py" "$@"
