"""PT2 (torch.export) programs for the zoo: what export_pt2.py exports.

Every zoo model of models.py is exported from the very nn.Module instance its builder
returns (same seeds, so the same weights as <name>.pt). Models whose forward torch.export
cannot trace get a PT2-only wrapper here that shares the original submodules (so the
parameter names and values are the TorchScript model's); models.py itself is not touched,
so the TorchScript archives stay byte-for-byte the same.

Plus extra programs that exercise what only PT2 has:
  mlp.dyn / resnet18.dyn -- dynamic batch (Dim("batch", min=1, max=64))
  cond_model              -- torch.cond with parameters in both branches
  while_model             -- torch while_loop (a trip count from an input), dynamic batch
  pytree_io               -- dict/tuple/list inputs and kwargs, dict/tuple/list/None outputs
  pt2e_convnet            -- PT2E's quantize / dequantize ops (uint8 activations, int8 weights)
  resnet18.int8, mobilenet_v2.int8, mlp.int8
                          -- static int8 from torchao's PT2E flow (X86InductorQuantizer),
                             calibrated on the zoo's own inputs, dynamic batch

Each spec is a `Pt2Spec`; see README.md ("PT2 programs") for the files written.
"""

import collections
import re
from typing import Callable, Dict, List, Optional, Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch._higher_order_ops.while_loop import while_loop
from torch.export import Dim

import models

# module      -- the nn.Module to export (eval mode)
# inputs      -- (args, kwargs) used for export and the reference outputs
# inputs2     -- (args, kwargs) second set; None: use the zoo's own <name>.inputs2.pt
# dynamic     -- dynamic_shapes for torch.export.export, or None (static)
# torchscript -- the zoo TorchScript model with the same weights and call signature, or None
# note        -- how the program relates to the TorchScript model (goes to the manifest)
# own_inputs  -- True: write <name>.inputs.pt / .inputs2.pt (extra programs); False: the
#                zoo model's inputs files already hold these inputs
# example     -- (args, kwargs) export traces with, when it must differ from `inputs`
# original    -- for a PT2-only rewrite: the unmodified module, which export_pt2.py tries
#                first (and records why it fails) before exporting `module`
# twin        -- for an extra program: a TorchScript-able module computing the same with
#                the same parameters, which export_pt2.py scripts into <name>.pt (the
#                program's `torchscript`), so brisk's TorchScript path is its reference too
# float_model -- for a PT2E-quantized program: the fp32 module it was quantized from
#                (export_pt2.py checks the program stays within QUANTIZED_FLOAT_ERROR of it)
# float_origin -- for a PT2E-quantized program: (zoo TorchScript file, state) with which
#                a reader rebuilds float_model: that file with `state` (the state_dict
#                entries that differ from it; empty when none do) loaded on top.
#                export_pt2.py writes a non-empty state as <name>.float_state.pt and
#                records both in the manifest's `quantized`
Pt2Spec = collections.namedtuple(
    "Pt2Spec", ["module", "inputs", "inputs2", "dynamic", "torchscript", "note", "own_inputs",
                "example", "original", "twin", "float_model", "float_origin"],
    defaults=[None, None, None, None, None])


def _zoo(name: str, note: str) -> Pt2Spec:
    z = models.MODELS[name]()
    return Pt2Spec(z.eager, z.inputs, z.inputs2, None, name, note, False)


# --------------------------------------------------------------------------- control flow

class ControlFlowCond(nn.Module):
    """models.ControlFlow with its data-dependent `if` written as torch.cond.

    Same computation: torch.cond(pred, t, f, (x,)) runs t(x) when x.sum() > 0, else f(x),
    exactly like `if bool(x.sum() > 0)`; both branches give [B, 16]. The `for` loop over
    the int argument `n` is unrolled by export, so the program is specialised to the
    example's n (3) and rejects other values (torch.export guards "n == 3").
    """

    def __init__(self, base: models.ControlFlow):
        super().__init__()
        self.fc = base.fc          # shared: same parameters and names as the TorchScript model
        self.fc_neg = base.fc_neg

    def forward(self, x: torch.Tensor, n: int) -> torch.Tensor:
        def pos(x):
            return torch.tanh(self.fc(x))

        def neg(x):
            a = self.fc_neg(x)
            return torch.cat([a, -a], dim=1)

        h = torch.cond(x.sum() > 0, pos, neg, (x,))
        acc: List[torch.Tensor] = []
        cur = h
        for i in range(n):
            cur = cur * 0.5 + self.fc(cur) * float(i + 1) * 0.1
            acc.append(cur)
        out = torch.stack(acc, dim=0).sum(dim=0)
        return torch.cat([out, h], dim=1)[:, :16] + out


