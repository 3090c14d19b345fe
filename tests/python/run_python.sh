#!/usr/bin/env bash
# Runs a Python test file from runfiles with the venv's /opt/brisk/venv/bin/python3 (which
# has torch) and the brisk package (//python:brisk) on PYTHONPATH. A shell wrapper rather than
# py_test: Bazel 4.2's Python stub starts with `#!/usr/bin/env python`, and a fresh
# Debian 12 has no `python` command.
set -eu
R="${TEST_SRCDIR:?}/brisk"
export PYTHONPATH="$R/python/site:$R/tests/python:$R/tools/bench${PYTHONPATH:+:$PYTHONPATH}"
exec /opt/brisk/venv/bin/python3 "$R/$1" "${@:2}"
