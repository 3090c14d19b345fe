"""The one registry of executors: name -> Spec. Everything per executor that the rest of
the package needs (the table's label, its group, how to build it, whether it runs the
shared PT2 archive, its reduced precision, the chart's colour, the report's description)
is one entry here, in the table's column order, so a new executor is one entry and no
list can miss it (the chart once had no colour for brisk_aoti).

Every executor is built the same way, spec.build(e, job), and called the same way,
e.fn() under e.grad_ctx()."""
import collections
import dataclasses
import functools
import statistics
import tempfile
import time
from typing import Callable, Optional

import torch

from . import cases, runtimes_brisk, runtimes_onnx, runtimes_torch
from .errors import one_line

# Latency ratios are to the interpreter (the runtime brisk replaces); outputs are checked
# against eager PyTorch, the model's own source (the interpreter when that is missing).
REFERENCE = "interpreter"
OUTPUT_REFERENCE = "eager"


@dataclasses.dataclass
class Job:
    """What a builder gets: the case, its inputs, the work directory it may write
    artifacts to (shared with the memory processes), and the model file to load (the
    .pt, or the PT2 archive for the PT2 rows)."""
    zoo: str
    case: cases.Case
    args: list
    kwargs: dict
    workdir: str
    path: str


class Executor:
    """One executor's state for one case: what the builder made, and what timing and the
    output check found."""

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


@dataclasses.dataclass(frozen=True)
class Spec:
    label: str
    # "pytorch": PyTorch's own executors; "other": what a user would pick instead of brisk;
    # "brisk"; "reduced": a reduced-precision row (--precision); "derived": made from
    # another executor, not built (brisk_cpp).
    group: str
    build: Optional[Callable]
    color: str
    description: Optional[str] = None   # the report's "Executors:" list (None: not listed)
    pt2: bool = False                   # runs the PT2 archive shared by these rows
    precision: Optional[str] = None     # the --precision kind of a reduced row


_brisk = runtimes_brisk.brisk_module
_PT2_NOTE = "torch.export.export + package_pt2: {:.1f} s, not counted in the load time"

