#!/usr/bin/env bash
# End-to-end checks of `brisk run|bench|inspect|help`: exit codes, the lines users and
# scripts rely on, and that every bad input gives exactly one `brisk: error:` line on
# stderr and exit code 2 (never a crash).
set -u

RUNFILES="${TEST_SRCDIR:?}/brisk"
BRISK="$RUNFILES/tools/brisk"
ZOO="$RUNFILES/tools/zoo"
TMP="${TEST_TMPDIR:-$(mktemp -d)}"
OUT="$TMP/stdout"
ERR="$TMP/stderr"
failures=0

fail() {
  echo "FAIL: $*"
  echo "--- stdout:"; head -c 4000 "$OUT"
  echo "--- stderr:"; head -c 4000 "$ERR"
  failures=$((failures + 1))
}

# brisk ARGS... with stdout/stderr captured; sets $rc. $PREFIX (e.g. "timeout 60") runs
# in front of it when set.
run_brisk() {
  ${PREFIX:-} "$BRISK" "$@" >"$OUT" 2>"$ERR"
  rc=$?
}

# expect_ok "ARGS" PATTERN... : exit 0 and every PATTERN (grep -E) found in stdout.
expect_ok() {
  local args="$1"; shift
  # shellcheck disable=SC2086
  run_brisk $args
  if [[ $rc -ne 0 ]]; then fail "brisk $args: exit $rc, expected 0"; return; fi
  local p
  for p in "$@"; do
    grep -qE -- "$p" "$OUT" || fail "brisk $args: stdout lacks /$p/"
  done
}

# expect_error CODE "ARGS" [PATTERN]: exit CODE, exactly one stderr line, starting
# with "brisk: error:" (and matching PATTERN when given).
expect_error() {
  local code="$1" args="$2" pattern="${3:-}"
  # shellcheck disable=SC2086
  run_brisk $args
  if [[ $rc -ne $code ]]; then fail "brisk $args: exit $rc, expected $code"; return; fi
  local lines
  lines=$(wc -l <"$ERR")
  [[ $lines -eq 1 ]] || fail "brisk $args: $lines stderr lines, expected 1"
  grep -q '^brisk: error: ' "$ERR" || fail "brisk $args: stderr does not start with 'brisk: error:'"
  if [[ -n $pattern ]]; then grep -qE -- "$pattern" "$ERR" || fail "brisk $args: stderr lacks /$pattern/"; fi
}

# --- help --------------------------------------------------------------------------
expect_ok "help" "^usage: brisk <command>" "^  run " "--no-default-plugins" "--runtime-idle-ms N"
expect_ok "--help" "^usage: brisk <command>"
expect_ok "bench --help" "^brisk bench" "--rounds N" "--threads N"

# --- run -----------------------------------------------------------------------------
expect_ok "run mlp" "^model: mlp " "^output: Tensor\[1, 10\] Float sum=" "^latency: [0-9.]+ ms"
expect_ok "run $ZOO/mlp.pt --inputs $ZOO/mlp.inputs2.pt" "^output: Tensor\[64, 10\]"
expect_ok "run control_flow --check" "^check: matches the TorchScript interpreter$"
# Bundled files by file name too: "<zoo>.pt", and a PT2 program's TorchScript twin.
expect_ok "run mlp.pt --check" "^model: mlp " "^check: matches the TorchScript interpreter$"
expect_ok "run while_model.pt --check" "^check: matches the TorchScript interpreter$"
expect_ok "inspect resnet18.pt --no-profile" "^passes: eliminate_dead_code=0 remove_eval_dropout=0 fold_constants=0 .*inplace_reuse=[1-9]"
expect_ok "run multi_output --check" "^check: matches the TorchScript interpreter$"
expect_ok "run mlp --check --fallback-only --no-default-plugins" "^check: matches the TorchScript interpreter$"
# A reduced precision is checked against fp32 within the stated bound, and says so.
expect_ok "run $ZOO/mlp.pt --inputs $ZOO/mlp.inputs2.pt --precision int8_dynamic --check" \
  "^check: matches the TorchScript interpreter \(precision int8_dynamic: within 5% of the output's largest magnitude\)$"
expect_ok "run resnet18 --precision bf16 --check" \
  "^check: matches the TorchScript interpreter \(precision bf16: within 5% of the output's largest magnitude\)$"
