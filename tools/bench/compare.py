#!/usr/bin/env python3
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
(see build_onnxruntime and the other builders for each runtime's settings; each gets one
thread). Every executor is called the same way from Python; all but eager under
torch.no_grad(). After warm-up, each round times a block of ~--seconds per executor, in
an order that rotates every round; the table gives the median over all timed inferences
and, per executor, the median of its per-round ratios to the interpreter's latency, and
names the fastest executor other than brisk ("best other runtime") with brisk's ratio to
it. Outputs are checked against eager's (allclose) before timing. Build time (load,
export, compile) is recorded per executor.

Peak memory is measured per executor in a separate process (this script with
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
import contextlib
import datetime
import gc
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

# --- Fixed settings (before torch is imported) -----------------------------------------

SETTINGS_ENV = collections.OrderedDict([
    ("OMP_NUM_THREADS", "1"),
    ("MKL_NUM_THREADS", "1"),
    # Without these, glibc returns large freed blocks to the OS and re-faults them on the
    # next run: conv nets then spend much of their time in page faults, differently in
    # every process.
    ("GLIBC_TUNABLES", "glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=68719476736"),
])


# The memory processes also run under glibc's default malloc (other runtimes' arenas
# behave differently from PyTorch's allocator under the fixed tunables): this variable
# set to MALLOC_DEFAULT makes a process keep GLIBC_TUNABLES unset.
MALLOC_ENV = "BRISK_COMPARE_MALLOC"
MALLOC_DEFAULT, MALLOC_TUNED = "glibc-default", "tunables"


def _ensure_settings():
    missing = {k: v for k, v in SETTINGS_ENV.items() if os.environ.get(k) != v}
    if os.environ.get(MALLOC_ENV) == MALLOC_DEFAULT:
        missing.pop("GLIBC_TUNABLES", None)
        if "GLIBC_TUNABLES" in os.environ:
            raise SystemExit(f"compare: {MALLOC_ENV}={MALLOC_DEFAULT} with GLIBC_TUNABLES set")
    if not missing:
        return
    if os.environ.get("BRISK_COMPARE_REEXEC"):  # guard against a loop if exec drops env
        raise SystemExit(f"compare: could not set {sorted(missing)} in the environment")
    os.environ.update(missing)
    os.environ["BRISK_COMPARE_REEXEC"] = "1"
    # GLIBC_TUNABLES is read by the dynamic loader at process start: only a new process
    # gets it.
    # sys.argv[0]: this script, or another benchmark script that imports these settings.
    os.execv(sys.executable, [sys.executable, os.path.abspath(sys.argv[0])] + sys.argv[1:])


if __name__ == "__main__":
    _ensure_settings()

import torch  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))

# --- What is compared ----------------------------------------------------------------

Case = collections.namedtuple("Case", ["model", "batch", "inputs"])

CASES = [
    Case("resnet18", 1, "inputs"),
    Case("resnet18", 8, "b8.inputs"),
    Case("mobilenet_v2", 1, "inputs"),
    Case("mobilenet_v2", 8, "b8.inputs"),
    Case("mlp", 1, "inputs"),
    Case("mlp", 64, "inputs2"),
    Case("deepandwide", 1, "inputs"),
    Case("deepandwide", 32, "inputs2"),
    Case("transformer", 1, "inputs"),
    Case("inception_fork", 1, "inputs"),
    Case("inception_nofork", 1, "inputs"),
    Case("chain_mul100", 1, "inputs"),
    Case("chain_add100", 1, "inputs"),
    Case("lstm_tagger", 1, "inputs"),
    Case("gru_encoder", 1, "inputs"),
]
QUICK_CASES = ["mlp:b1", "chain_add100:b1", "inception_fork:b1"]

# NativeRT is Static Runtime's successor for torch.export programs: it runs the same
# PT2 archive as brisk (PT2). Where the installed torch lacks it, its column says why.
# ep_module is the same archive loaded back with torch.export.load and run as
# ep.module(): what a PT2 user runs without either runtime, and brisk (PT2)'s own
# reference (the pt2_ratio of each case).
PYTORCH_EXECUTORS = ["eager", "interpreter", "interpreter_ofi", "static_runtime", "nativert", "ep_module"]
# What a user would pick instead of brisk.
OTHER_RUNTIMES = ["onnxruntime", "openvino", "inductor", "aotinductor"]
# brisk on the TorchScript file, and on a PT2 archive of the same module and weights.
BRISK_EXECUTORS = ["brisk", "brisk_pt2", "brisk_nodelegates", "brisk_nofusion", "brisk_aoti", "brisk_aoti_partial"]
# brisk's reduced-precision rows run the PT2 archive (the TorchScript file gives the same
# layers: ops_cpu.decompose_encoder_layer spells out the one fused op it keeps).
PT2_EXECUTORS = ["nativert", "ep_module", "brisk_pt2", "brisk_int8", "brisk_fp16", "brisk_bf16"]
# Reduced precision, by --precision: brisk's opt-in modes (ops_quantized) and the peers at
# the same precision. They compute something other than fp32, so none is ever a "best
# other runtime"; their outputs must stay within REDUCED_ERROR of the reference output's
# range (the column notes say how far they are).
REDUCED_EXECUTORS = {"brisk_int8": "int8", "brisk_fp16": "fp16", "brisk_bf16": "bf16", "onnxruntime_int8": "int8",
                     "openvino_bf16": "bf16", "brisk_int8_static": "int8_static",
                     "onnxruntime_int8_static": "int8_static", "openvino_int8_static": "int8_static",
                     "aotinductor_int8_static": "int8_static"}
REDUCED_ERROR = 0.05
# Static int8 (every activation quantized too) is checked against the fp32 model it was
# quantized from (tools/zoo/models_pt2.int8_float_model), and allowed more: the zoo's
# random mobilenet_v2 has 1000 logits within int8 noise of each other, and its PT2E
# program differs from the fp32 model by 12-17% of the output's range (resnet18 and mlp
# about 1%; the column notes give each row's own figure).
REDUCED_ERROR_BY_KIND = {"int8_static": 0.25}
# The zoo's PT2E static int8 programs: <model>.int8.pt2 (dynamic batch 1..64).
INT8_STATIC_SUFFIX = ".int8.pt2"
EXECUTORS = PYTORCH_EXECUTORS + OTHER_RUNTIMES + BRISK_EXECUTORS + list(REDUCED_EXECUTORS)
TIMED = EXECUTORS + ["brisk_cpp"]  # brisk_cpp: the brisk Module timed by its C++ loop
# Everything but brisk itself: the candidates for "best other runtime".
OTHERS = PYTORCH_EXECUTORS + OTHER_RUNTIMES
LABELS = {
    "brisk_cpp": "brisk, C++ loop",
    "eager": "eager",
    "interpreter": "interpreter (frozen)",
    "interpreter_ofi": "interpreter + optimize_for_inference",
    "static_runtime": "Static Runtime",
    "nativert": "NativeRT",
    "ep_module": "ep.module() (PT2)",
    "onnxruntime": "ONNX Runtime",
    "openvino": "OpenVINO",
    "inductor": "Inductor",
    "aotinductor": "AOTInductor",
    "brisk": "brisk",
    "brisk_pt2": "brisk (PT2)",
    "brisk_nodelegates": "brisk, no delegates",
    "brisk_nofusion": "brisk, no elementwise fusion",
    "brisk_aoti": "brisk + AOTI (whole graph)",
    "brisk_aoti_partial": "brisk + AOTI (partial)",
    "brisk_int8": "brisk (PT2), int8_dynamic",
    "brisk_fp16": "brisk (PT2), fp16_weights",
    "brisk_bf16": "brisk (PT2), bf16",
    "onnxruntime_int8": "ONNX Runtime, quantize_dynamic int8",
    "openvino_bf16": "OpenVINO, bf16",
    "brisk_int8_static": "brisk (PT2E int8 program)",
    "onnxruntime_int8_static": "ONNX Runtime, quantize_static int8 (QDQ)",
    "openvino_int8_static": "OpenVINO, int8 (QDQ)",
    "aotinductor_int8_static": "AOTInductor (PT2E int8 program)",
}
# Latency ratios are to the interpreter (the runtime brisk replaces); outputs are checked
# against eager PyTorch, the model's own source (the interpreter when that is missing).
REFERENCE = "interpreter"
OUTPUT_REFERENCE = "eager"
# oneDNN's blocked convolutions (ofi), OpenVINO's and ONNX Runtime's own kernels and
# Inductor's generated loops all sum in other orders than ATen.
RTOL, ATOL = 1e-3, 1e-4


def case_id(c):
    return f"{c.model}:b{c.batch}"


def select_cases(spec, quick):
    if not spec:
        spec = ",".join(QUICK_CASES) if quick else ""
    if not spec:
        return list(CASES)
    out = []
    for item in [s.strip() for s in spec.split(",") if s.strip()]:
        found = [c for c in CASES if item in (c.model, case_id(c))]
        if not found:
            names = ", ".join(sorted({c.model for c in CASES} | {case_id(c) for c in CASES}))
            raise SystemExit(f"compare: unknown model '{item}' (known: {names})")
        out.extend(c for c in found if c not in out)
    return out


# --- Loading -------------------------------------------------------------------------

def zoo_file(zoo, case, suffix):
    return os.path.join(zoo, f"{case.model}{suffix}")


def load_inputs(zoo, case):
    d = torch.load(zoo_file(zoo, case, f".{case.inputs}.pt"))
    return list(d["args"]), dict(d["kwargs"])


_models_module = None