def _control_flow() -> Pt2Spec:
    z = models.control_flow()
    return Pt2Spec(ControlFlowCond(z.eager), z.inputs, z.inputs2, None, "control_flow",
                   "data-dependent if rewritten as torch.cond (ControlFlowCond, same weights); "
                   "for-loop unrolled, n specialised to 3", False, original=z.eager)


# --------------------------------------------------------------------------- dynamic batch

def _mlp_dyn() -> Pt2Spec:
    z = models.mlp()
    g = torch.Generator().manual_seed(303)
    # Exported at batch 3 (an example batch of 1 would let export specialise the dim);
    # the two input sets use other batch sizes, the second the range's maximum.
    ex, i1, i2 = [models._inp(torch.randn(b, 256, generator=g)) for b in (3, 5, 64)]
    return Pt2Spec(z.eager, i1, i2, {"x": {0: Dim("batch", min=1, max=64)}}, "mlp",
                   "mlp with a dynamic batch dim (1..64); inputs batch 5, inputs2 batch 64", True,
                   example=ex)


def _resnet18_dyn() -> Pt2Spec:
    z = models.resnet18()
    g = torch.Generator().manual_seed(301)
    # Exported at batch 2; inputs batch 3, inputs2 batch 1 (the range's minimum).
    ex, i1, i2 = [models._inp(torch.randn(b, 3, 224, 224, generator=g)) for b in (2, 3, 1)]
    return Pt2Spec(z.eager, i1, i2, {"x": {0: Dim("batch", min=1, max=64)}}, "resnet18",
                   "resnet18 with a dynamic batch dim (1..64); inputs batch 3, inputs2 batch 1", True,
                   example=ex)


# --------------------------------------------------------------------------- torch.cond

class CondModel(nn.Module):
    """forward(x [4, 8]) -> [4, 8]: a linear layer, then torch.cond on the sign of its
    sum; each branch uses its own parameters (lifted into the branch subgraphs as
    operands), then a shared op after the cond."""

    def __init__(self):
        super().__init__()
        self.pre = nn.Linear(8, 8)
        self.pos = nn.Linear(8, 8)
        self.register_buffer("shift", torch.linspace(-1.0, 1.0, 8))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.pre(x)

        def true_fn(h):
            return F.relu(self.pos(h)) * 2.0

        def false_fn(h):
            return torch.sigmoid(h) - self.shift

        y = torch.cond(h.sum() > 0, true_fn, false_fn, (h,))
        return y + h


def _cond_model() -> Pt2Spec:
    torch.manual_seed(21)
    m = CondModel().eval()
    g = torch.Generator().manual_seed(121)
    # The branch is picked from pre(x).sum(); pick inputs whose sums have either sign
    # (checked in export_pt2.py: the two sets must take different branches).
    cands = [torch.randn(4, 8, generator=g) for _ in range(16)]
    with torch.no_grad():
        pos = next(c for c in cands if m.pre(c).sum() > 0)
        neg = next(c for c in cands if m.pre(c).sum() <= 0)
    return Pt2Spec(m, models._inp(pos), models._inp(neg), None, None,
                   "torch.cond; inputs take the true branch, inputs2 the false branch", True)


def cond_branch(m: CondModel, inputs) -> bool:
    """Which branch CondModel takes for `inputs` (True: true_fn)."""
    (x,), _ = inputs
    with torch.no_grad():
        return bool(m.pre(x).sum() > 0)


# --------------------------------------------------------------------------- while_loop