expect_ok "run" "^model: resnet18 " "^output: Tensor\[1, 1000\]"
# Relative paths are relative to the user's directory under `bazel run`.
cp "$ZOO/mlp.pt" "$TMP/copy.pt"
BUILD_WORKING_DIRECTORY="$TMP" expect_ok "run copy.pt --inputs $ZOO/mlp.inputs.pt" "^model: copy "

# --- inspect ---------------------------------------------------------------------------
expect_ok "inspect mlp --plugin-option onednn.linear=true" "^signature: \(x: Tensor\)$" "^plugins: " "^  #0 +brisk::delegate " "^    #1 +aten::linear " \
  "^kernels: out-variant=[0-9]+ native=[0-9]+ delegate=[0-9]+ fallback=[0-9]+ \(total 8\)$" "^partitions: 3$" "^fallback ops:"
expect_ok "inspect control_flow --graph" "^graph:" "^  +#[0-9]+ " 
expect_ok "inspect mlp --fallback-only" "^  aten::linear x3$" "^  aten::relu x2$"

# --- bench ----------------------------------------------------------------------------
expect_ok "bench mlp --plugin-option onednn.linear=true --rounds 1 --iters 3 --warmup 1 --json $TMP/bench.json" \
  "^settings: at::get_num_threads=1 blas=MKL cpu_capability=[A-Z0-9_]+ " "MKL_NUM_THREADS=" "GLIBC_TUNABLES=" "^options: plugins=" \
  "^model: nodes=8 " "^check: brisk's output matches the TorchScript interpreter$" \
  "^executor +iters +p50_us +p90_us +p99_us" "^brisk +3 +[0-9.]+ +[0-9.]+ +[0-9.]+" \
  "^interpreter +3 +[0-9.]+" "^ratio interpreter_p50/brisk_p50: [0-9.]+ \(median of per-round ratios: [0-9.]+"
grep -q '"ratio_p50": ' "$TMP/bench.json" || fail "bench --json: no ratio_p50 in $TMP/bench.json"
grep -q '"brisk": {"iters": 3, ' "$TMP/bench.json" || fail "bench --json: brisk iters"
grep -q '"blas": "MKL", "cpu_capability": "[A-Z0-9_]*"' "$TMP/bench.json" || fail "bench --json: blas, cpu_capability"
expect_ok "bench control_flow --rounds 2 --seconds 0.01 --warmup 0 --threads 1" "^2 +interpreter "

# --- usage errors (exit 2, one line) --------------------------------------------------
run_brisk; [[ $rc -eq 2 ]] || fail "brisk (no args): exit $rc, expected 2"
expect_error 2 "frobnicate" "unknown command"
expect_error 2 "run mlp --bogus" "unknown flag '--bogus'"
expect_error 2 "run mlp extra" "at most one MODEL"
expect_error 2 "bench mlp --iters" "expects a value"
expect_error 2 "bench mlp --iters x" "expects an integer"
expect_error 2 "bench mlp --iters 0" "must be in \[1, "
expect_error 2 "run mlp --max-runtimes -3" "must be in \[0, "
expect_error 2 "inspect mlp --check" "unknown flag"

# --- bad models and inputs (exit 2, one line, no crash) ---------------------------------
echo "this is not a TorchScript archive" >"$TMP/text.pt"
head -c 10000 "$ZOO/resnet18.pt" >"$TMP/truncated.pt"
: >"$TMP/empty.pt"
expect_error 2 "run $TMP/missing.pt" "not found"
expect_error 2 "run nosuchzoomodel" "bundled models: .*mlp"
expect_error 2 "run $TMP/text.pt"
expect_error 2 "inspect $TMP/text.pt"
expect_error 2 "run $TMP/truncated.pt"
expect_error 2 "bench $TMP/truncated.pt"
expect_error 2 "run $TMP/empty.pt"
expect_error 2 "run $TMP"
expect_error 2 "run mlp --inputs $TMP/missing.inputs.pt" "inputs file not found"
expect_error 2 "run mlp --inputs $TMP/text.pt"
expect_error 2 "run mlp --inputs $TMP/truncated.pt"
expect_error 2 "run mlp --inputs $ZOO/mlp.pt"
# Wrong input count, then wrong rank/shape.
expect_error 2 "run mlp --inputs $ZOO/deepandwide.inputs.pt" "inputs"
expect_error 2 "run deepandwide --inputs $ZOO/mlp.inputs.pt" "ids"
expect_error 2 "run mlp --inputs $ZOO/resnet18.inputs.pt"
expect_error 2 "bench mlp --inputs $ZOO/resnet18.inputs.pt --rounds 1 --iters 1"
expect_error 2 "run mlp --check --inputs $ZOO/resnet18.inputs.pt"
expect_error 2 "run mlp --plugin no_such_plugin" "no_such_plugin"
expect_error 2 "bench mlp --rounds 1 --iters 1 --json $TMP/no/such/dir/b.json" "cannot write JSON"

