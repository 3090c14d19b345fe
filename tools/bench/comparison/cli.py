"""brisk vs PyTorch and other CPU runtimes on the zoo models: one command, one table, one chart.

    bazel run //tools/bench:compare [-- --models resnet18,mlp:b64 --executors brisk,onnxruntime
                                        --rounds 7 --quick]

For each model and batch size it times, in one process and on the same inputs:
  eager              the model's Python source (tools/zoo/models.py, weights from the .pt)
                     under torch.inference_mode(), parameters without requires_grad
  interpreter        the TorchScript interpreter on torch.jit.freeze(module)
  interpreter_ofi    the interpreter on torch.jit.optimize_for_inference(module)
  static_runtime     torch._C._jit_to_static_module(frozen._c)
  onnxruntime        torch.onnx.export of the eager module, an onnxruntime session
  openvino           openvino.convert_model of the eager module, compiled for CPU
  inductor           torch.compile (max-autotune-no-cudagraphs, freezing)
  aotinductor        torch.export + aoti_compile_and_package, aoti_load_package
  nativert           torch._C._nativert.PyModelRunner on a PT2 archive of the eager module
                     (where this torch has more than its stub)
  ep_module          torch.export.load(<that archive>).module(): PyTorch's own way to run it
  brisk              the brisk binding (import brisk), default options
  brisk_pt2          the brisk binding on the same PT2 archive
  brisk_nodelegates  the brisk binding on the TorchScript file with use_delegates=False:
                     brisk's own kernels only (what the delegate backends add)
  brisk_nofusion     the brisk binding on the TorchScript file with the elementwise fusion
                     pass ops_cpu.fuse_pointwise disabled (what fusion adds)
  brisk_aoti         brisk on a NativeRT archive whose whole program AOTInductor compiled
                     (lower_exported_program + package_nativert_with_aoti_delegate, the same
                     inductor configs as the aotinductor row): the aoti delegate runs it
  brisk_aoti_partial brisk on brisk.lower()'s archive: the regions the measured default
                     partitioner picks compiled by AOTInductor, the rest on brisk's kernels
and, with --precision, reduced-precision rows: brisk's opt-in modes and the peers at the
same precision; int8_static runs the zoo's PT2E static int8 program (<model>.int8.pt2) in
brisk and AOTInductor, and ONNX Runtime's / OpenVINO's own static int8 (QDQ) of the same
fp32 model, calibrated on the same zoo inputs
(see tools/bench/comparison/runtimes_*.py for each runtime's settings; each gets one
thread). Every executor is called the same way from Python; all but eager under
torch.no_grad(). After warm-up, each round times a block of ~--seconds per executor, in
an order that rotates every round; the table gives the median over all timed inferences
and, per executor, the median of its per-round ratios to the interpreter's latency, and
names the fastest executor other than brisk ("best other runtime") with brisk's ratio to
it. Outputs are checked against eager's (allclose) before timing. Build time (load,
export, compile) is recorded per executor.

Peak memory is measured per executor in a separate process (compare.py with
--memory-child): load the model and inputs, reset the peak (`echo 5 >
/proc/self/clear_refs`), run, read VmHWM: the peak RSS increase over the loaded model;
once under the fixed allocator settings below and once under glibc's default malloc.

Threads and the allocator are fixed (one intra-op thread, MKL single-threaded, glibc
malloc without mmap and trimming): the script re-executes itself with that
environment when it is missing, and prints it.

Writes results/compare-<date>.{md,json,png} and results/latest.{md,json,png} in the
workspace (--out to change; --quick writes compare-<date>-quick.* and leaves latest.*,
and compiles Inductor in its default mode).
"""
import argparse
import collections
import datetime
import os
import shutil
import sys
import tempfile
import time

import torch

from . import cases, machine, memory, report, run
from .executors import EXECUTORS, REDUCED_EXECUTORS, TIMED, selected_executors
from .outputs import ATOL, RTOL
from .report import fmt_us