class WhileModel(nn.Module):
    """forward(x [B, 16], n: int64 0-d tensor) -> (h [B, 16], i: int64 0-d tensor)

    A recurrent refinement as a while_loop: carried (i, h), i a 0-d int64 counter and h
    starting at inp(x); while i < n: h = tanh(fc(h)) + x, i += 1. The trip count is
    data (n), the batch dynamic; fc's parameters and x are the loop's additional inputs.
    """

    def __init__(self):
        super().__init__()
        self.inp = nn.Linear(16, 16)
        self.fc = nn.Linear(16, 16)

    def forward(self, x: torch.Tensor, n: torch.Tensor):
        def cond(i, h):
            return i < n

        def body(i, h):
            return i + 1, torch.tanh(self.fc(h)) + x

        i, h = while_loop(cond, body, (torch.zeros((), dtype=torch.int64), self.inp(x)))
        return h, i


class WhileModelScript(nn.Module):
    """WhileModel as TorchScript writes it (a Python while, prim::Loop), sharing its
    submodules: while_model.pt, the PT2 program's twin."""

    def __init__(self, base: WhileModel):
        super().__init__()
        self.inp = base.inp
        self.fc = base.fc

    def forward(self, x: torch.Tensor, n: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        i = torch.zeros((), dtype=torch.int64)
        h = self.inp(x)
        while bool(i < n):
            h = torch.tanh(self.fc(h)) + x
            i = i + 1
        return h, i


def _while_model() -> Pt2Spec:
    torch.manual_seed(23)
    m = WhileModel().eval()
    g = torch.Generator().manual_seed(123)
    # Exported at batch 3 and 5 trips; inputs batch 4 and 6 trips, inputs2 batch 2 and 11
    # trips (export_pt2.py checks the two sets' trip counts differ).
    ex, i1, i2 = [models._inp(torch.randn(b, 16, generator=g), torch.tensor(n))
                  for b, n in ((3, 5), (4, 6), (2, 11))]
    return Pt2Spec(m, i1, i2, {"x": {0: Dim("batch", min=1, max=64)}, "n": None}, None,
                   "torch while_loop, trip count from input n, dynamic batch (1..64); inputs batch 4 "
                   "and 6 trips, inputs2 batch 2 and 11 trips; twin while_model.pt: the same loop "
                   "in TorchScript", True, example=ex, twin=WhileModelScript(m).eval())


def trip_count(inputs) -> int:
    """The number of trips WhileModel runs on `inputs`."""
    (_, n), _ = inputs
    return int(n)


# --------------------------------------------------------------------------- pytree I/O

class PytreeIO(nn.Module):
    """forward(feats: {"x": [2,8], "y": [2,8]}, pair: ([2,8], [2,8]), *, scale: [1],
               extra: {"bias": [8]})
         -> ({"sum": [2,8], "parts": ([2,8], None, [2])}, None, [[2,8], [2,8]])

    Nested dict/tuple inputs, tensor kwargs (one of them a dict), and nested dict / tuple
    / list outputs with None leaves (constant outputs the program records as such)."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, feats: Dict[str, torch.Tensor], pair: Tuple[torch.Tensor, torch.Tensor], *,
                scale: torch.Tensor, extra: Dict[str, torch.Tensor]):
        h = self.lin(feats["x"]) + feats["y"] * scale + extra["bias"]
        a, b = pair
        out: Dict[str, object] = {"sum": h + a, "parts": (h * b, None, (a - b).sum(dim=1))}
        none: Optional[torch.Tensor] = None
        return out, none, [F.relu(h), b - h]


def _pytree_inputs(g):
    def t(*shape):
        return torch.randn(*shape, generator=g)
    return ([{"x": t(2, 8), "y": t(2, 8)}, (t(2, 8), t(2, 8))],
            {"scale": t(1), "extra": {"bias": t(8)}})


def _pytree_io() -> Pt2Spec:
    torch.manual_seed(22)
    m = PytreeIO().eval()
    g = torch.Generator().manual_seed(122)
    return Pt2Spec(m, _pytree_inputs(g), _pytree_inputs(g), None, None,
                   "dict/tuple inputs, tensor and dict kwargs; dict/tuple/list/None outputs", True)


# --------------------------------------------------------------------------- PT2E

class Pt2eConvNet(nn.Module):
    """forward(x [1, 3, 15, 15]) -> [1, 10]: a program as torchao's convert_pt2e writes one
    with X86InductorQuantizer, written out directly (so the zoo needs no torchao): uint8
    activations quantized per tensor (quantize_per_tensor -> dequantize_per_tensor around
    each convolution's input), int8 weights per output channel stored as buffers and
    dequantized in the graph (dequantize_per_channel), fp32 bias; conv 3 -> 16 + relu,
    conv 16 -> 16 + residual add + relu, global mean, linear 16 -> 10 on an int8 weight.
    The ops are PyTorch's Python-defined quantized_decomposed ones, which brisk runs
    itself (core/graph/quantized_decomposed.h).
    """

    def __init__(self):
        super().__init__()
        import torch.ao.quantization.fx._decomposed  # noqa: F401  registers the ops
        self.b1 = nn.Parameter(torch.randn(16) * 0.1)
        self.b2 = nn.Parameter(torch.randn(16) * 0.1)
        self.b3 = nn.Parameter(torch.randn(10) * 0.1)
        for name, shape in (("w1", (16, 3, 3, 3)), ("w2", (16, 16, 3, 3)), ("w3", (10, 16))):
            w = torch.randn(*shape) * 0.2
            scale = w.flatten(1).abs().amax(1) / 127
            q = torch.clamp(torch.round(w / scale.view(-1, *([1] * (w.dim() - 1)))), -128, 127).to(torch.int8)
            self.register_buffer(name + "_q", q)
            self.register_buffer(name + "_scale", scale)
            self.register_buffer(name + "_zp", torch.zeros(shape[0], dtype=torch.int64))

    def _weight(self, name):
        return torch.ops.quantized_decomposed.dequantize_per_channel(
            getattr(self, name + "_q"), getattr(self, name + "_scale"), getattr(self, name + "_zp"), 0, -128, 127,
            torch.int8)

    @staticmethod
    def _fake_quant(x, scale, zero_point):
        qd = torch.ops.quantized_decomposed
        q = qd.quantize_per_tensor(x, scale, zero_point, 0, 255, torch.uint8)
        return qd.dequantize_per_tensor(q, scale, zero_point, 0, 255, torch.uint8)

    def forward(self, x):
        x = self._fake_quant(x, 0.025, 128)
        y = F.relu(F.conv2d(x, self._weight("w1"), self.b1, padding=1))
        y = self._fake_quant(y, 0.01, 0)
        z = F.relu(F.conv2d(y, self._weight("w2"), self.b2, padding=1) + y)
        z = self._fake_quant(z, 0.02, 0)
        return F.linear(z.mean((2, 3)), self._weight("w3"), self.b3)


def _pt2e_convnet() -> Pt2Spec:
    torch.manual_seed(23)
    m = Pt2eConvNet().eval()
    g = torch.Generator().manual_seed(123)
    # 15x15: 675 input values, so the quantize kernels' vector loops leave a tail.
    return Pt2Spec(m, models._inp(torch.randn(1, 3, 15, 15, generator=g)),
                   models._inp(torch.randn(1, 3, 15, 15, generator=g)), None, None,
                   "PT2E-style uint8/int8 quantize/dequantize ops (quantized_decomposed), written directly", True)


# --------------------------------------------------------------------------- PT2E static int8

# The zoo models quantized by torchao's PT2E flow: <name>.int8.
INT8_MODELS = ["resnet18", "mobilenet_v2", "mlp"]
# One dynamic batch dim, so the zoo's batch-1 inputs, its second set (batch 2; mlp 64) and
# the batch-8 image sets (models.BATCH_INPUTS) all run the one program: static per-tensor
# quantization parameters do not depend on the batch.
INT8_BATCH = Dim("batch", min=1, max=64)


def _calibration(z: models.ZooModel, name: str) -> List[torch.Tensor]:
    sets = [z.inputs, z.inputs2] + [make() for make in models.BATCH_INPUTS.get(name, {}).values()]
    return [args[0] for args, _ in sets]


def int8_calibration_inputs(name: str) -> List[torch.Tensor]:
    """The zoo's own inputs for `name`: its two input sets and its larger-batch sets (all
    single-tensor `x`). Calibration sees nothing else, so the build stays fast and the
    scales come from the data the tests and benchmarks run."""
    return _calibration(models.MODELS[name](), name)


def _recalibrate_batch_norm(m: nn.Module, batches: List[torch.Tensor]) -> nn.Module:
    """Re-estimates every BatchNorm's running statistics on `batches` (cumulative
    average over all of them), in place. The zoo's random mobilenet_v2 keeps torchvision's
    initial statistics (mean 0, var 1), which normalise nothing: its activations shrink
    about 10x per stage, to ~1e-8 at the classifier. That is below any uint8 step (the
    observers' smallest scale is float32 eps, 1.2e-7), so quantized it would output its
    bias for every input. With statistics of real activations every stage is O(1)."""
    bns = [b for b in m.modules() if isinstance(b, nn.modules.batchnorm._BatchNorm)]
    for b in bns:
        b.reset_running_stats()
        b.momentum = None  # cumulative moving average: each batch counts by its share
    m.train()
    with torch.no_grad():
        for x in batches:
            m(x)
    m.eval()
    for b in bns:
        b.momentum = 0.1
    return m


def _float_model(z: models.ZooModel, name: str, calibration: List[torch.Tensor]) -> nn.Module:
    m = z.eager
    if name == "mobilenet_v2":
        _recalibrate_batch_norm(m, calibration)
    return m.eval()


def int8_float_model(name: str) -> nn.Module:
    """The fp32 module <name>.int8 is quantized from: the zoo model itself (same weights
    as <name>.pt), except mobilenet_v2, whose BatchNorm statistics are re-estimated on the
    calibration inputs first (see _recalibrate_batch_norm). compare.py's int8_static rows
    quantize and check against this same module."""
    z = models.MODELS[name]()
    return _float_model(z, name, _calibration(z, name))


def _batched_example(calibration: List[torch.Tensor]) -> torch.Tensor:
    # An example of batch 1 would let export specialise the batch dim.
    return next(x for x in calibration if x.shape[0] > 1)


def quantize_pt2e(module: nn.Module, calibration: List[torch.Tensor]) -> torch.fx.GraphModule:
    """module quantized by torchao's PT2E flow for x86: export, prepare_pt2e with
    X86InductorQuantizer's default static config (int8 weights per output channel,
    uint8 activations per tensor from histogram observers; BatchNorm folded into the
    convolutions), one forward per calibration batch, convert_pt2e.

    The export is strict (TorchDynamo): the quantizer finds conv / add / relu patterns by
    the `source_fn_stack` metadata that only strict export records, one entry per call.
    torch 2.14's default non-strict export leaves it out, and torch's partitioner then
    groups nodes by module instance; torchvision's BasicBlock calls its one `self.relu`
    twice (after bn1, and after the residual add), so both calls land in one partition
    with two outputs: "Input partition has more than one output node"."""
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e
    from torchao.quantization.pt2e.quantizer import x86_inductor_quantizer as xiq

    quantizer = xiq.X86InductorQuantizer().set_global(xiq.get_default_x86_inductor_quantization_config())
    with torch.no_grad():
        graph = torch.export.export(module, (_batched_example(calibration),), dynamic_shapes=({0: INT8_BATCH},), strict=True).module()
        prepared = prepare_pt2e(graph, quantizer)
        for x in calibration:
            prepared(x)
        converted = convert_pt2e(prepared)
    _drop_unused_attributes(converted)
    _forget_module_ids(converted)
    return converted


def _drop_unused_attributes(gm: torch.fx.GraphModule) -> None:
    """convert_pt2e reads the fp32 weights into new int8 constants but leaves the fp32
    parameters on the module; export would lift them as unused inputs and write them to
    the archive (resnet18: 45 MB of dead weights)."""
    used = {n.target for n in gm.graph.nodes if n.op == "get_attr"}
    for name in [k for k, _ in gm.named_parameters()] + [k for k, _ in gm.named_buffers()]:
        if name not in used:
            owner, _, attr = name.rpartition(".")
            delattr(gm.get_submodule(owner), attr)


def _forget_module_ids(gm: torch.fx.GraphModule) -> None:
    """Strict export keys the submodules in each node's nn_module_stack by their Python
    id() ("139669742251280", and "139669742251280@1" for a module's second call; re-export
    prefixes "L__self__"): the archive would differ run to run. The key is only a name;
    the stack's values (path, type) stay."""
    for node in gm.graph.nodes:
        stack = node.meta.get("nn_module_stack")
        if stack:
            node.meta["nn_module_stack"] = type(stack)(
                (re.sub(r"^\d+(?=(@\d+)?$)", f"module_{i}", k), v) for i, (k, v) in enumerate(stack.items()))