# --- bench --memory / --batch / --compare-planning / --manage-output-tensors -----------
expect_ok "bench mlp --rounds 1 --iters 2 --warmup 1 --memory --memory-runs 1 --memory-iters 2 --compare-planning --json $TMP/mem.json" \
  "^memory: peak RSS increase over the loaded model" "^memory settings: OMP_NUM_THREADS=" "GLIBC_TUNABLES=" \
  "^brisk +\+[0-9.]+ +\+[0-9.]+" "^interpreter +\+[0-9.]+" "^brisk \(no planning\) +\+[0-9.]+" \
  "^memory ratio brisk/interpreter \(peak increase\): [0-9.]+" "^no planning +2 " \
  "^planning ratio no_planning_p50/brisk_p50: [0-9.]+"
grep -q '"memory": {"processes_per_executor": 1' "$TMP/mem.json" || fail "bench --memory --json: no memory object"
grep -q '"ratio_brisk_interpreter": ' "$TMP/mem.json" || fail "bench --memory --json: no memory ratio"
grep -q '"compare_planning": {"brisk_no_planning": ' "$TMP/mem.json" || fail "bench --compare-planning --json"
expect_ok "bench resnet18 --batch 8 --rounds 1 --iters 1 --warmup 0" "^inputs: .*resnet18\.b8\.inputs\.pt$" \
  "^check: brisk's output matches the TorchScript interpreter$"
expect_error 2 "bench mlp --batch 8 --rounds 1 --iters 1" "no batch-8 inputs for mlp"
expect_error 2 "bench resnet18 --batch 8 --inputs $ZOO/resnet18.inputs.pt" "exclusive"
expect_error 2 "bench mlp --memory-iters 1" "must be in \[2, "
expect_ok "run mlp --check --manage-output-tensors" "^check: matches the TorchScript interpreter$"

# --- hostile input: file kinds, numeric bounds, plain torch.save inputs -----------------
# A FIFO blocks whoever opens it and /dev/zero never ends: both must be refused by kind
# (under a timeout here, so a regression fails instead of hanging the test).
mkfifo "$TMP/model.fifo"
ln -sfn "$TMP/loop_b.pt" "$TMP/loop_a.pt"
ln -sfn "$TMP/loop_a.pt" "$TMP/loop_b.pt"
PREFIX="timeout 60"
expect_error 2 "run $TMP/model.fifo" "FIFO"
expect_error 2 "run /dev/zero" "character device"
expect_error 2 "run $TMP/loop_a.pt" "symbolic link loop"
expect_error 2 "run mlp --inputs $TMP/model.fifo" "FIFO"
expect_error 2 "run mlp --inputs /dev/zero" "character device"
expect_error 2 "run mlp --plugin $TMP" "is a directory"
PREFIX=
# Every numeric flag names its range; values that used to wrap to int are refused.
for t in 1025 100000 4294967295 4294967296 -1 99999999999999999999; do
  expect_error 2 "run mlp --threads $t" "--threads must be in \[0, 1024\], got $t"
