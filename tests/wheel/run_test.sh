#!/usr/bin/env bash
# Runs wheel_install_test.py from runfiles with set-up's Python (which only drives the
# test: the wheel is installed into, and every check runs in, a fresh virtual environment
# the script makes). Arguments: the wheel and the model, runfiles-relative (BUILD.bazel).
set -eu
R="${TEST_SRCDIR:?}/brisk"
exec /opt/brisk/venv/bin/python3 "$R/tests/wheel/wheel_install_test.py" "$@"
