#!/usr/bin/env bash
# `bazel run //tools/lower -- PROGRAM.pt2 OUT.pt2 [--partitioner MODULE:FUNCTION]`: runs
# lower.py with the venv's python3 (torch) and the brisk binding from the runfiles.
#
# The one launcher of the repository's Python tools: //tools/bench:compare and
# :pt2_vs_torchscript are built from this file too (their sh_binary's srcs). A target named
# NAME runs tools/<its package>/NAME.py from its runfiles, with the binding and that
# script's runfiles directory (tools/bench: _sr_shim.so) on PYTHONPATH. A shell wrapper
# rather than py_binary: Bazel 4.2's Python stub starts with `#!/usr/bin/env python`, and
# a fresh Debian 12 has no `python` command.
set -eu
NAME="$(basename "$0")"
NAME="${NAME%.sh}"
if [[ -n "${RUNFILES_DIR:-}" && -d "$RUNFILES_DIR/brisk" ]]; then
  R="$RUNFILES_DIR"
elif [[ -d "$0.runfiles/brisk" ]]; then
  R="$0.runfiles"
else
  R="${TEST_SRCDIR:?cannot find the runfiles of //tools/...:$NAME}"
fi
SCRIPTS=("$R"/brisk/tools/*/"$NAME".py)
if [[ ${#SCRIPTS[@]} -ne 1 || ! -f "${SCRIPTS[0]}" ]]; then
  echo "$NAME: expected one tools/*/$NAME.py in the runfiles ($R), found: ${SCRIPTS[*]}" >&2
  exit 2
fi
SCRIPT="${SCRIPTS[0]}"
export PYTHONPATH="$R/brisk/python/site:$(dirname "$SCRIPT")${PYTHONPATH:+:$PYTHONPATH}"
exec /opt/brisk/venv/bin/python3 "$SCRIPT" "$@"