done
expect_error 2 "run mlp --inter-op-threads 4294967295" "--inter-op-threads must be in \[0, 1024\]"
# 0 is "no preference" (libtorch's threads, an arena of the machine's cores), as in the
# README's table and the Python keywords.
expect_ok "run mlp --threads 0 --inter-op-threads 0 --check" "^check: matches the TorchScript interpreter$"
expect_ok "bench mlp --threads 0 --rounds 1 --iters 2 --warmup 1" "^check: "
# pt2_program: "" is its default; a name for a TorchScript file is a mistake, named.
run_brisk run mlp.pt2 --pt2-program "" --check  # not expect_ok: its word splitting cannot pass ""
{ [[ $rc -eq 0 ]] && grep -q '^check: matches' "$OUT"; } || fail "brisk run mlp.pt2 --pt2-program '': exit $rc"
expect_error 2 "run mlp.pt --pt2-program bogus" "pt2_program 'bogus' names a program of a PT2 archive"
expect_error 2 "run mlp --max-parallel-ops 0" "--max-parallel-ops must be in \[1, 1024\]"
expect_error 2 "run mlp --runtime-idle-ms -5" "--runtime-idle-ms must be in \[0, "
expect_error 2 "run mlp --max-runtimes 100000000" "--max-runtimes must be in \[0, 65536\]"
expect_error 2 "bench mlp --rounds 100000000" "--rounds must be in \[1, "
expect_error 2 "bench mlp --seconds 1e9" "--seconds must be in \[0, "
# Inputs files as a user writes them with plain torch.save (one-item lists and dicts,
# pickle's single APPEND/SETITEM), and the formats libtorch cannot read, named.
/opt/brisk/venv/bin/python3 - "$TMP" <<'PY' || fail "writing the torch.save inputs files"
import sys, torch
d = sys.argv[1]
g = torch.Generator().manual_seed(0)
torch.save({"args": [torch.randn(3, 256, generator=g)], "kwargs": {}}, f"{d}/plain.inputs.pt")
torch.save({"args": [torch.randn(2, 8, generator=g)], "kwargs": {"scale": 2.0}}, f"{d}/plain_kw.inputs.pt")
torch.save({"args": [torch.randn(3, 256, generator=g)]}, f"{d}/proto4.inputs.pt", pickle_protocol=4)
torch.save({"args": [torch.randn(3, 256, generator=g)]}, f"{d}/legacy.inputs.pt", _use_new_zipfile_serialization=False)
import collections
torch.save(collections.OrderedDict(args=[torch.randn(3, 256, generator=g)], kwargs={}), f"{d}/ordered.inputs.pt")
# A model with a complex output: the summary must show both parts of the sum.
# (Traced: a module read from stdin has no source for torch.jit.script.)
class Complex(torch.nn.Module):
    def forward(self, x):
        return torch.view_as_complex(x)
torch.jit.trace(Complex(), torch.zeros(2, 2)).save(f"{d}/complex.pt")
torch.save({"args": [torch.tensor([[1.0, 2.0], [3.0, -8.0]])], "kwargs": {}}, f"{d}/complex.inputs.pt")
PY
expect_ok "run mlp --check --inputs $TMP/plain.inputs.pt" "^output: Tensor\[3, 10\] Float" "^check: matches"
expect_ok "run multi_output --check --inputs $TMP/plain_kw.inputs.pt" "^check: matches"
expect_error 2 "run mlp --inputs $TMP/proto4.inputs.pt" "pickle protocol above 2"
expect_error 2 "run mlp --inputs $TMP/legacy.inputs.pt" "legacy format"
expect_error 2 "run mlp --inputs $TMP/ordered.inputs.pt" "holds a collections.OrderedDict"
# A rank-0 tensor for a float argument and a list of tensors for List[Tensor], as
# torch.save writes them: the interpreter and the Python binding take both.
/opt/brisk/venv/bin/python3 "$RUNFILES/tests/cli/make_typed_inputs.py" "$TMP" || fail "writing sum_scaled"
expect_ok "run $TMP/sum_scaled.pt --check" "^output: Tensor\[2, 3\] Float" "^check: matches"
expect_ok "run $TMP/sum_scaled.pt --inputs $TMP/sum_scaled_pos.inputs.pt --check" "^check: matches"
expect_ok "bench $TMP/sum_scaled.pt --rounds 1 --iters 2 --warmup 1" "^check: "
expect_ok "run $TMP/complex.pt --check" "^output: Tensor\[2\] ComplexFloat sum=4-6j$" "^check: matches"