def _int8(name: str) -> Callable[[], Pt2Spec]:
    def build() -> Pt2Spec:
        z = models.MODELS[name]()
        calibration = _calibration(z, name)
        zoo_state = {k: v.clone() for k, v in z.eager.state_dict().items()}
        float_model = _float_model(z, name, calibration)
        # What differs from <name>.pt (mobilenet_v2: its BatchNorms' running statistics).
        float_state = {k: v for k, v in float_model.state_dict().items() if not torch.equal(v, zoo_state[k])}
        how = ("BatchNorm statistics re-estimated on the calibration inputs (the random init's activations "
               "vanish below a uint8 step), then " if name == "mobilenet_v2" else "same weights as the zoo model; ")
        return Pt2Spec(quantize_pt2e(float_model, calibration), z.inputs, z.inputs2, {"x": {0: INT8_BATCH}}, None,
                       f"{how}PT2E static int8 (torchao prepare_pt2e / convert_pt2e, X86InductorQuantizer default "
                       f"config: per-channel int8 weights, uint8 activations), calibrated on the zoo's "
                       f"{len(calibration)} input sets; dynamic batch (1..64)", True,
                       example=models._inp(_batched_example(calibration)), float_model=float_model,
                       float_origin=(name + ".pt", float_state))
    return build