def zoo_models(zoo):
    """tools/zoo/models.py (the models' Python source), or None."""
    global _models_module
    if _models_module is None:
        path = os.path.join(zoo, "models.py")
        if not os.path.exists(path):
            return None
        import importlib.util
        spec = importlib.util.spec_from_file_location("brisk_zoo_models", path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        _models_module = mod
    return _models_module


def load_eager(zoo, case):
    path = zoo_file(zoo, case, ".pt")
    models = zoo_models(zoo)
    source = "scripted module, not frozen (no Python source found)"
    module = None
    if models is not None and case.model in models.MODELS:
        module = models.MODELS[case.model]().eager
        try:
            # Same seed, same weights; loading them from the .pt makes sure.
            module.load_state_dict(torch.jit.load(path).state_dict())
            source = "tools/zoo/models.py, weights from the .pt"
        except Exception as e:  # noqa: BLE001 - reported, and the seed gives the same weights
            source = f"tools/zoo/models.py, own seed ({type(e).__name__} loading the .pt's weights)"
    if module is None:
        module = torch.jit.load(path)
    module.eval()
    for p in module.parameters():
        p.requires_grad_(False)
    gc.collect()
    return module, source


def sr_shim():
    """tools/bench/_sr_shim.so (built by //tools/bench:compare), or None."""
    try:
        import _sr_shim
        return _sr_shim
    except ImportError:
        return None


class Executor:
    def __init__(self, name):
        self.name = name
        self.fn = None          # one inference; output returned
        self.grad_ctx = torch.no_grad
        self.keep = []          # objects that must stay alive (frozen module behind SR)
        self.note = ""
        self.error = None
        self.load_s = 0.0
        self.samples = []       # µs, all rounds
        self.round_p50 = []
        self.max_abs_diff = None
        self.agrees = None
        self.block = None       # (seconds, min_iters) -> samples, instead of timing fn here
        self.to_torch = None    # converts fn's output for the output check (other runtimes)
        self.caveats = []       # what a user gets that is not the model's best form: footnotes


def cpp_executor(brisk_exec, args, kwargs):
    """The brisk Module timed by its own C++ loop (Module.benchmark, no Python call per
    inference), as one more executor in the rotation: the difference to the Python-timed
    brisk is the binding's call overhead."""
    e = Executor("brisk_cpp")
    m = brisk_exec.keep[0]
    e.fn = brisk_exec.fn
    e.agrees, e.max_abs_diff = brisk_exec.agrees, brisk_exec.max_abs_diff
    e.note = "brisk.Module.benchmark (GIL released, timed in C++)"
    inputs = {"args": args, "kwargs": kwargs}
    est = {"us": None}

    def block(seconds, min_iters):
        out = []
        start = time.perf_counter()
        while len(out) < min_iters or time.perf_counter() - start < seconds:
            # Chunks of ~1/4 block keep the block's length close to the others'.
            n = 1 if not est["us"] else max(1, int(seconds * 1e6 / 4 / est["us"]))
            out.extend(m.benchmark(inputs, warmup=0, iters=n)["samples_us"])
            est["us"] = statistics.median(out)
        return out

    e.block = block
    return e


def make_executor(name, zoo, case, args, kwargs, workdir=None):
    e = Executor(name)
    path = zoo_file(zoo, case, ".pt")
    if name in PT2_EXECUTORS:
        # The export is shared by the PT2 executors, so it is not any one's load time.
        try:
            path, export_s = _pt2_archive(zoo, case, args, kwargs, workdir)
        except Exception as ex:  # noqa: BLE001 - reported in the executor's column
            e.error = "torch.export: " + _one_line(ex)
            return e
        e.note = f"torch.export.export + package_pt2: {export_s:.1f} s, not counted in the load time"
    t0 = time.perf_counter()
    try:
        if name == "eager":
            module, e.note = load_eager(zoo, case)
            e.grad_ctx = torch.inference_mode
            e.fn = lambda: module(*args, **kwargs)
        elif name == "interpreter":
            module = torch.jit.freeze(torch.jit.load(path).eval())
            e.fn = lambda: module(*args, **kwargs)
        elif name == "interpreter_ofi":
            module = torch.jit.optimize_for_inference(torch.jit.load(path).eval())
            e.fn = lambda: module(*args, **kwargs)
        elif name == "static_runtime":
            frozen = torch.jit.freeze(torch.jit.load(path).eval())
            sm = torch._C._jit_to_static_module(frozen._c)
            e.keep.append(frozen)
            shim = sr_shim()
            if shim is not None:
                e.fn = lambda: shim.call(sm, *args, **kwargs)
                e.note = "called through tools/bench/sr_shim.cc (GIL released while it runs)"
            elif "prim::fork" in str(frozen.graph):
                # Its own __call__ keeps the GIL and deadlocks here sooner or later.
                raise RuntimeError("tools/bench/_sr_shim.so not found: Static Runtime's own __call__ can "
                                   "deadlock on prim::fork (see sr_shim.cc)")
            else:
                e.fn = lambda: sm(*args, **kwargs)
                e.note = "StaticModule.__call__ (keeps the GIL)"
        elif name in ("brisk", "brisk_pt2", "brisk_nodelegates", "brisk_nofusion", "brisk_int8", "brisk_fp16",
                      "brisk_bf16"):
            import brisk
            off = ["ops_cpu.fuse_pointwise"] if name == "brisk_nofusion" else []
            precision = {"brisk_int8": ["int8_dynamic"], "brisk_fp16": ["fp16_weights"],
                         "brisk_bf16": ["bf16"]}.get(name, [])
            m = brisk.load(path, use_delegates=name != "brisk_nodelegates", disabled_passes=off,
                           precision=precision)
            e.keep.append(m)
            e.fn = lambda: m(*args, **kwargs)
        elif name in ("brisk_aoti", "brisk_aoti_partial"):
            build_brisk_aoti(e, zoo, case, args, kwargs, workdir or tempfile.mkdtemp(prefix="brisk-compare-"),
                             partial=name == "brisk_aoti_partial")
        elif name == "ep_module":
            module = torch.export.load(path).module()
            e.fn = lambda: module(*args, **kwargs)
        elif name == "nativert":
            runner = torch._C._nativert.PyModelRunner(path, "model")
            e.keep.append(runner)
            e.fn = lambda: runner.run(*args, **kwargs)
        elif name in OTHER_RUNTIMES:
            BUILDERS[name](e, zoo, case, args, kwargs, workdir or tempfile.mkdtemp(prefix="brisk-compare-"))
        elif name == "onnxruntime_int8":
            build_onnxruntime(e, zoo, case, args, kwargs, workdir or tempfile.mkdtemp(prefix="brisk-compare-"),
                              int8=True)
        elif name == "openvino_bf16":
            build_openvino(e, zoo, case, args, kwargs, workdir or tempfile.mkdtemp(prefix="brisk-compare-"),
                           precision="bf16")
        elif name in INT8_STATIC_BUILDERS:
            INT8_STATIC_BUILDERS[name](e, zoo, case, args, kwargs,
                                       workdir or tempfile.mkdtemp(prefix="brisk-compare-"))
        else:
            raise ValueError(name)
    except Exception as ex:  # noqa: BLE001 - one executor failing must not stop the others
        e.error = _one_line(ex)
        e.fn = None
    e.load_s = time.perf_counter() - t0
    return e


_PT2_EXPORT_S = {}


def _pt2_archive(zoo, case, args, kwargs, workdir):
    """(path, seconds the export took): the eager module exported with torch.export and
    packaged as NativeRT reads it (package_pt2, one program named "model"). Built once
    per case and work directory, so NativeRT, ep.module(), brisk (PT2) and their memory
    processes all run the same archive."""
    workdir = workdir or tempfile.mkdtemp(prefix="brisk-compare-")
    path = os.path.join(workdir, f"{case.model}.b{case.batch}.export.pt2")
    if not os.path.exists(path):
        from torch.export.pt2_archive._package import package_pt2
        t0 = time.perf_counter()
        module, _ = load_eager(zoo, case)
        with torch.no_grad():
            program = torch.export.export(module, tuple(args), kwargs)
        package_pt2(path, exported_programs={"model": program})
        _PT2_EXPORT_S[path] = time.perf_counter() - t0
    return path, _PT2_EXPORT_S.get(path, 0.0)


def _one_line(ex):
    text = " ".join(str(ex).split())
    return f"{type(ex).__name__}: {text[:300]}{'...' if len(text) > 300 else ''}"


# --- Other runtimes -------------------------------------------------------------------
#
# Each gets the model's eager source with the .pt's weights (load_eager), is built the
# way its documentation recommends for one-thread CPU latency, and nothing of another
# runtime's graph is edited by hand. Build time (export + compile, and for Inductor its
# first call, where it compiles) is the executor's load_s. Artifacts (the ONNX file, the
# AOTInductor package) go to a work directory that the memory processes reuse, so that
# they measure running, not exporting.

def _flat_tensors(obj):
    """A model's inputs or outputs as the flat tensor list exporters use."""
    if isinstance(obj, torch.Tensor):
        return [obj]
    if isinstance(obj, dict):
        return [t for k in obj for t in _flat_tensors(obj[k])]
    if isinstance(obj, (list, tuple)):
        return [t for x in obj for t in _flat_tensors(x)]
    return []


def _export_onnx(module, case, args, kwargs, workdir, stem=None):
    """The ONNX file of the model (named after `stem`, default the case's model), exported
    once per work directory, and the exporter's name. torch.onnx.export's default in torch
    2.14 is the torch.export-based exporter (which needs onnxscript); the TorchScript-based
    one (dynamo=False) is what a user falls back to when that fails, and so does this."""
    path = os.path.join(workdir, f"{stem or case.model}.b{case.batch}.onnx")
    tag = path + ".exporter"
    if os.path.exists(path) and os.path.exists(tag):
        with open(tag) as f:
            return path, f.read().strip()
    import warnings
    errors = []
    for exporter, flags in (("torch.export-based (dynamo=True)", dict(dynamo=True)),
                            ("TorchScript-based (dynamo=False)", dict(dynamo=False))):
        try:
            with warnings.catch_warnings(), contextlib.redirect_stdout(sys.stderr), _quiet_logging():
                warnings.simplefilter("ignore")
                torch.onnx.export(module, tuple(args), path, kwargs=kwargs or None, external_data=False,
                                  **flags)
            with open(tag, "w") as f:
                f.write(exporter + (f" (dynamo=True failed: {errors[0]})" if errors else ""))
            with open(tag) as f:
                return path, f.read().strip()
        except Exception as ex:  # noqa: BLE001 - try the other exporter, report both
            errors.append(_one_line(ex))
    raise RuntimeError("torch.onnx.export failed with both exporters: " + " | ".join(errors))


@contextlib.contextmanager
def _quiet_logging():
    """The exporter's optimizer logs a line per skipped constant fold: not our news."""
    import logging
    logging.disable(logging.WARNING)
    try:
        yield
    finally:
        logging.disable(logging.NOTSET)


def _onnx_caveats(path):
    """What in the exported graph a user should know about: control flow (an ONNX Loop
    runs its body through the interpreter-like subgraph executor, node by node)."""
    import onnx
    graph = onnx.load(path, load_external_data=False).graph
    kinds = collections.Counter(n.op_type for n in graph.node)
    out = []
    for op in ("Loop", "Scan", "If"):
        if kinds.get(op):
            out.append(f"the exported ONNX graph has {kinds[op]} {op} node{'s' if kinds[op] > 1 else ''}")
    return out, sum(kinds.values())


def build_onnxruntime(e, zoo, case, args, kwargs, workdir, int8=False):
    module, _ = load_eager(zoo, case)
    with torch.no_grad():
        path, exporter = _export_onnx(module, case, args, kwargs, workdir)
    caveats, nodes = _onnx_caveats(path)
    if int8:
        # ONNX Runtime's dynamic int8: per-channel int8 weights, activations quantized per
        # call (MatMul / Gemm; what brisk's int8_dynamic does to linear layers).
        from onnxruntime.quantization import QuantType, quantize_dynamic
        qpath = path[:-len(".onnx")] + ".int8.onnx"
        quantize_dynamic(path, qpath, weight_type=QuantType.QInt8, per_channel=True)
        path = qpath
        exporter += ", onnxruntime.quantization.quantize_dynamic (QInt8, per channel)"
    _onnxruntime_session(e, path, args, kwargs)
    e.note = (f"torch.onnx.export, {exporter}, opset {_onnx_opset(path)}, {nodes} nodes; {e.note}")
    e.caveats += caveats + _fast_path_caveats(module)
    if "dynamo=True failed" in exporter:
        e.caveats.append("the default (torch.export-based) ONNX exporter fails; TorchScript-based exporter used")


def _onnxruntime_session(e, path, args, kwargs):
    """e runs the ONNX file `path` in an onnxruntime session set up for one-thread latency."""
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    names = [i.name for i in sess.get_inputs()]
    tensors = _flat_tensors((args, kwargs))
    if len(names) != len(tensors):
        raise RuntimeError(f"the ONNX graph takes {len(names)} inputs, the model {len(tensors)} tensors")
    # numpy views of the same tensors: no copy per call, as a user feeding torch tensors would.
    feed = {n: t.numpy() for n, t in zip(names, tensors)}
    e.keep.append(sess)
    e.fn = lambda: sess.run(None, feed)
    e.to_torch = lambda out: [torch.from_numpy(a) for a in out]
    e.note = (f"onnxruntime {ort.__version__} CPUExecutionProvider, ORT_ENABLE_ALL, intra/inter_op_num_threads=1, "
              "ORT_SEQUENTIAL")


def _fast_path_caveats(module):
    if any(isinstance(m, torch.nn.TransformerEncoderLayer) for m in module.modules()):
        return ["eager runs nn.TransformerEncoderLayer's fused fast path (aten::_transformer_encoder_layer_fwd); "
                "ONNX has no such op: the export holds the unfused ops (MatMul, Softmax, LayerNormalization, ...)"]
    return []


def _onnx_opset(path):
    import onnx
    m = onnx.load(path, load_external_data=False)
    return max((o.version for o in m.opset_import if o.domain in ("", "ai.onnx")), default="?")


def build_openvino(e, zoo, case, args, kwargs, workdir, precision="f32"):
    import openvino as ov
    module, _ = load_eager(zoo, case)
    source = "the PyTorch module (ov.convert_model, example_input)"
    try:
        import warnings
        with torch.no_grad(), warnings.catch_warnings(), contextlib.redirect_stdout(sys.stderr):
            warnings.simplefilter("ignore")
            model = ov.convert_model(module, example_input=tuple(args) if not kwargs else (tuple(args), kwargs))
    except Exception as ex:  # noqa: BLE001 - OpenVINO's documented alternative: the ONNX file
        with torch.no_grad():
            path, _ = _export_onnx(module, case, args, kwargs, workdir)
        model = ov.convert_model(path)
        source = "the ONNX file (converting the PyTorch module failed)"
        e.caveats.append(f"ov.convert_model fails on the PyTorch module ({_one_line(ex)[:120]}); "
                         "converted from the ONNX export")
    _openvino_compile(e, model, args, kwargs, precision, source)


def _openvino_compile(e, model, args, kwargs, precision, source):
    """e runs the OpenVINO model `model` (converted from `source`), compiled for one-thread
    CPU latency."""
    import openvino as ov
    core = ov.Core()
    # Latency, one stream, one thread, and fp32 arithmetic: OpenVINO may otherwise pick
    # bf16 on CPUs that have it, and every other executor here computes in fp32.
    # (openvino_bf16 asks for bf16 instead: its reduced-precision row.)
    config = {"PERFORMANCE_HINT": "LATENCY", "NUM_STREAMS": "1", "INFERENCE_NUM_THREADS": "1",
              "INFERENCE_PRECISION_HINT": precision}
    compiled = core.compile_model(model, "CPU", config)
    request = compiled.create_infer_request()
    inputs = [t.numpy() for t in _flat_tensors((args, kwargs))]
    e.keep += [core, compiled, request]
    # share_inputs: no copy of the inputs per call (a user with fixed input buffers).
    e.fn = lambda: request.infer(inputs, share_inputs=True)
    e.to_torch = lambda out: [torch.from_numpy(out[k].copy()) for k in compiled.outputs]
    e.note = (f"openvino {ov.get_version().split('-')[0]}, converted from {source}; CPU, "
              f"PERFORMANCE_HINT=LATENCY, NUM_STREAMS=1, INFERENCE_NUM_THREADS=1, INFERENCE_PRECISION_HINT={precision}")


def inductor_mode():
    """max-autotune-no-cudagraphs (benchmarks GEMM/conv choices at compile time) unless
    BRISK_COMPARE_INDUCTOR_MODE says otherwise: --quick uses the default mode."""
    return os.environ.get("BRISK_COMPARE_INDUCTOR_MODE", "max-autotune-no-cudagraphs")


def build_inductor(e, zoo, case, args, kwargs, workdir):
    import torch._inductor.config as inductor_config
    module, _ = load_eager(zoo, case)
    # Freezing folds the weights into the graph as constants (and lets Inductor
    # prepack them for oneDNN/MKL), as torch's own CPU inference advice says.
    inductor_config.freezing = True
    mode = inductor_mode()
    compiled = torch.compile(module, mode=None if mode == "default" else mode)
    e.fn = lambda: compiled(*args, **kwargs)
    from torch._dynamo.utils import counters
    counters.clear()
    with torch.no_grad():
        e.fn()  # compiles: part of the build time a user pays
    e.keep += [module, compiled]
    e.note = f"torch.compile(mode={mode!r}), torch._inductor.config.freezing=True; run under torch.no_grad()"
    e.caveats += _dynamo_caveats(module, counters)


def _dynamo_caveats(module, counters):
    """What TorchDynamo left to eager: a user's torch.compile gives exactly this."""
    import torch._dynamo.config as dynamo_config
    out = []
    rnn = [type(m).__name__ for m in module.modules() if isinstance(m, torch.nn.RNNBase)]
    if rnn and not getattr(dynamo_config, "allow_rnn", True):
        out.append(f"TorchDynamo does not trace {rnn[0]} (torch._dynamo.config.allow_rnn=False): "
                   "it runs in eager between compiled graphs")
    graphs = counters["stats"].get("unique_graphs", 0)
    breaks = sum(counters["graph_break"].values())
    if graphs == 0:
        out.append("TorchDynamo compiled no graph: the model runs in eager")
    elif breaks:
        reason = " ".join(str(next(iter(counters["graph_break"]))).split())[:160]
        out.append(f"{breaks} graph break{'s' if breaks > 1 else ''}, {graphs} compiled graph"
                   f"{'s' if graphs > 1 else ''} (first break: {reason})")
    return out


def build_aotinductor(e, zoo, case, args, kwargs, workdir):
    module, _ = load_eager(zoo, case)
    path = os.path.join(workdir, f"{case.model}.b{case.batch}.pt2")
    configs = {"freezing": True, "max_autotune": inductor_mode() == "max-autotune-no-cudagraphs"}
    if not os.path.exists(path):
        with torch.no_grad():
            program = torch.export.export(module, tuple(args), kwargs)
            torch._inductor.aoti_compile_and_package(program, package_path=path, inductor_configs=configs)
    runner = torch._inductor.aoti_load_package(path)
    e.keep.append(runner)
    e.fn = lambda: runner(*args, **kwargs)
    e.note = (f"torch.export.export, then torch._inductor.aoti_compile_and_package(inductor_configs={configs}), "
              "loaded with aoti_load_package")


def build_brisk_aoti(e, zoo, case, args, kwargs, workdir, partial):
    """brisk on a NativeRT archive with AOTInductor-compiled code: the whole program
    (PyTorch's own lowering, under the aotinductor row's inductor configs, so the two rows
    run the same generated code), or what brisk.lower's measured default partitioner
    writes under the same configs (kept regions, the whole program, or neither). Compile
    time is recorded as load time, as for aotinductor."""
    import brisk
    from torch.nativert.backends._lower_utils import lower_exported_program, package_nativert_with_aoti_delegate
    module, _ = load_eager(zoo, case)
    path = os.path.join(workdir, f"{case.model}.b{case.batch}.{'partial' if partial else 'whole'}.aoti.pt2")
    configs = {"freezing": True, "max_autotune": inductor_mode() == "max-autotune-no-cudagraphs"}
    chosen = ""
    with torch.no_grad():
        program = torch.export.export(module, tuple(args), kwargs)
        if os.path.exists(path):  # the memory process reuses the timing process's archive
            chosen = "; archive of the timing run"
        elif partial:
            # Under the aotinductor row's configs, as the whole-graph row: every region, and
            # the whole-program candidate, is then the code that row runs.
            with torch._inductor.config.patch(configs):
                report = brisk.lower(program, path)
            kept = [r for r in report if r.kept]
            chosen = (f"; {len(kept)} of {len(report)} candidates compiled" +
                      "".join(f", {r.key} ({len(r.nodes)} nodes, {r.brisk_us:.1f} -> {r.aoti_us:.1f} us)"
                              for r in kept) +
                      "".join(f"; {n}" for n in {r.note for r in report if r.note}) if report
                      else "; no candidate regions")
        else:
            with torch._inductor.config.patch(configs):
                delegate, files = lower_exported_program(program, "model", "aoti")
            package_nativert_with_aoti_delegate(path, "model", "aoti", program, delegate, files)
    m = brisk.load(path)
    e.keep.append(m)
    e.fn = lambda: m(*args, **kwargs)
    e.note = ("brisk.lower (measured default partitioner)" + chosen if partial else
              f"lower_exported_program under inductor_configs={configs} + package_nativert_with_aoti_delegate")


BUILDERS = {
    "onnxruntime": build_onnxruntime,
    "openvino": build_openvino,
    "inductor": build_inductor,
    "aotinductor": build_aotinductor,
}


# --- Static int8 (--precision int8_static) --------------------------------------------
#
# brisk and AOTInductor run the zoo's PT2E program (<model>.int8.pt2: torchao's
# X86InductorQuantizer, calibrated on the zoo's inputs; see tools/zoo/README.md). ONNX
# Runtime and OpenVINO quantize the same fp32 model themselves, the way their
# documentation recommends, calibrated on the same inputs: quantize_static's QDQ format.

_zoo_pt2_module = None


def zoo_models_pt2(zoo):
    """tools/zoo/models_pt2.py: the fp32 model each PT2E program was quantized from and
    its calibration inputs. It imports models.py as `models`, from the zoo directory."""
    global _zoo_pt2_module
    if _zoo_pt2_module is None:
        if not os.path.exists(os.path.join(zoo, "models_pt2.py")):
            raise FileNotFoundError(f"no models_pt2.py in {zoo}")
        sys.path.insert(0, zoo)
        import models_pt2
        _zoo_pt2_module = models_pt2
    return _zoo_pt2_module


def _int8_program(zoo, case):
    path = zoo_file(zoo, case, INT8_STATIC_SUFFIX)
    if not os.path.exists(path):
        raise FileNotFoundError(f"the zoo has no PT2E int8 program for {case.model} ({os.path.basename(path)})")
    return path


_INT8_FLOAT = {}


def int8_float_model(zoo, case):
    """The fp32 module the zoo's <model>.int8.pt2 was quantized from (the zoo model, for
    mobilenet_v2 with BatchNorm statistics re-estimated), built once per model."""
    _int8_program(zoo, case)
    if case.model not in _INT8_FLOAT:
        module = zoo_models_pt2(zoo).int8_float_model(case.model)
        for p in module.parameters():
            p.requires_grad_(False)
        _INT8_FLOAT[case.model] = module
    return _INT8_FLOAT[case.model]


def build_brisk_int8_static(e, zoo, case, args, kwargs, workdir):
    import brisk
    path = _int8_program(zoo, case)
    m = brisk.load(path)
    e.keep.append(m)
    e.fn = lambda: m(*args, **kwargs)
    e.note = f"brisk.load({os.path.basename(path)}), default options"


def _quantized_ops_registered():
    # torch.ops.quantized_decomposed (the PT2E programs' quantize / dequantize ops) is
    # defined in Python: loading a program needs it registered first.
    import torch.ao.quantization.fx._decomposed  # noqa: F401


def build_aotinductor_int8_static(e, zoo, case, args, kwargs, workdir):
    """AOTInductor on the PT2E program, re-exported at the case's static shapes (as the
    fp32 row exports at them). Inductor lowers the dequantize -> conv / linear ->
    quantize patterns to oneDNN's int8 kernels (onednn.qconv_pointwise, qlinear_pointwise)
    with freezing on, by passes that torchao registers when its x86 quantizer module is
    imported (torch 2.14 no longer has them): without the import it computes the same
    program in fp32, dequantizing the weights on every call."""
    _quantized_ops_registered()
    import torchao.quantization.pt2e.quantizer.x86_inductor_quantizer  # noqa: F401  the lowering passes
    path = os.path.join(workdir, f"{case.model}.b{case.batch}.int8.aoti.pt2")
    configs = {"freezing": True, "max_autotune": inductor_mode() == "max-autotune-no-cudagraphs"}
    if not os.path.exists(path):
        with torch.no_grad():
            program = torch.export.export(torch.export.load(_int8_program(zoo, case)).module(), tuple(args), kwargs)
            torch._inductor.aoti_compile_and_package(program, package_path=path, inductor_configs=configs)
    runner = torch._inductor.aoti_load_package(path)
    e.keep.append(runner)
    e.fn = lambda: runner(*args, **kwargs)
    e.note = (f"torch.export.load({os.path.basename(_int8_program(zoo, case))}), re-exported at batch {case.batch}, "
              f"torch._inductor.aoti_compile_and_package(inductor_configs={configs}), loaded with aoti_load_package")


class _CalibrationReader:
    """onnxruntime.quantization's CalibrationDataReader over the zoo's calibration rows,
    in batches of the exported graph's (static) batch size; the last batch wraps around to
    the first rows. MinMax calibration keeps each tensor's min and max over all batches,
    and a repeated row repeats values already seen, so every batch size calibrates the
    same ranges."""

    def __init__(self, input_name, rows, batch):
        n = rows.shape[0]
        chunks = -(-n // batch)
        order = torch.arange(chunks * batch) % n
        self._batches = iter([{input_name: rows[order[i * batch:(i + 1) * batch]].numpy()} for i in range(chunks)])

    def get_next(self):
        return next(self._batches, None)


def _onnx_static_int8(zoo, case, args, kwargs, workdir):
    """(QDQ ONNX file, how it was made): the fp32 model exported to ONNX, pre-processed
    and quantized by onnxruntime.quantization.quantize_static, once per work directory."""
    from onnxruntime.quantization import QuantFormat, QuantType, quant_pre_process, quantize_static
    module = int8_float_model(zoo, case)
    with torch.no_grad():
        path, exporter = _export_onnx(module, case, args, kwargs, workdir, stem=case.model + ".int8-float")
    qpath = path[:-len(".onnx")] + ".qdq.onnx"
    if not os.path.exists(qpath):
        import onnx
        prepped = path[:-len(".onnx")] + ".prep.onnx"
        quant_pre_process(path, prepped)
        rows = torch.cat(zoo_models_pt2(zoo).int8_calibration_inputs(case.model))
        reader = _CalibrationReader(onnx.load(prepped).graph.input[0].name, rows, case.batch)
        quantize_static(prepped, qpath, reader, quant_format=QuantFormat.QDQ, per_channel=True,
                        activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8)
    return qpath, (f"torch.onnx.export ({exporter}) of the fp32 model, quant_pre_process, "
                   "quantize_static (QDQ, per-channel QInt8 weights, QUInt8 activations, MinMax calibration on "
                   "the zoo's inputs)")


def build_onnxruntime_int8_static(e, zoo, case, args, kwargs, workdir):
    path, how = _onnx_static_int8(zoo, case, args, kwargs, workdir)
    _onnxruntime_session(e, path, args, kwargs)
    e.note = f"{how}, opset {_onnx_opset(path)}; {e.note}"


def build_openvino_int8_static(e, zoo, case, args, kwargs, workdir):
    """OpenVINO runs a QDQ model's quantized ops in int8 (its CPU plugin fuses the
    QuantizeLinear / DequantizeLinear pairs into int8 convolutions and matmuls)."""
    import openvino as ov
    path, how = _onnx_static_int8(zoo, case, args, kwargs, workdir)
    _openvino_compile(e, ov.convert_model(path), args, kwargs, "f32", f"the QDQ ONNX file ({how})")


INT8_STATIC_BUILDERS = {
    "brisk_int8_static": build_brisk_int8_static,
    "onnxruntime_int8_static": build_onnxruntime_int8_static,
    "openvino_int8_static": build_openvino_int8_static,
    "aotinductor_int8_static": build_aotinductor_int8_static,
}


# --- Comparing outputs ---------------------------------------------------------------

def compare_outputs(got, expected):
    """(agrees, max abs difference) of two outputs of one model; the difference is None
    when their structure (types, shapes, dtypes, keys) differs."""
    if isinstance(expected, torch.Tensor):
        if not isinstance(got, torch.Tensor) or got.shape != expected.shape or got.dtype != expected.dtype:
            return False, None
        if expected.numel() == 0:
            return True, 0.0
        diff = (got.double() - expected.double()).abs().max().item()
        return bool(torch.allclose(got, expected, rtol=RTOL, atol=ATOL, equal_nan=True)), diff
    if isinstance(expected, (tuple, list, dict)):
        if isinstance(expected, dict):
            if not isinstance(got, dict) or sorted(got) != sorted(expected):
                return False, None
            pairs = [(got[k], expected[k]) for k in expected]
        else:
            if not isinstance(got, (tuple, list)) or len(got) != len(expected):
                return False, None
            pairs = list(zip(got, expected))
        parts = [compare_outputs(g, x) for g, x in pairs]
        if any(d is None for _, d in parts):
            return False, None
        return all(ok for ok, _ in parts), max((d for _, d in parts), default=0.0)
    return got == expected, (0.0 if got == expected else None)


# --- Timing --------------------------------------------------------------------------

def time_block(e, seconds, min_iters):
    if e.block is not None:
        return e.block(seconds, min_iters)
    samples = []
    gc_was = gc.isenabled()
    gc.disable()  # a collection inside a block would be charged to whoever runs then
    try:
        with e.grad_ctx():
            start = time.perf_counter()
            while len(samples) < min_iters or time.perf_counter() - start < seconds:
                t0 = time.perf_counter_ns()
                e.fn()
                samples.append((time.perf_counter_ns() - t0) / 1e3)
    finally:
        if gc_was:
            gc.enable()
    return samples


def percentile(xs, q):
    xs = sorted(xs)
    if not xs:
        return float("nan")
    pos = q / 100 * (len(xs) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def selected_executors(spec):
    """--executors: a subset, in the table's order. The two references always run: eager
    (outputs are checked against it) and the interpreter (ratios are to it)."""
    if not spec:
        return [n for n in EXECUTORS if n not in REDUCED_EXECUTORS]
    want = {x.strip() for x in spec.split(",") if x.strip()}
    unknown = sorted(want - set(EXECUTORS))
    if unknown:
        raise SystemExit(f"compare: unknown executor(s) {', '.join(unknown)} (known: {', '.join(EXECUTORS)})")
    return [n for n in EXECUTORS if n in want or n in (OUTPUT_REFERENCE, REFERENCE)]


def _output_range(expected):
    ts = [t for t in _flat_tensors(expected) if t.is_floating_point() and t.numel()]
    return max((t.max() - t.min()).item() for t in ts) if ts else 0.0


def check_output(e, expected):
    """Runs e once and compares its output with the reference's (other runtimes return
    flat tensor lists: compared with the reference's tensors in the same order)."""
    with e.grad_ctx():
        got = e.fn()
    if e.to_torch is not None:
        return compare_outputs(e.to_torch(got), _flat_tensors(expected))
    return compare_outputs(got, expected)


def run_case(case, zoo, opts, log, workdir):
    args, kwargs = load_inputs(zoo, case)
    execs = []
    for n in opts.executor_list:
        execs.append(make_executor(n, zoo, case, args, kwargs, workdir))
        if execs[-1].fn is not None and n in OTHER_RUNTIMES:
            log(f"  {n}: built in {execs[-1].load_s:.1f} s")
    by_name = {e.name: e for e in execs}
    ref = by_name[REFERENCE]
    if ref.fn is None:
        raise SystemExit(f"compare: the interpreter cannot load {case.model}: {ref.error}")
    out_ref = by_name[OUTPUT_REFERENCE] if by_name[OUTPUT_REFERENCE].fn is not None else ref
    with out_ref.grad_ctx():
        expected = out_ref.fn()
    live = []
    for e in execs:
        if e.fn is None:
            log(f"  {e.name}: not available ({e.error})")
            continue
        try:
            kind = REDUCED_EXECUTORS.get(e.name)
            want, what = expected, "eager fp32"
            if kind == "int8_static":
                want, what = int8_static_reference(zoo, case, args, kwargs), "the fp32 model it was quantized from"
            e.agrees, e.max_abs_diff = check_output(e, want)
            if kind and e.max_abs_diff is not None:
                span = _output_range(want)
                e.agrees = e.max_abs_diff <= REDUCED_ERROR_BY_KIND.get(kind, REDUCED_ERROR) * span
                e.note = (e.note + "; " if e.note else "") + (
                    f"largest difference from {what}: {e.max_abs_diff / max(span, 1e-30):.2%} "
                    "of the output's range")
        except Exception as ex:  # noqa: BLE001
            e.error = _one_line(ex)
            log(f"  {e.name}: fails on the inputs ({e.error})")
            continue
        live.append(e)
    if "brisk" in by_name and by_name["brisk"] in live:
        cpp = cpp_executor(by_name["brisk"], args, kwargs)
        execs.append(cpp)
        live.append(cpp)

    for e in live:  # warm-up: profiling executors optimise after a few runs
        time_block(e, opts.warmup_seconds, opts.warmup_iters)
    for r in range(opts.rounds):
        k = r % len(live)
        for e in live[k:] + live[:k]:
            block = time_block(e, opts.seconds, opts.min_iters)
            e.samples.extend(block)
            e.round_p50.append(statistics.median(block))

    result = collections.OrderedDict()
    result["model"] = case.model
    result["batch"] = case.batch
    result["inputs"] = f"{case.model}.{case.inputs}.pt"
    result["executors"] = collections.OrderedDict()
    for e in execs:
        d = collections.OrderedDict(label=LABELS[e.name], available=e in live, error=e.error,
                                    load_s=round(e.load_s, 3))
        if e.note:
            d["source"] = e.note
        if e.caveats:
            d["caveats"] = e.caveats
        if e in live:
            ratios = [p / q for p, q in zip(e.round_p50, ref.round_p50)] if ref in live else []
            d.update(
                iters=len(e.samples),
                p50_us=statistics.median(e.samples),
                p90_us=percentile(e.samples, 90),
                mean_us=statistics.fmean(e.samples),
                min_us=min(e.samples),
                round_p50_us=e.round_p50,
                ratio_rounds=ratios,
                ratio=statistics.median(ratios) if ratios else None,
                agrees=e.agrees,
                max_abs_diff=e.max_abs_diff,
            )
        result["executors"][e.name] = d

    result["output_reference"] = out_ref.name
    result["best_other"] = best_other(result["executors"])
    result["pt2_ratio"] = pt2_ratio(result["executors"])
    if "brisk" in by_name and by_name["brisk"] in live:
        result["brisk_stats"] = by_name["brisk"].keep[0].stats()
    del execs, live, by_name, ref
    gc.collect()
    return result


def int8_static_reference(zoo, case, args, kwargs):
    """What the static int8 rows are checked against: the fp32 model their programs were
    quantized from, on the case's inputs."""
    with torch.no_grad():
        return int8_float_model(zoo, case)(*args, **kwargs)


def best_other(executors):
    """The fastest executor other than brisk whose outputs agree (a runtime that computes
    something else is not an alternative), and brisk's latency ratio to it: the median of
    per-round ratios, like the ratios to the interpreter."""
    cands = [(d["p50_us"], n) for n, d in executors.items()
             if n in OTHERS and d["available"] and d.get("agrees")]
    if not cands:
        return None
    p50, name = min(cands)
    out = collections.OrderedDict(name=name, p50_us=p50)
    b = executors.get("brisk", {})
    if b.get("available"):
        rounds = [x / y for x, y in zip(b["round_p50_us"], executors[name]["round_p50_us"])]
        out["brisk_ratio_rounds"] = rounds
        out["brisk_ratio"] = statistics.median(rounds)
    return out


def pt2_ratio(executors):
    """brisk (PT2) against ep.module() on the same archive: the median of per-round
    latency ratios (below 1 = brisk faster), or None unless both ran."""
    b, m = executors.get("brisk_pt2", {}), executors.get("ep_module", {})
    if not (b.get("available") and m.get("available")):
        return None
    rounds = [x / y for x, y in zip(b["round_p50_us"], m["round_p50_us"])]
    return collections.OrderedDict(ratio=statistics.median(rounds), ratio_rounds=rounds)


# --- Memory (one process per executor) -----------------------------------------------

def _status_kib(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise RuntimeError(f"no {field} in /proc/self/status")


def _reset_peak():
    # Linux >= 4.0: writing 5 resets VmHWM to the current RSS.
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")


def memory_child(executor, cid, zoo, iters, workdir):
    torch.set_num_threads(1)
    case = select_cases(cid, False)[0]
    args, kwargs = load_inputs(zoo, case)
    e = make_executor(executor, zoo, case, args, kwargs, workdir)
    if e.fn is None:
        print(json.dumps({"error": e.error}))
        return
    gc.collect()
    with contextlib.suppress(Exception):
        import ctypes
        ctypes.CDLL("libc.so.6").malloc_trim(0)  # start from the loaded model, not load's garbage
    base = _status_kib("VmRSS")
    _reset_peak()
    with e.grad_ctx():
        e.fn()
        first = _status_kib("VmHWM") - base
        _reset_peak()
        for _ in range(iters - 1):
            e.fn()
        steady = _status_kib("VmHWM") - base
    print(json.dumps({"baseline_kib": base, "first_peak_kib": first, "steady_peak_kib": steady,
                      "peak_kib": max(first, steady), "end_kib": _status_kib("VmRSS") - base}))


def _memory_env(malloc):
    env = dict(os.environ)
    env[MALLOC_ENV] = malloc
    if malloc == MALLOC_DEFAULT:
        env.pop("GLIBC_TUNABLES", None)
    return env


def measure_memory(case, zoo, opts, log, workdir):
    """{malloc setting: {executor: peak}}: one process per executor and setting. The
    work directory holds the ONNX files and AOTInductor packages the timing process
    made, and Inductor's cache: the processes measure running, not building."""
    out = collections.OrderedDict()
    for malloc in (MALLOC_TUNED, MALLOC_DEFAULT):
        per = out[malloc] = collections.OrderedDict()
        for name in opts.executor_list:
            cmd = [sys.executable, os.path.abspath(__file__), "--memory-child", name, "--models", case_id(case),
                   "--zoo", zoo, "--memory-iters", str(opts.memory_iters), "--workdir", workdir]
            try:
                p = subprocess.run(cmd, capture_output=True, text=True, timeout=900, env=_memory_env(malloc))
                line = (p.stdout.strip().splitlines() or [""])[-1]
                per[name] = json.loads(line) if p.returncode == 0 and line.startswith("{") else {
                    "error": f"exit {p.returncode}: {(p.stderr.strip().splitlines() or [''])[-1]}"}
            except Exception as ex:  # noqa: BLE001
                per[name] = {"error": f"{type(ex).__name__}: {ex}"}
        log(f"  memory ({malloc}): " + ", ".join(
            f"{n} +{m['peak_kib'] / 1024:.1f} MiB" if "peak_kib" in m else f"{n} {m.get('error')}"
            for n, m in per.items()))
    return out


# --- Machine and settings ------------------------------------------------------------

def machine_info():
    info = collections.OrderedDict()
    model, flags = "unknown", set()
    with contextlib.suppress(OSError), open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name") and model == "unknown":
                model = line.split(":", 1)[1].strip()
            elif line.startswith("flags") and not flags:
                flags = set(line.split(":", 1)[1].split())
    info["cpu"] = model
    info["cpu_flags"] = [x for x in ("avx2", "fma", "avx512f", "avx512_vnni", "avx512_bf16", "amx_tile") if x in flags]
    info["nproc"] = len(os.sched_getaffinity(0))
    info["cpu_count"] = os.cpu_count()
    with contextlib.suppress(OSError), open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemTotal:"):
                info["memory_gib"] = round(int(line.split()[1]) / 1024 / 1024, 1)
    info["kernel"] = platform.release()
    info["os"] = _os_release()
    info["python"] = platform.python_version()
    info["torch"] = torch.__version__
    info["kernels"] = _kernel_libraries()
    return info


def _kernel_libraries():
    """The libraries behind ATen's CPU kernels in this torch build, and its CPU dispatch."""
    import re
    out = collections.OrderedDict()
    config = torch.__config__.show()
    for label, pattern in (("MKL", r"Math Kernel Library Version ([\w.]+)"), ("oneDNN", r"MKL-DNN v([\w.]+)")):
        found = re.search(pattern, config)
        if found:
            out[label] = found.group(1)
    with contextlib.suppress(Exception):
        out["ATen CPU capability"] = torch.backends.cpu.get_cpu_capability()
    return out


def _os_release():
    with contextlib.suppress(OSError), open("/etc/os-release") as f:
        for line in f:
            if line.startswith("PRETTY_NAME="):
                return line.split("=", 1)[1].strip().strip('"')
    return platform.platform()


def settings_info():
    s = collections.OrderedDict((k, os.environ.get(k, "unset")) for k in SETTINGS_ENV)
    s["torch.get_num_threads"] = torch.get_num_threads()
    s["torch.get_num_interop_threads"] = torch.get_num_interop_threads()
    return s


def runtime_versions():
    """Versions of the other runtimes ("not installed" when an import fails: their
    executors then report the ImportError per case)."""
    out = collections.OrderedDict(torch=torch.__version__)
    for name in ("onnxruntime", "openvino", "onnx", "onnxscript"):
        try:
            mod = __import__(name)
            out[name] = getattr(mod, "__version__", "?")
        except Exception as ex:  # noqa: BLE001
            out[name] = f"not installed ({type(ex).__name__})"
    out["nativert"] = _nativert_status()
    return out


def _nativert_status():
    """NativeRT's C++ runner is compiled into some torch builds only; the PyPI wheel
    registers a stub class in its place, which cannot be constructed."""
    runner = getattr(getattr(torch._C, "_nativert", None), "PyModelRunner", None)
    if runner is None:
        return "not installed (torch._C._nativert.PyModelRunner does not exist in this torch)"
    if not hasattr(runner, "run"):
        return ("not installed (this torch build registers torch._C._nativert.PyModelRunner as a stub "
                "without a constructor or run(): NativeRT's C++ runtime is not compiled in)")
    return torch.__version__


def _loadavg():
    with contextlib.suppress(OSError), open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])
    return "unknown"


def git_describe(workspace):
    try:
        rev = subprocess.run(["git", "-C", workspace, "rev-parse", "--short", "HEAD"], capture_output=True,
                             text=True, timeout=10).stdout.strip()
        return rev or "unknown"
    except Exception:  # noqa: BLE001
        return "unknown"


# --- Reports -------------------------------------------------------------------------

def _fmt_s(x):
    return f"{x:.2f}" if x < 10 else f"{x:.0f}"


def _fmt_us(x):
    return "—" if x is None else (f"{x:.0f}" if x >= 100 else f"{x:.1f}")


DESCRIPTIONS = collections.OrderedDict([
    ("eager", "the model's Python source (tools/zoo/models.py, weights from the .pt) under "
              "`torch.inference_mode()`"),
    ("interpreter", "the TorchScript interpreter on `torch.jit.freeze(module)`"),
    ("interpreter_ofi", "the interpreter on `torch.jit.optimize_for_inference(module)`"),
    ("static_runtime", "`torch._C._jit_to_static_module(frozen._c)`, called with the GIL released "
                       "(tools/bench/sr_shim.cc)"),
    ("onnxruntime", "`torch.onnx.export` of the eager module (the default, torch.export-based exporter; "
                    "the TorchScript-based one where that fails), `onnxruntime.InferenceSession` on the "
                    "CPUExecutionProvider with `ORT_ENABLE_ALL`, `intra_op_num_threads=1`, "
                    "`inter_op_num_threads=1`, `ORT_SEQUENTIAL`; fed numpy views of the input tensors"),
    ("openvino", "`openvino.convert_model(module, example_input=...)` (the ONNX file where that fails), "
                 "`compile_model` on CPU with `PERFORMANCE_HINT=LATENCY`, `NUM_STREAMS=1`, "
                 "`INFERENCE_NUM_THREADS=1`, `INFERENCE_PRECISION_HINT=f32` (fp32 like every other "
                 "executor); one infer request, `share_inputs=True`"),
    ("inductor", "`torch.compile(module, mode=MODE)` with `torch._inductor.config.freezing=True`, under "
                 "`torch.no_grad()`; the build time includes the first call, where it compiles"),
    ("aotinductor", "`torch.export.export`, `torch._inductor.aoti_compile_and_package` with "
                    "`inductor_configs={freezing: True, max_autotune: MAX}`, loaded with "
                    "`torch._inductor.aoti_load_package`"),
    ("nativert", "`torch._C._nativert.PyModelRunner(archive, \"model\")` on the PT2 archive brisk (PT2) runs"),
    ("ep_module", "`torch.export.load(archive).module()` on the PT2 archive brisk (PT2) runs, under "
                  "`torch.no_grad()`"),
    ("brisk", "the brisk binding (`brisk.load`, default options) on the TorchScript file"),
    ("brisk_pt2", "the brisk binding on a PT2 archive: `torch.export.export` of the eager module, "
                  "packaged with `package_pt2(f, exported_programs={\"model\": ep})`"),
    ("brisk_nodelegates", "the brisk binding on the TorchScript file with `use_delegates=False`: brisk's "
                          "own kernels, no delegate backend"),
    ("brisk_nofusion", "the brisk binding on the TorchScript file with the elementwise fusion pass "
                       "`ops_cpu.fuse_pointwise` disabled"),
    ("brisk_int8", "reduced precision (`--precision int8`): the brisk binding on the PT2 archive with "
                   "`precision=[\"int8_dynamic\"]` (linear layers on per-channel int8 weights, activations "
                   "quantized per call); never a best other runtime, outputs within 5% of the output's range"),
    ("brisk_fp16", "reduced precision (`--precision fp16`): the brisk binding on the PT2 archive with "
                   "`precision=[\"fp16_weights\"]` (linear layers on fp16 weights, fp32 arithmetic)"),
    ("brisk_bf16", "reduced precision (`--precision bf16`): the brisk binding on the PT2 archive with "
                   "`precision=[\"bf16\"]` (the oneDNN delegate's convolutions and linear layers in bf16, fp32 accumulation)"),
    ("onnxruntime_int8", "reduced precision (`--precision int8`): ONNX Runtime as above on the export "
                         "after `onnxruntime.quantization.quantize_dynamic` (QInt8 weights, per channel)"),
    ("openvino_bf16", "reduced precision (`--precision bf16`): OpenVINO as above with "
                      "`INFERENCE_PRECISION_HINT=bf16`"),
    ("brisk_int8_static", "static int8 (`--precision int8_static`): the brisk binding on the zoo's PT2E program "
                          "`<model>.int8.pt2` (torchao `prepare_pt2e` / `convert_pt2e` with `X86InductorQuantizer`'s "
                          "default config: per-channel int8 weights, uint8 activations, calibrated on the zoo's "
                          "inputs); the program is quantized, no option needed. Static int8 rows are checked against "
                          "the fp32 model the program was quantized from, within 25% of the output's range"),
    ("onnxruntime_int8_static", "static int8: ONNX Runtime as above on the fp32 model's export after "
                                "`quant_pre_process` and `quantize_static` (QDQ format, per-channel QInt8 weights, "
                                "QUInt8 activations, MinMax calibration on the same zoo inputs)"),
    ("openvino_int8_static", "static int8: OpenVINO as above on that QDQ ONNX file (its CPU plugin runs the "
                             "quantized convolutions and matmuls in int8)"),
    ("aotinductor_int8_static", "static int8: AOTInductor as above on the PT2E program, re-exported at the case's "
                                "batch (`freezing: True`, and torchao's x86 quantizer imported, which registers the passes "
                                "that lower the quantized patterns to oneDNN's int8 kernels)"),
])


def _shown_executors(selected):
    """The table's columns: the selected executors, and brisk's C++ loop with brisk."""
    return [n for n in TIMED if n in selected or (n == "brisk_cpp" and "brisk" in selected)]


def _footnotes():
    """Numbers footnotes in order of first use; the same text keeps its number."""
    notes = collections.OrderedDict()

    def mark(text):
        if text not in notes:
            notes[text] = len(notes) + 1
        return f"[{notes[text]}]"
    return notes, mark


def _latency_cell(e, mark):
    if not e["available"]:
        return "n/a" + (mark(f"{e['label']}: {e['error']}") if e.get("error") else "")
    ratio = e.get("ratio")
    cell = f"{_fmt_us(e['p50_us'])} ({ratio:.2f})" if ratio is not None else _fmt_us(e["p50_us"])
    return cell + "".join(mark(f"{e['label']}: {c}") for c in e.get("caveats", []))


def _agreement(r):
    bad = []
    for n in EXECUTORS:
        e = r["executors"].get(n)
        if e is None or not e["available"]:
            continue
        if not e["agrees"]:
            bad.append(f"{n} differs (max {e['max_abs_diff']:.3g})" if e["max_abs_diff"] is not None
                       else f"{n} differs (structure)")
    return "yes" if not bad else "; ".join(bad)


def _best_cells(r):
    b = r.get("best_other")
    if not b:
        return ["—", "—"]
    ratio = f"{b['brisk_ratio']:.2f}" if "brisk_ratio" in b else "—"
    return [f"{LABELS[b['name']]} ({_fmt_us(b['p50_us'])})", ratio]


def _pt2_cell(r):
    p = r.get("pt2_ratio")
    return f"{p['ratio']:.2f}" if p else "—"


def markdown(report):
    m, s, o = report["machine"], report["settings"], report["options"]
    shown = _shown_executors(o.get("executors", EXECUTORS))
    lines = [f"# brisk vs PyTorch and other CPU runtimes — {report['date']}{' (quick)' if o['quick'] else ''}", ""]
    lines.append(f"Command: `bazel run //tools/bench:compare{' -- ' + ' '.join(o['argv']) if o['argv'] else ''}` "
                 f"(brisk at git {report['git']}).")
    lines.append("")
    lines.append(f"Machine: {m['cpu']} ({', '.join(m['cpu_flags'])}), {m['nproc']} CPUs (nproc), "
                 f"{m.get('memory_gib', '?')} GiB RAM; {m['os']}, Linux {m['kernel']}; "
                 f"PyTorch {m['torch']} from PyPI ({', '.join(f'{k} {v}' for k, v in m.get('kernels', {}).items())}), "
                 f"Python {m['python']}.")
    lines.append("")
    if report.get("versions"):
        lines.append("Runtimes: " + ", ".join(f"{k} {v}" for k, v in report["versions"].items()) + ".")
        lines.append("")
    lines.append("Settings: " + ", ".join(f"{k}={v}" for k, v in s.items()) + ".")
    lines.append("")
    lines.append(f"Load average (1/5/15 min) at start: {report.get('loadavg_start', '?')}, "
                 f"at end: {report.get('loadavg_end', '?')}.")
    lines.append("")
    lines.append(f"Method: {o['rounds']} rounds; each round times a ~{o['seconds'] * 1e3:.0f} ms block per executor "
                 "(at least "
                 f"{o['min_iters']} inferences) in an order that rotates every round, after warm-up; all executors "
                 "run in one process, on one thread each, and are called from Python on the same input tensors. "
                 "Outputs are checked against eager PyTorch's "
                 f"(allclose rtol={RTOL:g}, atol={ATOL:g}) before timing. Random weights.")
    lines.append("")
    mode = o.get("inductor_mode", "max-autotune-no-cudagraphs")
    lines.append("Executors:")
    lines.append("")
    for n in shown:
        if n in DESCRIPTIONS:
            text = DESCRIPTIONS[n].replace("MODE", repr(mode)).replace(
                "MAX", str(mode == "max-autotune-no-cudagraphs"))
            lines.append(f"- *{LABELS[n]}*: {text}.")
    lines.append("")
    lines.append("## Latency")
    lines.append("")
    lines.append("Median µs per inference; in parentheses, the median of per-round ratios to the interpreter's "
                 "latency (below 1 = faster than the interpreter). *brisk, C++ loop*: the same brisk Module timed by "
                 "`Module.benchmark` in the same rotation (no Python call per inference). *best other runtime*: the "
                 "fastest executor other than brisk whose outputs agree; *brisk / best other*: the median of "
                 "per-round ratios of brisk's (Python-called) latency to it (below 1 = brisk leads); *brisk (PT2) / "
                 "ep.module()*: the same for brisk and ep.module() on the same PT2 archive. [n]: notes below "
                 "the table.")
    lines.append("")
    notes, mark = _footnotes()
    pt2_col = "brisk_pt2" in shown and "ep_module" in shown
    head = ["model", "batch"] + [LABELS[n] for n in shown] + ["best other runtime (µs)", "brisk / best other"] + (
        ["brisk (PT2) / ep.module()"] if pt2_col else []) + ["outputs agree"]
    lines.append("| " + " | ".join(head) + " |")
    lines.append("|" + "---|" * len(head))
    for r in report["results"]:
        row = [r["model"], str(r["batch"])]
        for n in shown:
            row.append(_latency_cell(r["executors"].get(n, {"available": False, "label": LABELS[n]}), mark))
        row += _best_cells(r) + ([_pt2_cell(r)] if pt2_col else []) + [_agreement(r)]
        lines.append("| " + " | ".join(row) + " |")
    if notes:
        lines += [""] + [f"[{k}] {text}" + ("" if text.endswith(".") else ".") + "  " for text, k in notes.items()]
    lines += ["", "## Build time", ""]
    lines.append("Seconds from the .pt (or the model's source) to a callable, in the timing process: loading, "
                 "freezing, exporting, converting, compiling, and for Inductor its first call (where it compiles); "
                 "Inductor's cache starts empty.")
    lines.append("")
    built = [n for n in shown if n != "brisk_cpp"]
    head = ["model", "batch"] + [LABELS[n] for n in built]
    lines.append("| " + " | ".join(head) + " |")
    lines.append("|" + "---|" * len(head))
    for r in report["results"]:
        row = [r["model"], str(r["batch"])]
        for n in built:
            e = r["executors"].get(n)
            row.append("—" if e is None else _fmt_s(e["load_s"]) + ("" if e["available"] else " (failed)"))
        lines.append("| " + " | ".join(row) + " |")
    if any("memory" in r for r in report["results"]):
        lines += ["", "## Peak memory", ""]
        lines.append(f"Peak RSS increase over the loaded model, MiB: one process per executor loads (and builds) the "
                     f"model and inputs, resets the peak (`echo 5 > /proc/self/clear_refs`), runs {o['memory_iters']} "
                     "inferences and reads VmHWM. Measured twice: with the timing's fixed glibc tunables, and with "
                     "glibc's default malloc (other runtimes' arenas behave differently from PyTorch's allocator "
                     "under the tunables). The processes reuse the timing process's ONNX files, AOTInductor packages "
                     "and Inductor cache.")
        for malloc, title in ((MALLOC_TUNED, f"GLIBC_TUNABLES={SETTINGS_ENV['GLIBC_TUNABLES']}"),
                              (MALLOC_DEFAULT, "glibc's default malloc (GLIBC_TUNABLES unset)")):
            lines += ["", f"### {title}", ""]
            head = ["model", "batch"] + [LABELS[n] for n in built]
            lines.append("| " + " | ".join(head) + " |")
            lines.append("|" + "---|" * len(head))
            for r in report["results"]:
                per = r.get("memory", {}).get(malloc)
                if per is None:
                    continue
                row = [r["model"], str(r["batch"])]
                for n in built:
                    mm = per.get(n, {})
                    row.append(f"+{mm['peak_kib'] / 1024:.1f}" if "peak_kib" in mm else "n/a")
                lines.append("| " + " | ".join(row) + " |")
    if report.get("chart"):
        lines += ["", f"![latency relative to the best other runtime, and memory]({report['chart']})"]
    lines.append("")
    return "\n".join(lines)


COLORS = {"eager": "#999999", "interpreter": "#4c72b0", "interpreter_ofi": "#55a868",
          "static_runtime": "#c44e52", "onnxruntime": "#8172b3", "openvino": "#64b5cd",
          "inductor": "#937860", "aotinductor": "#da8bc3", "brisk": "#dd8452", "brisk_cpp": "#f0b27a",
          "nativert": "#8c8c8c", "ep_module": "#6a8caf", "brisk_pt2": "#e8a33d",
          "brisk_nodelegates": "#b5651d", "brisk_nofusion": "#8c564b", "brisk_int8": "#ffbf00",
          "brisk_fp16": "#ffd966", "brisk_bf16": "#e69f00", "onnxruntime_int8": "#b3a6d9", "openvino_bf16": "#a6d8e8",
          "brisk_int8_static": "#cc7a00", "onnxruntime_int8_static": "#6a5acd", "openvino_int8_static": "#2e8b9a",
          "aotinductor_int8_static": "#b0608f"}


def _headroom(ax):
    """Room above the tallest bar (log axis) for the legend, which would hide it."""
    lo, hi = ax.get_ylim()
    ax.set_ylim(lo, hi * (hi / lo) ** 0.45)


def chart(report, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    results = report["results"]
    labels = [f"{r['model']}\nb{r['batch']}" for r in results]
    shown = _shown_executors(report["options"].get("executors", EXECUTORS))
    has_mem = any("memory" in r for r in results)
    fig, axes = plt.subplots(2 if has_mem else 1, 1, figsize=(max(9, 1.3 * len(results) + 2), 10 if has_mem else 5),
                             squeeze=False)
    width = 0.84 / len(shown)
    ax = axes[0][0]
    for i, n in enumerate(shown):
        xs, ys = [], []
        for j, r in enumerate(results):
            e = r["executors"].get(n, {"available": False})
            b = r.get("best_other")
            if e["available"] and b:
                xs.append(j - 0.42 + width * (i + 0.5))
                ys.append(e["p50_us"] / b["p50_us"])
        ax.bar(xs, ys, width, label=LABELS[n], color=COLORS[n],
               edgecolor="black" if n == "brisk" else None, linewidth=0.8 if n == "brisk" else 0)
    ax.axhline(1.0, color="black", linewidth=1.0, label="best other runtime = 1")
    ax.set_yscale("log")
    _headroom(ax)
    ax.set_xticks(range(len(results)))
    ax.set_xticklabels(labels, fontsize=8)
    ax.set_ylabel("latency / best other runtime's\n(log; brisk below 1 = brisk leads)")
    ax.set_title(f"Latency relative to the fastest runtime other than brisk — {report['machine']['cpu']}, 1 thread, "
                 f"{report['date']}", fontsize=10)
    ax.legend(fontsize=7, ncol=5)
    ax.grid(axis="y", alpha=0.3, which="both")
    if has_mem:
        ax = axes[1][0]
        built = [n for n in shown if n != "brisk_cpp"]
        width = 0.84 / len(built)
        for i, n in enumerate(built):
            xs, ys = [], []
            for j, r in enumerate(results):
                mm = r.get("memory", {}).get(MALLOC_TUNED, {}).get(n, {})
                if "peak_kib" in mm:
                    xs.append(j - 0.42 + width * (i + 0.5))
                    ys.append(max(mm["peak_kib"] / 1024, 0.05))  # log axis: show ~0 as a stub
            ax.bar(xs, ys, width, label=LABELS[n], color=COLORS[n])
        ax.set_yscale("log")
        _headroom(ax)
        ax.set_xticks(range(len(results)))
        ax.set_xticklabels(labels, fontsize=8)
        ax.set_ylabel("peak RSS increase over\nthe loaded model (MiB, log)")
        ax.set_title("Peak memory per executor (separate process each, fixed glibc tunables)", fontsize=10)
        ax.legend(fontsize=7, ncol=5)
        ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


# --- Main ----------------------------------------------------------------------------

def default_zoo():
    # Under `bazel run` this file sits in the runfiles next to tools/zoo's generated files.
    for d in (os.path.join(HERE, "..", "zoo"), os.path.join(HERE, "..", "..", "bazel-bin", "tools", "zoo")):
        if os.path.exists(os.path.join(d, "mlp.pt")):
            return os.path.abspath(d)
    return os.path.abspath(os.path.join(HERE, "..", "zoo"))


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
    argv = sys.argv[1:] if argv is None else argv
    opts = parse_args(argv)
    zoo = os.path.abspath(opts.zoo) if opts.zoo else default_zoo()
    # The memory processes inherit the parent's mode (and get its work directory as --workdir).
    if opts.memory_child:
        os.environ.setdefault("BRISK_COMPARE_INDUCTOR_MODE", opts.inductor_mode)
    else:
        os.environ["BRISK_COMPARE_INDUCTOR_MODE"] = opts.inductor_mode
    if opts.memory_child:
        memory_child(opts.memory_child, opts.models, zoo, opts.memory_iters, opts.workdir)
        return 0
    torch.set_num_threads(1)
    cases = select_cases(opts.models, opts.quick)
    workdir = tempfile.mkdtemp(prefix="brisk-compare-")
    # A fresh Inductor cache: the build times in the table are what a first compile costs.
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = os.path.join(workdir, "inductor-cache")

    def log(msg):
        print(msg, flush=True)

    report = collections.OrderedDict()
    report["date"] = datetime.date.today().isoformat()
    report["git"] = git_describe(workspace_dir())
    report["machine"] = machine_info()
    report["settings"] = settings_info()
    report["options"] = collections.OrderedDict(
        argv=_shown_argv(argv), zoo=zoo, quick=opts.quick, executors=opts.executor_list,
        inductor_mode=opts.inductor_mode, rounds=opts.rounds, seconds=opts.seconds, min_iters=opts.min_iters,
        memory_iters=opts.memory_iters, rtol=RTOL, atol=ATOL)
    log("machine: " + ", ".join(f"{k}={v}" for k, v in report["machine"].items()))
    log("settings: " + " ".join(f"{k}={v}" for k, v in report["settings"].items()))
    log(f"zoo: {zoo}")

    report["loadavg_start"] = _loadavg()
    report["results"] = []
    report["versions"] = runtime_versions()
    log("runtimes: " + ", ".join(f"{k} {v}" for k, v in report["versions"].items()))
    for case in cases:
        t0 = time.perf_counter()
        log(f"{case_id(case)}:")
        r = run_case(case, zoo, opts, log, workdir)
        for n in TIMED:
            e = r["executors"].get(n, {"available": False})
            if e["available"] and e["max_abs_diff"] is None:
                log(f"  {n:16s} p50 {_fmt_us(e['p50_us']):>8s} us  output structure differs")
            elif e["available"]:
                ratio = "—" if e["ratio"] is None else f"{e['ratio']:.3f}"
                log(f"  {n:16s} p50 {_fmt_us(e['p50_us']):>8s} us  x{ratio} vs interpreter  "
                    f"agrees={e['agrees']} (max diff {e['max_abs_diff']:.3g})")
        b = r["best_other"]
        if b and "brisk_ratio" in b:
            log(f"  best other runtime: {b['name']} ({_fmt_us(b['p50_us'])} us); brisk / it = {b['brisk_ratio']:.3f}")
        if r["pt2_ratio"]:
            log(f"  brisk (PT2) / ep.module() on the same archive = {r['pt2_ratio']['ratio']:.3f}")
        if not opts.no_memory:
            r["memory"] = measure_memory(case, zoo, opts, log, workdir)
        log(f"  ({time.perf_counter() - t0:.1f} s)")
        report["results"].append(r)

    # Other processes on the machine share its CPUs: the load is part of the record.
    report["loadavg_end"] = _loadavg()
    shutil.rmtree(workdir, ignore_errors=True)
    out = os.path.abspath(opts.out) if opts.out else os.path.join(workspace_dir(), "results")
    os.makedirs(out, exist_ok=True)
    stem = f"compare-{report['date']}{'-quick' if opts.quick else ''}"
    png = os.path.join(out, stem + ".png")
    try:
        chart(report, png)
        report["chart"] = os.path.basename(png)
    except Exception as ex:  # noqa: BLE001 - the table is still worth writing
        log(f"chart: not written ({type(ex).__name__}: {ex})")
    with open(os.path.join(out, stem + ".json"), "w") as f:
        json.dump(report, f, indent=1)
        f.write("\n")
    md = markdown(report)
    with open(os.path.join(out, stem + ".md"), "w") as f:
        f.write(md)
    if not opts.quick:
        for ext in (".md", ".json", ".png"):
            if os.path.exists(os.path.join(out, stem + ext)):
                shutil.copyfile(os.path.join(out, stem + ext), os.path.join(out, "latest" + ext))
        # latest.md shows the chart under its own name.
        with open(os.path.join(out, "latest.md"), "w") as f:
            f.write(md.replace(f"]({stem}.png)", "](latest.png)"))
    log("")
    log(md)
    log(f"written: {os.path.join(out, stem)}.{{md,json,png}}" + ("" if opts.quick else " and latest.*"))
    return 0


if __name__ == "__main__":
    rc = main()
    # Leave without Python's and libtorch's teardown: after the TorchScript interpreter
    # has run prim::fork tasks, torch 2.14 sometimes aborts while destroying its inter-op
    # thread pool at exit ("terminate called without an active exception"; 4 exits in
    # 20 of a memory child for inception_fork with the CPUs busy). Everything this
    # script reports is written and flushed by then.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(rc)
