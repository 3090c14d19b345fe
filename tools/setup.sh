#!/usr/bin/env bash
# Installs what brisk needs on a fresh Debian 12 machine (as root, or with sudo).
# Idempotent and quiet when nothing is missing.
set -euo pipefail

PACKAGES=(
  bazel-bootstrap        # Bazel 4.2.3 (WORKSPACE mode, offline)
  g++
  libtorch-dev           # libtorch 1.13.1: TorchScript, oneDNN, XNNPACK
  python3-torch          # model zoo export and the comparison benchmark
  python3-torchvision
  libabsl-dev
  libgoogle-glog-dev
  libtbb-dev
  libgtest-dev
  libopenblas0
  pybind11-dev           # the Python binding (python/)
  python3-pybind11
  python3-matplotlib     # charts of the comparison benchmark (tools/bench)
  python3-dev            # Python.h for the Python binding (python/)
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -gt 0 ]; then
  echo "brisk setup: installing ${missing[*]}" >&2
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# Bazel's disk cache lives at a fixed path (see .bazelrc) so fresh clones build warm.
cache=/var/cache/brisk-bazel-disk
if [ ! -w "$cache" ] 2>/dev/null; then
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO mkdir -p "$cache" && $SUDO chmod 1777 "$cache"
fi
