#!/usr/bin/env bash
# Runs layering_test.py (only the standard library) with the venv's python3 (set-up installs it).
set -eu
exec /opt/brisk/venv/bin/python3 "${TEST_SRCDIR:?}/brisk/tests/core/layering_test.py"
