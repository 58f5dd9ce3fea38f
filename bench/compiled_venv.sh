#!/usr/bin/env bash
# The tracelake users install: a wheel (its scrubber compiled by mypyc, see setup.py) in its
# own venv, .venv-compiled. Then measure it with
#   .venv/bin/python bench/bench_end_to_end.py --cli .venv-compiled/bin/tracelake
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
dist="$(mktemp -d)"
trap 'rm -rf "$dist"' EXIT
rm -rf build
"$PYTHON" -m pip wheel --quiet --no-deps -w "$dist" .
rm -rf build "${VENV:-.venv-compiled}"
"$PYTHON" -m venv "${VENV:-.venv-compiled}"
"${VENV:-.venv-compiled}"/bin/pip install --quiet "$dist"/tracelake-*.whl
echo "installed: $("${VENV:-.venv-compiled}"/bin/tracelake --version) in ${VENV:-.venv-compiled}"