def workspace_dir():
    return os.environ.get("BUILD_WORKSPACE_DIRECTORY") or os.getcwd()


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--models", default="", help="comma-separated models or model:bN cases (default: all)")
    p.add_argument("--rounds", type=int, default=None, help="timing rounds (default 7; --quick: 1)")
    p.add_argument("--seconds", type=float, default=None, help="time per executor per round (default 0.2)")
    p.add_argument("--quick", action="store_true", help="CI smoke test: 1 short round, tiny models")
    p.add_argument("--no-memory", action="store_true", help="skip the per-executor memory processes")
    p.add_argument("--memory-iters", type=int, default=None, help="inferences per memory process (default 5)")
    p.add_argument("--zoo", default=None, help="directory with the zoo's .pt files (default: from runfiles)")
    p.add_argument("--out", default=None, help="output directory (default: <workspace>/results)")
    p.add_argument("--executors", default="",
                   help=f"comma-separated subset of {','.join(EXECUTORS)} (default: every fp32 one; eager and the "
                        "interpreter always run: they are the references)")
    p.add_argument("--precision", default="",
                   help="also run the reduced-precision rows: comma-separated int8 (brisk int8_dynamic, ONNX "
                        "Runtime quantize_dynamic), fp16 (brisk fp16_weights), bf16 (brisk bf16, OpenVINO bf16), "
                        "int8_static (the zoo's PT2E int8 program in brisk and AOTInductor; ONNX Runtime and "
                        "OpenVINO on quantize_static QDQ; resnet18, mobilenet_v2 and mlp); never a 'best other "
                        "runtime', outputs held to 5%% of the output's range (int8_static: 25%% of the fp32 "
                        "model's)")
    p.add_argument("--inductor-mode", default=None, choices=["max-autotune-no-cudagraphs", "default"],
                   help="torch.compile mode for Inductor, and max_autotune for AOTInductor "
                        "(default: max-autotune-no-cudagraphs; --quick: default)")
    p.add_argument("--memory-child", default=None, help=argparse.SUPPRESS)
    p.add_argument("--workdir", default=None, help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    a.executor_list = selected_executors(a.executors)
    kinds = {k.strip() for k in a.precision.split(",") if k.strip()}
    unknown = sorted(kinds - set(REDUCED_EXECUTORS.values()))
    if unknown:
        raise SystemExit(f"compare: unknown precision {', '.join(unknown)} "
                         f"(known: {', '.join(dict.fromkeys(REDUCED_EXECUTORS.values()))})")
    a.executor_list += [n for n, k in REDUCED_EXECUTORS.items() if k in kinds and n not in a.executor_list]
    # --quick is CI's: max-autotune benchmarks every GEMM/conv choice at compile time
    # (tens of seconds per model even for the MLP); the default mode compiles in seconds.
    a.inductor_mode = a.inductor_mode or ("default" if a.quick else "max-autotune-no-cudagraphs")
    a.rounds = a.rounds if a.rounds is not None else (1 if a.quick else 7)
    a.seconds = a.seconds if a.seconds is not None else (0.03 if a.quick else 0.2)
    a.memory_iters = a.memory_iters if a.memory_iters is not None else (2 if a.quick else 5)
    a.min_iters = 2 if a.quick else 3
    a.warmup_seconds = 0.02 if a.quick else 0.3
    a.warmup_iters = 2 if a.quick else 5
    if a.rounds < 1 or a.seconds <= 0 or a.memory_iters < 1:
        p.error("--rounds, --seconds and --memory-iters must be positive")
    return a


def _shown_argv(argv):
    """The user's flags, without the --zoo the bazel-run wrapper adds."""
    out, skip = [], False
    for a in argv:
        if skip:
            skip = False
        elif a == "--zoo":
            skip = True
        elif not a.startswith("--zoo="):
            out.append(a)
    return out


def main(argv=None):
    """The whole run (or, with --memory-child, one memory process); returns the exit code.
    The caller (compare.py) has applied settings.ensure_settings() before torch loaded."""
    argv = sys.argv[1:] if argv is None else argv
    opts = parse_args(argv)
    zoo = os.path.abspath(opts.zoo) if opts.zoo else cases.default_zoo()
    # The memory processes inherit the parent's mode (and get its work directory as --workdir).
    if opts.memory_child:
        os.environ.setdefault("BRISK_COMPARE_INDUCTOR_MODE", opts.inductor_mode)
        memory.memory_child(opts.memory_child, opts.models, zoo, opts.memory_iters, opts.workdir)
        return 0
    os.environ["BRISK_COMPARE_INDUCTOR_MODE"] = opts.inductor_mode
    torch.set_num_threads(1)
    selected = cases.select_cases(opts.models, opts.quick)
    workdir = tempfile.mkdtemp(prefix="brisk-compare-")
    # A fresh Inductor cache: the build times in the table are what a first compile costs.
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = os.path.join(workdir, "inductor-cache")

    def log(msg):
        print(msg, flush=True)

    rec = collections.OrderedDict()
    rec["date"] = datetime.date.today().isoformat()
    rec["git"] = machine.git_describe(workspace_dir())
    rec["machine"] = machine.machine_info()
    rec["settings"] = machine.settings_info()
    rec["options"] = collections.OrderedDict(
        argv=_shown_argv(argv), zoo=zoo, quick=opts.quick, executors=opts.executor_list,
        inductor_mode=opts.inductor_mode, rounds=opts.rounds, seconds=opts.seconds, min_iters=opts.min_iters,
        memory_iters=opts.memory_iters, rtol=RTOL, atol=ATOL)
    log("machine: " + ", ".join(f"{k}={v}" for k, v in rec["machine"].items()))
    log("settings: " + " ".join(f"{k}={v}" for k, v in rec["settings"].items()))
    log(f"zoo: {zoo}")

    rec["loadavg_start"] = machine.loadavg()
    rec["results"] = []
    rec["versions"] = machine.runtime_versions()
    log("runtimes: " + ", ".join(f"{k} {v}" for k, v in rec["versions"].items()))
    for case in selected:
        t0 = time.perf_counter()
        log(f"{cases.case_id(case)}:")
        r = run.run_case(case, zoo, opts, log, workdir)
        _log_case(r, log)
        if not opts.no_memory:
            r["memory"] = memory.measure_memory(case, zoo, opts, log, workdir)
        log(f"  ({time.perf_counter() - t0:.1f} s)")
        rec["results"].append(r)

    # Other processes on the machine share its CPUs: the load is part of the record.
    rec["loadavg_end"] = machine.loadavg()
    shutil.rmtree(workdir, ignore_errors=True)
    out = os.path.abspath(opts.out) if opts.out else os.path.join(workspace_dir(), "results")
    stem, md = report.write(rec, out, opts.quick, log)
    log("")
    log(md)
    log(f"written: {stem}.{{md,json,png}}" + ("" if opts.quick else " and latest.*"))
    return 0


def _log_case(r, log):
    """The case's numbers as they come, before the table at the end."""
    for n in TIMED:
        e = r["executors"].get(n, {"available": False})
        if e["available"] and e["max_abs_diff"] is None:
            log(f"  {n:16s} p50 {fmt_us(e['p50_us']):>8s} us  output structure differs")
        elif e["available"]:
            ratio = "—" if e["ratio"] is None else f"{e['ratio']:.3f}"
            log(f"  {n:16s} p50 {fmt_us(e['p50_us']):>8s} us  x{ratio} vs interpreter  "
                f"agrees={e['agrees']} (max diff {e['max_abs_diff']:.3g})")
    b = r["best_other"]
    if b and "brisk_ratio" in b:
        log(f"  best other runtime: {b['name']} ({fmt_us(b['p50_us'])} us); brisk / it = {b['brisk_ratio']:.3f}")
    if r["pt2_ratio"]:
        log(f"  brisk (PT2) / ep.module() on the same archive = {r['pt2_ratio']['ratio']:.3f}")
