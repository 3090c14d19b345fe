#!/usr/bin/env bash
# `bazel run //tests/fuzz:seed_corpus -- DIR model|inputs`: copies the seed files of one
# libFuzzer target (model_fuzzer: model archives, TorchScript and PT2; inputs_fuzzer:
# inputs files) into DIR, to start a corpus from. BUILD.bazel passes the file lists first:
#   model FILE... inputs FILE... -- DIR KIND
set -eu
declare -a models=() inputs=()
list=""
while [[ $# -gt 0 && $1 != "--" ]]; do
  case "$1" in
    model | inputs) list="$1" ;;
    *) if [[ $list == model ]]; then models+=("$1"); else inputs+=("$1"); fi ;;
  esac
  shift
done
[[ $# -gt 0 ]] && shift  # --
if [[ $# -ne 2 || ($2 != model && $2 != inputs) ]]; then
  echo "usage: bazel run //tests/fuzz:seed_corpus -- DIR model|inputs" >&2
  exit 2
fi
dir="$1"
# A relative DIR is the user's, not the runfiles tree bazel run starts in.
[[ $dir == /* ]] || dir="${BUILD_WORKING_DIRECTORY:-$PWD}/$dir"
mkdir -p "$dir"
if [[ $2 == model ]]; then files=("${models[@]}"); else files=("${inputs[@]}"); fi
# install, not cp: the files are read-only build outputs, and a second run overwrites them.
install -m 0644 "${files[@]}" "$dir/"
echo "seed_corpus: ${#files[@]} $2 seeds in $dir: $(cd "$dir" && ls "${files[@]##*/}" | tr '\n' ' ')"
