"""Builders of the runtimes outside PyTorch: ONNX Runtime (on torch.onnx.export's file) and
OpenVINO (convert_model of the PyTorch module, the ONNX file where that fails), in fp32,
with their own reduced-precision modes, and static int8 of the same fp32 model quantized
their own way (quantize_static, QDQ).

Each gets the model's eager source with the .pt's weights (cases.load_eager), is built the
way its documentation recommends for one-thread CPU latency, and nothing of its graph is
edited by hand. Artifacts (the ONNX files) go to the job's work directory, which the
memory processes reuse, so that they measure running, not exporting. Their outputs are
flat lists of numpy arrays: e.to_torch turns them into tensors for the output check."""
import collections
import contextlib
import os
import sys

import torch

from . import cases
from .errors import one_line
from .outputs import flat_tensors


def export_onnx(module, case, args, kwargs, workdir, stem=None):
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
            errors.append(one_line(ex))
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


def _onnx_opset(path):
    import onnx
    m = onnx.load(path, load_external_data=False)
    return max((o.version for o in m.opset_import if o.domain in ("", "ai.onnx")), default="?")


def _fast_path_caveats(module):
    if any(isinstance(m, torch.nn.TransformerEncoderLayer) for m in module.modules()):
        return ["eager runs nn.TransformerEncoderLayer's fused fast path (aten::_transformer_encoder_layer_fwd); "
                "ONNX has no such op: the export holds the unfused ops (MatMul, Softmax, LayerNormalization, ...)"]
    return []


def build_onnxruntime(e, job, int8=False):
    module, _ = cases.load_eager(job.zoo, job.case)
    with torch.no_grad():
        path, exporter = export_onnx(module, job.case, job.args, job.kwargs, job.workdir)
    caveats, nodes = _onnx_caveats(path)
    if int8:
        # ONNX Runtime's dynamic int8: per-channel int8 weights, activations quantized per
        # call (MatMul / Gemm; what brisk's int8_dynamic does to linear layers).
        from onnxruntime.quantization import QuantType, quantize_dynamic
        qpath = path[:-len(".onnx")] + ".int8.onnx"
        quantize_dynamic(path, qpath, weight_type=QuantType.QInt8, per_channel=True)
        path = qpath
        exporter += ", onnxruntime.quantization.quantize_dynamic (QInt8, per channel)"
    _onnxruntime_session(e, path, job.args, job.kwargs)
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
    tensors = flat_tensors((args, kwargs))
    if len(names) != len(tensors):
        raise RuntimeError(f"the ONNX graph takes {len(names)} inputs, the model {len(tensors)} tensors")
    # numpy views of the same tensors: no copy per call, as a user feeding torch tensors would.
    feed = {n: t.numpy() for n, t in zip(names, tensors)}
    e.keep.append(sess)
    e.fn = lambda: sess.run(None, feed)
    e.to_torch = lambda out: [torch.from_numpy(a) for a in out]
    e.note = (f"onnxruntime {ort.__version__} CPUExecutionProvider, ORT_ENABLE_ALL, intra/inter_op_num_threads=1, "
              "ORT_SEQUENTIAL")


def build_openvino(e, job, precision="f32"):
    import openvino as ov
    args, kwargs = job.args, job.kwargs
    module, _ = cases.load_eager(job.zoo, job.case)
    source = "the PyTorch module (ov.convert_model, example_input)"
    try:
        import warnings
        with torch.no_grad(), warnings.catch_warnings(), contextlib.redirect_stdout(sys.stderr):
            warnings.simplefilter("ignore")
            model = ov.convert_model(module, example_input=tuple(args) if not kwargs else (tuple(args), kwargs))
    except Exception as ex:  # noqa: BLE001 - OpenVINO's documented alternative: the ONNX file
        with torch.no_grad():
            path, _ = export_onnx(module, job.case, args, kwargs, job.workdir)
        model = ov.convert_model(path)
        source = "the ONNX file (converting the PyTorch module failed)"
        e.caveats.append(f"ov.convert_model fails on the PyTorch module ({one_line(ex)[:120]}); "
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
    inputs = [t.numpy() for t in flat_tensors((args, kwargs))]
    e.keep += [core, compiled, request]
    # share_inputs: no copy of the inputs per call (a user with fixed input buffers).
    e.fn = lambda: request.infer(inputs, share_inputs=True)
    e.to_torch = lambda out: [torch.from_numpy(out[k].copy()) for k in compiled.outputs]
    e.note = (f"openvino {ov.get_version().split('-')[0]}, converted from {source}; CPU, "
              f"PERFORMANCE_HINT=LATENCY, NUM_STREAMS=1, INFERENCE_NUM_THREADS=1, INFERENCE_PRECISION_HINT={precision}")


# --- Static int8: quantize_static of the fp32 model (QDQ), calibrated on the zoo's inputs --

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


def _onnx_static_int8(job):
    """(QDQ ONNX file, how it was made): the fp32 model exported to ONNX, pre-processed
    and quantized by onnxruntime.quantization.quantize_static, once per work directory."""
    from onnxruntime.quantization import QuantFormat, QuantType, quant_pre_process, quantize_static
    case = job.case
    module = cases.int8_float_model(job.zoo, case)
    with torch.no_grad():
        path, exporter = export_onnx(module, case, job.args, job.kwargs, job.workdir, stem=case.model + ".int8-float")
    qpath = path[:-len(".onnx")] + ".qdq.onnx"
    if not os.path.exists(qpath):
        import onnx
        prepped = path[:-len(".onnx")] + ".prep.onnx"
        quant_pre_process(path, prepped)
        rows = torch.cat(cases.zoo_models_pt2(job.zoo).int8_calibration_inputs(case.model))
        reader = _CalibrationReader(onnx.load(prepped).graph.input[0].name, rows, case.batch)
        quantize_static(prepped, qpath, reader, quant_format=QuantFormat.QDQ, per_channel=True,
                        activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8)
    return qpath, (f"torch.onnx.export ({exporter}) of the fp32 model, quant_pre_process, "
                   "quantize_static (QDQ, per-channel QInt8 weights, QUInt8 activations, MinMax calibration on "
                   "the zoo's inputs)")


def build_onnxruntime_int8_static(e, job):
    path, how = _onnx_static_int8(job)
    _onnxruntime_session(e, path, job.args, job.kwargs)
    e.note = f"{how}, opset {_onnx_opset(path)}; {e.note}"


def build_openvino_int8_static(e, job):
    """OpenVINO runs a QDQ model's quantized ops in int8 (its CPU plugin fuses the
    QuantizeLinear / DequantizeLinear pairs into int8 convolutions and matmuls)."""
    import openvino as ov
    path, how = _onnx_static_int8(job)
    _openvino_compile(e, ov.convert_model(path), job.args, job.kwargs, "f32", f"the QDQ ONNX file ({how})")
