#!/usr/bin/env bash
# The README's test command: installs what is missing, builds, runs every test and
# prints a closing "N passed, N failed" line (gtest cases, plus one per test target
# that did not build or produced no result).
set -uo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh || { echo "0 passed, 1 failed"; exit 1; }

log=$(mktemp)
# Tests always run (a green result from the disk cache proves nothing about this machine).
bazel test //... --keep_going --cache_test_results=no "$@" 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
/opt/brisk/venv/bin/python3 tools/count_tests.py "$log" "$(bazel info bazel-testlogs 2>/dev/null)"
count_rc=$?
rm -f "$log"
[ "$rc" -eq 0 ] && [ "$count_rc" -eq 0 ]