REGISTRY = collections.OrderedDict([
    ("eager", Spec(
        "eager", "pytorch", runtimes_torch.build_eager, "#999999",
        "the model's Python source (tools/zoo/models.py, weights from the .pt) under `torch.inference_mode()`")),
    ("interpreter", Spec(
        "interpreter (frozen)", "pytorch", runtimes_torch.build_interpreter, "#4c72b0",
        "the TorchScript interpreter on `torch.jit.freeze(module)`")),
    ("interpreter_ofi", Spec(
        "interpreter + optimize_for_inference", "pytorch", runtimes_torch.build_interpreter_ofi, "#55a868",
        "the interpreter on `torch.jit.optimize_for_inference(module)`")),
    ("static_runtime", Spec(
        "Static Runtime", "pytorch", runtimes_torch.build_static_runtime, "#c44e52",
        "`torch._C._jit_to_static_module(frozen._c)`, called with the GIL released (tools/bench/sr_shim.cc)")),
    # NativeRT is Static Runtime's successor for torch.export programs: it runs the same
    # PT2 archive as brisk (PT2). Where the installed torch lacks it, its column says why.
    ("nativert", Spec(
        "NativeRT", "pytorch", runtimes_torch.build_nativert, "#8c8c8c",
        "`torch._C._nativert.PyModelRunner(archive, \"model\")` on the PT2 archive brisk (PT2) runs", pt2=True)),
    # The same archive loaded back with torch.export.load and run as ep.module(): what a
    # PT2 user runs without either runtime, and brisk (PT2)'s own reference (pt2_ratio).
    ("ep_module", Spec(
        "ep.module() (PT2)", "pytorch", runtimes_torch.build_ep_module, "#6a8caf",
        "`torch.export.load(archive).module()` on the PT2 archive brisk (PT2) runs, under `torch.no_grad()`",
        pt2=True)),
    ("onnxruntime", Spec(
        "ONNX Runtime", "other", runtimes_onnx.build_onnxruntime, "#8172b3",
        "`torch.onnx.export` of the eager module (the default, torch.export-based exporter; the TorchScript-based "
        "one where that fails), `onnxruntime.InferenceSession` on the CPUExecutionProvider with `ORT_ENABLE_ALL`, "
        "`intra_op_num_threads=1`, `inter_op_num_threads=1`, `ORT_SEQUENTIAL`; fed numpy views of the input "
        "tensors")),
    ("openvino", Spec(
        "OpenVINO", "other", runtimes_onnx.build_openvino, "#64b5cd",
        "`openvino.convert_model(module, example_input=...)` (the ONNX file where that fails), `compile_model` on "
        "CPU with `PERFORMANCE_HINT=LATENCY`, `NUM_STREAMS=1`, `INFERENCE_NUM_THREADS=1`, "
        "`INFERENCE_PRECISION_HINT=f32` (fp32 like every other executor); one infer request, `share_inputs=True`")),
    ("inductor", Spec(
        "Inductor", "other", runtimes_torch.build_inductor, "#937860",
        "`torch.compile(module, mode=MODE)` with `torch._inductor.config.freezing=True`, under `torch.no_grad()`; "
        "the build time includes the first call, where it compiles")),
    ("aotinductor", Spec(
        "AOTInductor", "other", runtimes_torch.build_aotinductor, "#da8bc3",
        "`torch.export.export`, `torch._inductor.aoti_compile_and_package` with "
        "`inductor_configs={freezing: True, max_autotune: MAX}`, loaded with `torch._inductor.aoti_load_package`")),
    ("brisk", Spec(
        "brisk", "brisk", _brisk(), "#dd8452",
        "the brisk binding (`brisk.load`, default options) on the TorchScript file")),
    ("brisk_pt2", Spec(
        "brisk (PT2)", "brisk", _brisk(), "#e8a33d",
        "the brisk binding on a PT2 archive: `torch.export.export` of the eager module, packaged with "
        "`package_pt2(f, exported_programs={\"model\": ep})`", pt2=True)),
    ("brisk_nodelegates", Spec(
        "brisk, no delegates", "brisk", _brisk(use_delegates=False), "#b5651d",
        "the brisk binding on the TorchScript file with `use_delegates=False`: brisk's own kernels, no delegate "
        "backend")),
    ("brisk_nofusion", Spec(
        "brisk, no elementwise fusion", "brisk", _brisk(disabled_passes=["ops_cpu.fuse_pointwise"]), "#8c564b",
        "the brisk binding on the TorchScript file with the elementwise fusion pass `ops_cpu.fuse_pointwise` "
        "disabled")),
    ("brisk_aoti", Spec(
        "brisk + AOTI (whole graph)", "brisk", functools.partial(runtimes_brisk.build_brisk_aoti, partial=False),
        "#bcbd22")),
    ("brisk_aoti_partial", Spec(
        "brisk + AOTI (partial)", "brisk", functools.partial(runtimes_brisk.build_brisk_aoti, partial=True),
        "#dbdb8d")),
    # Reduced precision, by --precision: brisk's opt-in modes (ops_quantized) and the peers
    # at the same precision. brisk's run the PT2 archive (the TorchScript file gives the
    # same layers: ops_cpu.decompose_encoder_layer spells out the one fused op it keeps).
    ("brisk_int8", Spec(
        "brisk (PT2), int8_dynamic", "reduced", _brisk(precision=["int8_dynamic"]), "#ffbf00",
        "reduced precision (`--precision int8`): the brisk binding on the PT2 archive with "
        "`precision=[\"int8_dynamic\"]` (linear layers on per-channel int8 weights, activations quantized per "
        "call); never a best other runtime, outputs within 5% of the output's range", pt2=True, precision="int8")),
    ("brisk_fp16", Spec(
        "brisk (PT2), fp16_weights", "reduced", _brisk(precision=["fp16_weights"]), "#ffd966",
        "reduced precision (`--precision fp16`): the brisk binding on the PT2 archive with "
        "`precision=[\"fp16_weights\"]` (linear layers on fp16 weights, fp32 arithmetic)", pt2=True,
        precision="fp16")),
    ("brisk_bf16", Spec(
        "brisk (PT2), bf16", "reduced", _brisk(precision=["bf16"]), "#e69f00",
        "reduced precision (`--precision bf16`): the brisk binding on the PT2 archive with `precision=[\"bf16\"]` "
        "(the oneDNN delegate's convolutions and linear layers in bf16, fp32 accumulation)", pt2=True,
        precision="bf16")),
    ("onnxruntime_int8", Spec(
        "ONNX Runtime, quantize_dynamic int8", "reduced",
        functools.partial(runtimes_onnx.build_onnxruntime, int8=True), "#b3a6d9",
        "reduced precision (`--precision int8`): ONNX Runtime as above on the export after "
        "`onnxruntime.quantization.quantize_dynamic` (QInt8 weights, per channel)", precision="int8")),
    ("openvino_bf16", Spec(
        "OpenVINO, bf16", "reduced", functools.partial(runtimes_onnx.build_openvino, precision="bf16"), "#a6d8e8",
        "reduced precision (`--precision bf16`): OpenVINO as above with `INFERENCE_PRECISION_HINT=bf16`",
        precision="bf16")),
    ("brisk_int8_static", Spec(
        "brisk (PT2E int8 program)", "reduced", runtimes_brisk.build_brisk_int8_static, "#cc7a00",
        "static int8 (`--precision int8_static`): the brisk binding on the zoo's PT2E program `<model>.int8.pt2` "
        "(torchao `prepare_pt2e` / `convert_pt2e` with `X86InductorQuantizer`'s default config: per-channel int8 "
        "weights, uint8 activations, calibrated on the zoo's inputs); the program is quantized, no option needed. "
        "Static int8 rows are checked against the fp32 model the program was quantized from, within 25% of the "
        "output's range", precision="int8_static")),
    ("onnxruntime_int8_static", Spec(
        "ONNX Runtime, quantize_static int8 (QDQ)", "reduced", runtimes_onnx.build_onnxruntime_int8_static,
        "#6a5acd",
        "static int8: ONNX Runtime as above on the fp32 model's export after `quant_pre_process` and "
        "`quantize_static` (QDQ format, per-channel QInt8 weights, QUInt8 activations, MinMax calibration on the "
        "same zoo inputs)", precision="int8_static")),
    ("openvino_int8_static", Spec(
        "OpenVINO, int8 (QDQ)", "reduced", runtimes_onnx.build_openvino_int8_static, "#2e8b9a",
        "static int8: OpenVINO as above on that QDQ ONNX file (its CPU plugin runs the quantized convolutions and "
        "matmuls in int8)", precision="int8_static")),
    ("aotinductor_int8_static", Spec(
        "AOTInductor (PT2E int8 program)", "reduced", runtimes_torch.build_aotinductor_int8_static, "#b0608f",
        "static int8: AOTInductor as above on the PT2E program, re-exported at the case's batch (`freezing: True`, "
        "and torchao's x86 quantizer imported, which registers the passes that lower the quantized patterns to "
        "oneDNN's int8 kernels)", precision="int8_static")),
    # The brisk Module timed by its own C++ loop: cpp_executor, after brisk's output check.
    ("brisk_cpp", Spec("brisk, C++ loop", "derived", None, "#f0b27a")),
])