# --- PT2 archives: references without a TorchScript twin, NativeRT's row ------------------
# A zoo archive with a twin (mlp.pt) is checked against the interpreter; NativeRT's row
# says why it did not run. TorchScript models get no NativeRT row.
expect_ok "bench mlp.pt2 --rounds 1 --iters 2 --warmup 1" "^check: brisk's output matches the TorchScript interpreter$" \
  "^interpreter +2 +[0-9.]+" "^nativert +not run: (not in this libtorch|NativeRT is present|the loaded )" \
  "^ratio interpreter_p50/brisk_p50: "
run_brisk bench mlp --rounds 1 --iters 1 --warmup 0
grep -q '^nativert' "$OUT" && fail "bench mlp (TorchScript): has a NativeRT row"
# The zoo's extra programs have no twin: checked against ep.module()'s saved outputs.
TWINLESS='no TorchScript twin .*/(cond_model|pytree_io)\.pt: PT2 references come from ep\.module\(\) in tools/bench:compare'
expect_ok "run cond_model.pt2 --check" \
  "^reference: $TWINLESS; checking against ep\.module\(\)'s saved outputs .*/cond_model\.pt2\.expected\.pt$" \
  "^check: matches ep\.module\(\)'s saved outputs$"
expect_ok "run pytree_io.pt2 --check" "^check: matches ep\.module\(\)'s saved outputs$"
expect_ok "run cond_model.core.pt2 --check --inputs $ZOO/cond_model.inputs2.pt" \
  "saved outputs .*/cond_model\.pt2\.inputs2\.expected\.pt$" "^check: matches ep\.module\(\)'s saved outputs$"
expect_error 2 "run pytree_io.pt2 --check --inputs $TMP/plain.inputs.pt" \
  "cannot --check: $TWINLESS; saved ep\.module\(\) outputs .* exist only for the archive's own inputs files"
expect_ok "bench cond_model.pt2 --rounds 2 --iters 2 --warmup 1 --json $TMP/pt2.json" "^reference: $TWINLESS$" \
  "^check: brisk's output matches ep\.module\(\)'s saved outputs \(.*/cond_model\.pt2\.expected\.pt\)$" \
  "^round +first +brisk_p50_us$" "^brisk +4 +[0-9.]+" "^interpreter +not run: $TWINLESS$" "^nativert +not run: "
grep -q '^ratio' "$OUT" && fail "bench cond_model.pt2: a ratio without an interpreter"
grep -q '"interpreter": null, "ratio_p50": null' "$TMP/pt2.json" || fail "bench cond_model.pt2 --json: interpreter, ratio"
grep -q '"reference": {"kind": "saved_outputs"' "$TMP/pt2.json" || fail "bench cond_model.pt2 --json: reference"
grep -q '"nativert": {"ran": false, "reason": "' "$TMP/pt2.json" || fail "bench cond_model.pt2 --json: nativert"
# A user's archive (torch.export.save, no twin, no saved outputs): run --check is a user
# error; bench times brisk alone and says why nothing checks it.
/opt/brisk/venv/bin/python3 - "$TMP" <<'PY' || fail "writing the torch.export.save archive"
import sys, torch
d = sys.argv[1]
class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(6, 3)
    def forward(self, x):
        return torch.relu(self.fc(x))
torch.manual_seed(0)
x = torch.randn(2, 6)
torch.export.save(torch.export.export(Net().eval(), (x,)), f"{d}/user.pt2")
torch.save({"args": [x], "kwargs": {}}, f"{d}/user.inputs.pt")
PY
expect_error 2 "run $TMP/user.pt2 --check" \
  "cannot --check: no TorchScript twin $TMP/user\.pt: .*; no saved ep\.module\(\) outputs $TMP/user\.pt2\.expected\.pt"
expect_ok "run $TMP/user.pt2" "^output: Tensor\[2, 3\] Float"
expect_ok "bench $TMP/user.pt2 --rounds 1 --iters 2 --warmup 0 --memory --memory-runs 1 --memory-iters 2" \
  "^check: none: no saved ep\.module\(\) outputs" "^interpreter +not run: no TorchScript twin $TMP/user\.pt: " \
  "^nativert +not run: " "^brisk +\+[0-9.]+"
