#!/usr/bin/env bash
# CI: build the wheel, install it alone in a fresh venv, and run the CLI smoke suite against
# the installed `tracelake` (nothing from the checkout on the path: migrations, SQL and the
# pipelines must come from the wheel).
set -euo pipefail
cd "$(dirname "$0")/.."
repo="$(pwd)"
PYTHON="${PYTHON:-python3}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

"$PYTHON" -m venv "$work/build"
"$work/build/bin/pip" install --quiet --upgrade pip build
rm -rf build  # setuptools' and mypyc's build tree: a stale one leaks old modules into the wheel
"$work/build/bin/python" -m build --wheel --outdir "$work/dist" . >/dev/null
rm -rf build
wheel="$(ls "$work"/dist/tracelake-*.whl)"

# What must (and must not) be inside.
"$work/build/bin/python" - "$wheel" <<'PY'
import sys, zipfile
names = set(zipfile.ZipFile(sys.argv[1]).namelist())
need = ["tracelake/migrations/env.py", "tracelake/migrations/script.py.mako",
        "tracelake/migrations/versions/0001_events_and_quarantine.py",
        "tracelake/sql/views_0002.sql", "tracelake/pipelines/lake.py", "tracelake/py.typed"]
# the scrubber compiled by mypyc (setup.py): this machine has a C compiler, so it must be
need += ["tracelake/scrub/walk" + __import__("sysconfig").get_config_var("EXT_SUFFIX"),
         "tracelake/compiled__mypyc" + __import__("sysconfig").get_config_var("EXT_SUFFIX")]
missing = [n for n in need if n not in names]
generic = sorted({n.split("/")[0] for n in names} - {"tracelake"} - {n.split("/")[0] for n in names if n.split("/")[0].endswith(".dist-info")})
if missing or generic:
    sys.exit(f"wheel is wrong: missing {missing}, unexpected top-level {generic}")
print(f"wheel ok: {len(names)} files")
PY

"$PYTHON" -m venv "$work/venv"
"$work/venv/bin/pip" install --quiet "$wheel" pytest
cp tests/cli/test_smoke.py "$work/"
cd "$work"  # away from the checkout: `import tracelake` must find the installed wheel
env -u PYTHONPATH TRACELAKE_CLI="$work/venv/bin/tracelake" \
    "$work/venv/bin/python" -m pytest -q -p no:cacheprovider test_smoke.py
"$work/venv/bin/python" -c "import importlib.util as u, sys; sys.exit(u.find_spec('pipelines') is not None)"
echo "installed wheel passed the CLI smoke suite"

# The scrubber's, ingest's and codec's tests against the wheel's compiled modules (a copy of
# tests/, run away from the checkout so that `import tracelake` is the installed one).
"$work/venv/bin/pip" install --quiet "$wheel[dev]"
cp -r "$repo/tests" "$repo/pyproject.toml" "$work/"
export TRACELAKE_SHARED_DIR="${TRACELAKE_SHARED_DIR:-$repo/../shared}"  # the agentlane samples
env -u PYTHONPATH "$work/venv/bin/python" - <<'PY'
import sys, tracelake.scrub.walk as walk
sys.exit(0 if walk.__file__.endswith(".so") else f"not compiled: {walk.__file__}")
PY
env -u PYTHONPATH "$work/venv/bin/python" -m pytest -q -p no:cacheprovider -o addopts="" tests/scrub tests/ingest tests/codec tests/store
echo "the compiled modules passed tests/scrub, tests/ingest, tests/codec and tests/store"