# The lists the rest of the package asks for, all in the registry's (the table's) order.
LABELS = {n: s.label for n, s in REGISTRY.items()}
COLORS = {n: s.color for n, s in REGISTRY.items()}
DESCRIPTIONS = collections.OrderedDict((n, s.description) for n, s in REGISTRY.items() if s.description)
PYTORCH_EXECUTORS = [n for n, s in REGISTRY.items() if s.group == "pytorch"]
OTHER_RUNTIMES = [n for n, s in REGISTRY.items() if s.group == "other"]
BRISK_EXECUTORS = [n for n, s in REGISTRY.items() if s.group == "brisk"]
PT2_EXECUTORS = [n for n, s in REGISTRY.items() if s.pt2]
# They compute something other than fp32, so none is ever a "best other runtime"; their
# outputs are held to outputs.REDUCED_ERROR of the reference output's range.
REDUCED_EXECUTORS = collections.OrderedDict((n, s.precision) for n, s in REGISTRY.items() if s.precision)
EXECUTORS = [n for n, s in REGISTRY.items() if s.group != "derived"]
TIMED = list(REGISTRY)
# Everything but brisk itself: the candidates for "best other runtime".
OTHERS = PYTORCH_EXECUTORS + OTHER_RUNTIMES


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


def shown_executors(selected):
    """The table's and the chart's columns: the selected executors, and brisk's C++ loop
    with brisk."""
    return [n for n in TIMED if n in selected or (n == "brisk_cpp" and "brisk" in selected)]


def make_executor(name, zoo, case, args, kwargs, workdir=None):
    """Builds executor `name` for `case`; a failure is recorded in e.error (its column
    says why), never raised: one executor failing must not stop the others."""
    spec = REGISTRY[name]
    e = Executor(name)
    workdir = workdir or tempfile.mkdtemp(prefix="brisk-compare-")
    job = Job(zoo, case, args, kwargs, workdir, cases.zoo_file(zoo, case, ".pt"))
    if spec.pt2:
        # The export is shared by the PT2 executors, so it is not any one's load time.
        try:
            job.path, export_s = runtimes_torch.pt2_archive(zoo, case, args, kwargs, workdir)
        except Exception as ex:  # noqa: BLE001 - reported in the executor's column
            e.error = "torch.export: " + one_line(ex)
            return e
        e.note = _PT2_NOTE.format(export_s)
    t0 = time.perf_counter()
    try:
        spec.build(e, job)
    except Exception as ex:  # noqa: BLE001 - one executor failing must not stop the others
        e.error = one_line(ex)
        e.fn = None
    e.load_s = time.perf_counter() - t0
    return e


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
