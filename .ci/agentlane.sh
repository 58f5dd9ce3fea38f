#!/usr/bin/env bash
# CI: the tests that drive the real agentlane runtime. agentlane 0.22 needs Python 3.12 while
# the main run is 3.11, so this builds a 3.12 venv from the project's own files, installs
# tracelake + agentlane there, and runs the tests marked `agentlane` (they fail, not skip, here).
set -euo pipefail
cd "$(dirname "$0")/.."

is_312() { [ -n "$1" ] && [ -x "$1" ] && "$1" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 12))' 2>/dev/null; }

find_python312() {
    local candidates=("${TRACELAKE_PYTHON312:-}" "$HOME/.pyenv/versions/3.12.1/bin/python")
    local found
    for found in $(ls -d "$HOME"/.pyenv/versions/3.12*/bin/python 2>/dev/null | sort -rV); do
        candidates+=("$found")
    done
    candidates+=("$(command -v python3.12 || true)" "$(command -v python3 || true)")
    for found in "${candidates[@]}"; do
        if is_312 "$found"; then
            echo "$found"
            return 0
        fi
    done
    return 1
}

if ! PY=$(find_python312); then
    echo "ERROR .ci/agentlane.sh: no Python 3.12 interpreter found (tried \$TRACELAKE_PYTHON312," \
        "~/.pyenv/versions/3.12*/bin/python, python3.12 and python3 on PATH)." \
        "Install one (pyenv install 3.12.1) or point TRACELAKE_PYTHON312 at it." >&2
    exit 1
fi
VENV="${TRACELAKE_AGENTLANE_VENV:-.venv-agentlane}"
echo "agentlane tests: $("$PY" --version) from $PY, venv $VENV"
"$PY" -m venv "$VENV"
"$VENV/bin/python" -m pip install -q -e '.[dev]' 'agentlane==0.22.*'
TRACELAKE_REQUIRE_AGENTLANE=1 "$VENV/bin/python" -m pytest -q -m agentlane tests/sink