# --------------------------------------------------------------------------- registry

_INCEPTION_FORK_NOTE = ("torch.jit.fork/wait run inline in eager Python, so export traces branch 1 "
                        "in sequence: the program has no fork (same graph as inception_nofork)")


def _plain(name, note="same module as the TorchScript model"):
    return lambda: _zoo(name, note)


# program name -> builder returning a Pt2Spec.
PT2_MODELS = collections.OrderedDict([
    ("resnet18", _plain("resnet18")),
    ("mobilenet_v2", _plain("mobilenet_v2")),
    ("mlp", _plain("mlp")),
    ("deepandwide", _plain("deepandwide")),
    ("transformer", _plain("transformer", "same module; export traces the ordinary (non-fast-path) "
                                         "encoder layer")),
    ("inception_fork", _plain("inception_fork", _INCEPTION_FORK_NOTE)),
    ("inception_nofork", _plain("inception_nofork")),
    ("control_flow", _control_flow),
    ("multi_output", _plain("multi_output", "same module; y given, scale specialised to 3.0")),
    ("chain_mul100", _plain("chain_mul100")),
    ("chain_add100", _plain("chain_add100")),
    ("lstm_tagger", _plain("lstm_tagger", "same module; nn.LSTM stays one aten.lstm.input node in the "
                                         "export IR and is unrolled over T=20 in core ATen")),
    ("gru_encoder", _plain("gru_encoder", "same module; nn.GRU stays one aten.gru.input node in the "
                                         "export IR and is unrolled over T=16 in core ATen")),
] + [(name, _plain(name, "same module; inputs2 has the inputs' shapes")) for name in models.FAMILY_MODELS] + [
    ("mlp.dyn", _mlp_dyn),
    ("resnet18.dyn", _resnet18_dyn),
    ("cond_model", _cond_model),
    ("while_model", _while_model),
    ("pytree_io", _pytree_io),
    ("pt2e_convnet", _pt2e_convnet),
] + [(name + ".int8", _int8(name)) for name in INT8_MODELS])

# Zoo models that torch.export cannot export at all, with the reason (written to
# pt2_manifest.json as exported=false). Empty while every model has a program; kept so a
# model that stops exporting is recorded, not silently dropped.
NOT_EXPORTED: Dict[str, str] = {}