grep -qE '^interpreter +\+|^memory ratio' "$OUT" && fail "bench user.pt2 --memory: measured an interpreter that is not there"
# Saved outputs that are damaged, or hold other values.
echo "not a torch.save file" >"$TMP/user.pt2.expected.pt"
expect_error 2 "run $TMP/user.pt2 --check" "saved outputs file '$TMP/user\.pt2\.expected\.pt'"
cp "$ZOO/cond_model.pt2" "$TMP/wrong.pt2"
cp "$ZOO/cond_model.inputs.pt" "$TMP/wrong.inputs.pt"
cp "$ZOO/cond_model.pt2.inputs2.expected.pt" "$TMP/wrong.pt2.expected.pt"
run_brisk run "$TMP/wrong.pt2" --check
[[ $rc -eq 1 ]] || fail "run wrong.pt2 --check: exit $rc, expected 1"
grep -q "^check: DIFFERS from ep.module()'s saved outputs: " "$OUT" || fail "run wrong.pt2 --check: no DIFFERS line"

if [[ $failures -ne 0 ]]; then
  echo "$failures check(s) failed"
  exit 1
fi
echo "all brisk CLI checks passed"

# --- what a brisk process loads --------------------------------------------------------
# PyPI's torch is a CUDA build. brisk links libtorch_cpu and libc10 only; libtorch_cpu
# itself lists libcudart and libcupti (Kineto's GPU profiler) as needed libraries, which
# the loader maps but nothing calls. No other CUDA library (libtorch_cuda, cuDNN, cuBLAS,
# NCCL, ...) may be loaded, at start or later by dlopen.
LD_DEBUG=files "$BRISK" run mlp >"$OUT" 2>"$ERR" || fail "LD_DEBUG=files brisk run mlp: exit $?"
loaded=$(grep -oE 'file=[^ ]+' "$ERR" | sed 's/^file=//; s#.*/##' | sort -u)
echo "$loaded" | grep -qx 'libtorch_cpu.so' || fail "LD_DEBUG lists no libtorch_cpu.so: the check below is blind"
cuda=$(echo "$loaded" | grep -iE 'cuda|cudnn|cublas|cufft|curand|cusolver|cusparse|nccl|nvrtc|nvjitlink|nvshmem|cupti|cufile' |
  grep -vxE 'libcudart\.so\.[0-9]+|libcupti\.so\.[0-9]+')
[[ -z $cuda ]] || fail "brisk run mlp loads CUDA libraries beyond libtorch_cpu's own: $cuda"

# --- bench --profile / --trace (per-node profile, Chrome trace) -------------------------
# brisk's own kernels (--no-delegates): five nodes, each run once.
expect_ok "bench mlp --no-delegates --rounds 1 --iters 3 --warmup 1 --profile --trace $TMP/trace.json --json $TMP/profile.json" \
  "^profile: [0-9]+ profiled runs, 5.0 node executions per run" "^top 5 of 5 nodes by time:" \
  "^top [0-9]+ of [0-9]+ ops by time:" " out-variant +ops_cpu +aten::linear" \
  "^kernel time per run: [0-9.]+ us median" "^framework overhead per node: \([0-9.]+ - [0-9.]+\) us / 5.0 nodes = -?[0-9.]+ ns$" \
  "^trace: $TMP/trace.json \(one run, [0-9]+ events"
/opt/brisk/venv/bin/python3 -c '
import json, sys
t = json.load(open(sys.argv[1]))
assert any(e["ph"] == "X" and e["name"].startswith("aten::linear") for e in t["traceEvents"]), "no linear events"
p = json.load(open(sys.argv[2]))["profile"]
assert p["runs"] >= 1 and len(p["nodes"]) == 5 and p["ops"], p
' "$TMP/trace.json" "$TMP/profile.json" || fail "bench --profile: trace or JSON invalid"
expect_ok "bench inception_fork --rounds 1 --iters 2 --warmup 1 --trace $TMP/fork.json --top 100" \
  "^top ([0-9]+) of \1 nodes by time:" "aten::wait" "^trace: "
/opt/brisk/venv/bin/python3 -c 'import json, sys; json.load(open(sys.argv[1]))["traceEvents"]' "$TMP/fork.json" \
  || fail "bench --trace (fork): invalid JSON"
expect_error 2 "bench mlp --rounds 1 --iters 1 --trace $TMP/no/such/dir/t.json" "cannot write trace"

if [[ $failures -ne 0 ]]; then
  echo "$failures --profile check(s) failed"
  exit 1
fi
echo "all brisk --profile checks passed"
