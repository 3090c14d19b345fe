#!/usr/bin/env bash
# `bazel run //tools/bench:compare -- [--models ...] [--rounds N] [--quick]` (and
# :pt2_vs_torchscript): runs the Python script named like the target (compare.py) with
# the venv's /opt/brisk/venv/bin/python3 (which has torch), the brisk binding from the
# runfiles, and --zoo pointing at the zoo's files. A shell wrapper rather than py_binary:
# Bazel 4.2's Python stub starts with `#!/usr/bin/env python`, and a fresh Debian 12 has
# no `python` command.
set -eu
if [[ -n "${RUNFILES_DIR:-}" && -d "$RUNFILES_DIR/brisk" ]]; then
  R="$RUNFILES_DIR"
elif [[ -d "$0.runfiles/brisk" ]]; then
  R="$0.runfiles"
else
  R="${TEST_SRCDIR:?cannot find the runfiles of the //tools/bench target}"
fi
SCRIPT="$(basename "$0").py"  # the target's name: compare -> compare.py
export PYTHONPATH="$R/brisk/python/site:$R/brisk/tools/bench${PYTHONPATH:+:$PYTHONPATH}"
exec /opt/brisk/venv/bin/python3 "$R/brisk/tools/bench/$SCRIPT" --zoo "$R/brisk/tools/zoo" "$@"
