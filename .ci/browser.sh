# Browser tests (tests/web/test_browser.py): Debian's Chromium, driven by the Python
# `playwright` package from the dev extra. Never `playwright install`: no browser downloads.
# Sourced by .ci/run, so the export below reaches the test run.
if [ ! -x /usr/bin/chromium ]; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
        chromium fonts-dejavu-core >/dev/null
fi
/usr/bin/chromium --version
export TRACELAKE_REQUIRE_BROWSER=1  # a missing browser fails the run instead of skipping
