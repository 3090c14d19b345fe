#!/usr/bin/env bash
# Installs oneDNN for the onednn delegate (delegates/onednn) at $1 (the fixed path of
# Bazel's @onednn repository, third_party/onednn.BUILD): lib/libdnnl.so.3, include/,
# and libimf.so / libintlc.so.5, the Intel runtime libraries libdnnl needs.
#
# Why this build (docs/stack.md): torch's own oneDNN is linked into libtorch_cpu with
# its symbols hidden; PyPI's current `onednn` wheel is a SYCL build that cannot create
# a CPU engine without Intel's OpenCL runtime (and weighs about 1 GB installed); Debian's
# libdnnl is 2.6. `onednn-cpu-tbb` 2023.2.0 is oneDNN 3.2 for CPUs on the TBB runtime,
# the same TBB (libtbb.so.12) brisk already uses. Its wheel holds three copies of the
# 65 MB library and pip would pull PyPI's own TBB beside Debian's, so the pinned wheels
# are downloaded, checked against their hashes, and only the needed files are kept
# (about 72 MB). Called by tools/setup.sh as root; a second run is a no-op.
set -euo pipefail
DEST=$1
PYTHON=$2
STAMP="$DEST/.brisk-onednn"
WHEELS=(
  "onednn-cpu-tbb==2023.2.0 3265b317e9d74ee42f3b7fe4ba0e6d8347a400f0e9c1531fa80b0bfa18d76b13"
  "onednn-devel-cpu-tbb==2023.2.0 d76b9ddf0ac717b5c5caa89e9922ec752d175e6f0492503f3baa8499607bec82"
  "intel-cmplr-lib-rt==2026.2.0 9f713083073a820d2496a6da8e8d4f3482aba6640f74521d25ea48dcebe72748"
)
want=$(printf '%s\n' "${WHEELS[@]}" | sha256sum | cut -d' ' -f1)
[ "$(cat "$STAMP" 2>/dev/null)" = "$want" ] && [ -f "$DEST/lib/libdnnl.so.3" ] && exit 0

echo "brisk setup: installing oneDNN 3.2 into $DEST" >&2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for w in "${WHEELS[@]}"; do
  read -r spec hash <<<"$w"
  "$PYTHON" -m pip download -q --no-deps --no-cache-dir --disable-pip-version-check \
    --only-binary=:all: -d "$tmp/wheels" "$spec"
  file=$(ls "$tmp/wheels"/"$(echo "${spec%%==*}" | tr - _)"-*.whl)
  got=$(sha256sum "$file" | cut -d' ' -f1)
  if [ "$got" != "$hash" ]; then
    echo "brisk setup: error: $file has sha256 $got, expected $hash" >&2
    exit 1
  fi
  "$PYTHON" -m zipfile -e "$file" "$tmp/x"
done
new="$DEST.new"
rm -rf "$new"
mkdir -p "$new/lib"
cp -r "$tmp/x"/onednn_devel_cpu_tbb-*.data/data/include "$new/include"
cp "$tmp/x"/onednn_cpu_tbb-*.data/data/lib/libdnnl.so.3 "$new/lib/"
cp "$tmp/x"/intel_cmplr_lib_rt-*.data/data/lib/{libimf.so,libintlc.so.5} "$new/lib/"
cp "$tmp/x"/onednn_cpu_tbb-*.dist-info/LICENSE.txt "$new/LICENSE.txt"
ln -s libdnnl.so.3 "$new/lib/libdnnl.so"
# libdnnl.so.3 and libimf.so carry no search path: $ORIGIN makes each find its
# neighbours here without LD_LIBRARY_PATH (libtbb.so.12 still comes from Debian).
patchelf --set-rpath '$ORIGIN' "$new/lib/libdnnl.so.3" "$new/lib/libimf.so"
chmod -R a+rX "$new"
rm -rf "$DEST"
mv "$new" "$DEST"
echo "$want" >"$STAMP"
