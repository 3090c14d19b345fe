#!/usr/bin/env bash
# Installs what brisk needs on a fresh Debian 12 x86-64 machine (as root, or with sudo):
#   - Debian's packages: Bazel 4.2.3, g++, abseil, glog, TBB, gtest, nlohmann-json, Python headers;
#   - one Python virtual environment at /opt/brisk/venv with the pinned packages of
#     tools/requirements.txt (torch 2.14.1 and torchvision 0.29.1 from PyPI, ...);
#   - /opt/brisk/libtorch, the fixed path of Bazel's @torch repository: links to the
#     wheel's include/ and lib/, plus the wheel's C++ ABI flag (checked against ours);
#   - /opt/brisk/onednn, the fixed path of @onednn: oneDNN 3.2 (TBB runtime) for the
#     onednn delegate, its headers, and the two Intel runtime libraries it needs.
# Idempotent, and quiet when nothing is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

BRISK_ROOT=/opt/brisk
VENV=$BRISK_ROOT/venv
LIBTORCH=$BRISK_ROOT/libtorch
REQUIREMENTS=tools/requirements.txt
# ray[serve] for brisk.serve, examples/ray and tests/ray (the wheel's `serve` extra).
REQUIREMENTS_SERVE=tools/requirements-serve.txt

PACKAGES=(
  bazel-bootstrap        # Bazel 4.2.3 (WORKSPACE mode)
  g++
  libabsl-dev
  libgoogle-glog-dev
  libtbb-dev
  libgtest-dev
  nlohmann-json3-dev     # JSON reader for the PT2 frontend (header-only)
  patchelf               # lets oneDNN find its runtime libraries beside it (below)
  python3-dev            # Python.h for the Python binding (python/)
  python3-venv           # the virtual environment below
  zlib1g-dev             # zlib for the fuzz driver's zip reader (tests/fuzz)
)

SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "brisk setup: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# The virtual environment: made from Debian's Python (whose headers python3-dev
# installs), filled from the pinned list. A stamp holding the list's checksum makes a
# second run a no-op, and a changed list reinstalls.
want=$(cat "$REQUIREMENTS" "$REQUIREMENTS_SERVE" | sha256sum | cut -d' ' -f1)
stamp=$VENV/.brisk-requirements.sha256
if [ ! -x "$VENV/bin/python3" ] || [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  echo "brisk setup: installing Python packages into $VENV (torch from PyPI, several GB)" >&2
  $SUDO mkdir -p "$BRISK_ROOT"
  [ -x "$VENV/bin/python3" ] || $SUDO /usr/bin/python3 -m venv "$VENV"
  # --no-cache-dir: the wheels are large, and a second copy in pip's cache helps nobody.
  $SUDO "$VENV/bin/python3" -m pip install -q --no-cache-dir --disable-pip-version-check \
    -r "$REQUIREMENTS" -r "$REQUIREMENTS_SERVE"
  echo "$want" | $SUDO tee "$stamp" >/dev/null
fi

# @torch (see WORKSPACE): the wheel's headers and libraries at a fixed path.
torch_dir=$("$VENV/bin/python3" -c 'import os, torch; print(os.path.dirname(torch.__file__))' 2>/dev/null) || {
  echo "brisk setup: error: 'import torch' fails in $VENV; remove $VENV and run again" >&2
  exit 1
}
wheel_abi=$("$VENV/bin/python3" -c 'import torch; print(int(torch._C._GLIBCXX_USE_CXX11_ABI))')
# Our compiler's default, which brisk builds with (.bazelrc does not change it).
our_abi=$(printf '#include <string>\n_GLIBCXX_USE_CXX11_ABI\n' | g++ -x c++ -E -P - | tail -n1 | tr -d ' ')
if [ "$wheel_abi" != "$our_abi" ]; then
  echo "brisk setup: error: the torch wheel in $VENV was built with _GLIBCXX_USE_CXX11_ABI=$wheel_abi," \
    "but g++ here builds with $our_abi; brisk cannot link against it (install a wheel built with the" \
    "same C++ ABI)" >&2
  exit 1
fi
if [ "$(readlink "$LIBTORCH/include" 2>/dev/null)" != "$torch_dir/include" ] ||
   [ "$(readlink "$LIBTORCH/lib" 2>/dev/null)" != "$torch_dir/lib" ] ||
   [ "$(cat "$LIBTORCH/abi/brisk_torch_abi.h" 2>/dev/null | grep -c "BRISK_TORCH_CXX11_ABI $wheel_abi")" != 1 ]; then
  $SUDO mkdir -p "$LIBTORCH/abi"
  $SUDO ln -sfn "$torch_dir/include" "$LIBTORCH/include"
  $SUDO ln -sfn "$torch_dir/lib" "$LIBTORCH/lib"
  printf '%s\n' \
    "// Written by brisk's tools/setup.sh: the C++ ABI the torch wheel was built with." \
    "#define BRISK_TORCH_CXX11_ABI $wheel_abi" | $SUDO tee "$LIBTORCH/abi/brisk_torch_abi.h" >/dev/null
fi

tools/setup_onednn.sh "$BRISK_ROOT/onednn" "$VENV/bin/python3"

# Bazel's disk cache lives at a fixed path (see .bazelrc) so fresh clones build warm.
cache=/var/cache/brisk-bazel-disk
if [ ! -w "$cache" ] 2>/dev/null; then
  $SUDO mkdir -p "$cache" && $SUDO chmod 1777 "$cache"
fi
