#!/usr/bin/env bash
# Builds brisk's wheel and copies it to OUT_DIR (default: dist/ at the repository root):
#   tools/wheel/build.sh            -> dist/brisk-<version>-cp311-cp311-linux_x86_64.whl
#   pip install dist/brisk-*.whl    (needs torch==<the torch brisk was built against>)
# Installs what is missing first (tools/setup.sh, idempotent), then builds
# //tools/wheel:wheel (tools/wheel/BUILD.bazel, build_wheel.py) and prints the wheel's path.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
out_dir=${1:-dist}
case "$out_dir" in /*) ;; *) out_dir="$root/$out_dir" ;; esac

tools/setup.sh
bazel build //tools/wheel:wheel
# The genrule's one output, by name (tools/wheel/version.bzl decides it): no stale wheel
# of another version that may sit in bazel-bin is picked up.
label=$(bazel query --output=label 'labels(outs, //tools/wheel:wheel)' 2>/dev/null)
name=${label##*:}
wheel="$(bazel info bazel-bin 2>/dev/null)/tools/wheel/$name"
[ -f "$wheel" ] || { echo "tools/wheel/build.sh: error: $wheel was not built" >&2; exit 1; }
mkdir -p "$out_dir"
rm -f "$out_dir/$name"
cp "$wheel" "$out_dir/$name"
chmod u+w "$out_dir/$name"
echo "$out_dir/$name"
