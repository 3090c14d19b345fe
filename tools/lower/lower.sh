#!/usr/bin/env bash
# `bazel run //tools/lower -- PROGRAM.pt2 OUT.pt2 [--partitioner MODULE:FUNCTION]`: runs
# lower.py with the venv's python3 (torch) and the brisk binding from the runfiles (a
# shell wrapper, as tools/bench's: Bazel 4.2's Python stub needs a `python` command).
set -eu
if [[ -n "${RUNFILES_DIR:-}" && -d "$RUNFILES_DIR/brisk" ]]; then
  R="$RUNFILES_DIR"
elif [[ -d "$0.runfiles/brisk" ]]; then
  R="$0.runfiles"
else
  R="${TEST_SRCDIR:?cannot find the runfiles of //tools/lower}"
fi
export PYTHONPATH="$R/brisk/python/site${PYTHONPATH:+:$PYTHONPATH}"
exec /opt/brisk/venv/bin/python3 "$R/brisk/tools/lower/lower.py" "$@"
