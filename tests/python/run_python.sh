#!/usr/bin/env bash
# Runs a Python test file from runfiles with the venv's /opt/brisk/venv/bin/python3 (which
# has torch) and the brisk package (//python:brisk) on PYTHONPATH. A shell wrapper rather than
# py_test: Bazel 4.2's Python stub starts with `#!/usr/bin/env python`, and a fresh
# Debian 12 has no `python` command.
set -eu
R="${TEST_SRCDIR:?}/brisk"
export PYTHONPATH="$R/python/site:$R/tests/python:$R/tools/bench${PYTHONPATH:+:$PYTHONPATH}"
if [ -n "${BRISK_ASAN_PRELOAD:-}" ]; then
  # --config=asan: the binding .so is instrumented but python3 is not, and ASan's runtime
  # must be loaded before anything else. Leak checking stays off for this process only:
  # CPython does not free its interned objects at exit, so every run would "leak".
  export LD_PRELOAD="$BRISK_ASAN_PRELOAD${LD_PRELOAD:+:$LD_PRELOAD}"
  export ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0"
fi
exec /opt/brisk/venv/bin/python3 "$R/$1" "${@:2}"
