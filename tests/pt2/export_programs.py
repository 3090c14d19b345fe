"""Exports the PT2 test programs with torch.export, plus their inputs and the reference
outputs of ep.module(), for tests/pt2/pt2_test.cc.

Usage: export_programs.py --out DIR --jit-pickle PATH/jit_pickle.py
Writes <name>.pt2, <name>.inputs.pt ({"args": [...], "kwargs": {...}}) and
<name>.expected.pt for each program, and the damaged archives the error tests load.
"""
import argparse
import importlib.util
import json
import os
import zipfile

import torch
from torch.export.pt2_archive._package import package_pt2


class Mlp(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(16, 32)
        self.fc2 = torch.nn.Linear(32, 8)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


class ConvNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.bn = torch.nn.BatchNorm2d(8)
        self.conv2 = torch.nn.Conv2d(8, 8, 3, padding=1)
        self.pool = torch.nn.AdaptiveAvgPool2d(1)

    def forward(self, x):
        y = torch.relu(self.bn(self.conv(x)))
        y = y + self.conv2(y) * 0.5
        return self.pool(y).flatten(1)


class Structured(torch.nn.Module):
    """Tuple and dict inputs, a keyword-only input, a dict/tuple/None output."""

    def forward(self, x, pair, named, *, scale):
        a, b = pair
        return {"sum": x + a + named["u"], "prod": (x * b, named["v"] * scale), "nothing": None}


class InplaceTail(torch.nn.Module):
    """relu, then in-place relu_ and add_ on its result, as eager ResNets write them
    (ReLU(inplace=True), `out += identity`): torch.export's aten IR keeps the in-place
    ops, which write only a value made and read inside the chain."""

    def forward(self, x, y):
        a = torch.relu(x)
        a = torch.relu_(a)
        a += y
        return a


class Dyn(torch.nn.Module):
    """A dynamic batch: sym_size and Python int arithmetic on it."""

    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(8, 4)

    def forward(self, x):
        return self.lin(x).reshape(x.shape[0] * 2, -1)


class Counter(torch.nn.Module):
    """Mutates a buffer in place, which brisk refuses."""

    def __init__(self):
        super().__init__()
        self.register_buffer("count", torch.zeros(1))

    def forward(self, x):
        self.count.add_(1)
        return x + self.count


def randomize_bn(m):
    for mod in m.modules():
        if isinstance(mod, torch.nn.BatchNorm2d):
            mod.running_mean.uniform_(-0.5, 0.5)
            mod.running_var.uniform_(0.5, 1.5)
            mod.weight.data.uniform_(0.5, 1.5)
    return m


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--jit-pickle", required=True)
    a = ap.parse_args()
    spec = importlib.util.spec_from_file_location("jit_pickle", a.jit_pickle)
    jit_pickle = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(jit_pickle)
    torch.manual_seed(0)

    def save_io(name, ep, args, kwargs):
        jit_pickle.save({"args": list(args), "kwargs": kwargs}, os.path.join(a.out, name + ".inputs.pt"))
        with torch.no_grad():
            out = ep.module()(*args, **kwargs)
        jit_pickle.save(out, os.path.join(a.out, name + ".expected.pt"))

    path = lambda n: os.path.join(a.out, n)
    mlp_x = (torch.randn(4, 16),)
    mlp = torch.export.export(Mlp().eval(), mlp_x)
    torch.export.save(mlp, path("mlp.pt2"))  # program "model"
    save_io("mlp", mlp, mlp_x, {})

    mlp_core = mlp.run_decompositions()
    package_pt2(path("mlp_core.pt2"), exported_programs={"mlp_core": mlp_core})
    save_io("mlp_core", mlp_core, mlp_x, {})

    conv_x = (torch.randn(2, 3, 16, 16),)
    conv = torch.export.export(randomize_bn(ConvNet()).eval(), conv_x)
    package_pt2(path("convnet.pt2"), exported_programs={"convnet": conv})
    save_io("convnet", conv, conv_x, {})

    conv_core = conv.run_decompositions()  # multi-output nodes (batch norm, max pool) and getitem
    package_pt2(path("convnet_core.pt2"), exported_programs={"convnet_core": conv_core})
    save_io("convnet_core", conv_core, conv_x, {})

    tail_x = (torch.randn(3, 5), torch.randn(3, 5))
    tail = torch.export.export(InplaceTail(), tail_x)
    package_pt2(path("inplace_tail.pt2"), exported_programs={"inplace_tail": tail})
    save_io("inplace_tail", tail, tail_x, {})

    dyn_x = (torch.randn(5, 8),)
    batch = torch.export.Dim("batch", min=1, max=64)
    dyn = torch.export.export(Dyn().eval(), dyn_x, dynamic_shapes={"x": {0: batch}})
    package_pt2(path("dynamic.pt2"), exported_programs={"dynamic": dyn})
    save_io("dynamic", dyn, (torch.randn(7, 8),), {})

    counter = torch.export.export(Counter(), (torch.randn(2),))
    package_pt2(path("counter.pt2"), exported_programs={"counter": counter})
    package_pt2(path("counter_core.pt2"), exported_programs={"counter": counter.run_decompositions()})

    s_args = (torch.randn(3, 4), (torch.randn(3, 4), torch.randn(3, 4)), {"u": torch.randn(3, 4), "v": torch.randn(4)})
    s_kwargs = {"scale": torch.randn(4)}
    structured = torch.export.export(Structured(), s_args, s_kwargs)
    package_pt2(path("structured.pt2"), exported_programs={"structured": structured})
    save_io("structured", structured, s_args, s_kwargs)

    package_pt2(path("multi.pt2"), exported_programs={"mlp": mlp, "convnet": conv})

    # PT2E's quantize / dequantize per tensor (PyTorch defines them in Python only):
    # uint8 with a zero point and int8, on an NCHW input of 210 values (the kernels'
    # vector loops leave a tail) with exact half steps (scale 0.25: 0.125 -> 0.5 rounds to
    # even) and values past both bounds, and on a channels-last input. The raw uint8
    # result is an output too, so the quantization itself is compared bit for bit.
    importlib.import_module("torch.ao.quantization.fx._decomposed")  # registers quantized_decomposed

    class QuantizeRoundTrip(torch.nn.Module):
        def forward(self, x, y):
            qd = torch.ops.quantized_decomposed
            qx = qd.quantize_per_tensor(x, 0.25, 3, 0, 255, torch.uint8)
            qy = qd.quantize_per_tensor(y, 0.05, 0, -128, 127, torch.int8)
            return (qd.dequantize_per_tensor(qx, 0.25, 3, 0, 255, torch.uint8), qx,
                    qd.dequantize_per_tensor(qy, 0.05, 0, -128, 127, torch.int8))

    halves = (torch.arange(210, dtype=torch.float32) - 105) * 0.125  # every multiple of half a step
    q_args = ((halves + torch.randn(210) * (torch.arange(210) % 3 == 0)).reshape(2, 3, 5, 7),
              (torch.randn(1, 8, 3, 3) * 4).contiguous(memory_format=torch.channels_last))
    q_ep = torch.export.export(QuantizeRoundTrip(), q_args)
    package_pt2(path("quantize_roundtrip.pt2"), exported_programs={"model": q_ep})
    save_io("quantize_roundtrip", q_ep, q_args, {})

    # A PT2E op brisk does not run (dynamic quantization's choose_qparams): a C++ process
    # has no schema for it either.

    class ChooseQparams(torch.nn.Module):
        def forward(self, x):
            scale, zero_point = torch.ops.quantized_decomposed.choose_qparams.tensor(x, 0, 255, 1e-5, torch.uint8)
            return x / scale + zero_point

    package_pt2(path("choose_qparams.pt2"),
                exported_programs={"model": torch.export.export(ChooseQparams(), (torch.randn(4, 4),))})

    # Damaged copies: the first half of the bytes, and the schema's major version set to 99.
    with open(path("mlp.pt2"), "rb") as f:
        data = f.read()
    with open(path("truncated.pt2"), "wb") as f:
        f.write(data[: len(data) // 2])
    writer = torch._C.PyTorchFileWriter(path("schema99.pt2"))
    with zipfile.ZipFile(path("mlp.pt2")) as z:
        for info in z.infolist():
            name = info.filename.split("/", 1)[1]
            if name in (".data/version", ".data/serialization_id"):
                continue  # the writer adds its own
            body = z.read(info.filename)
            if name == "models/model.json":
                program = json.loads(body)
                program["schema_version"]["major"] = 99
                body = json.dumps(program).encode()
            writer.write_record(name, body, len(body))
    writer.write_end_of_file()


if __name__ == "__main__":
    main()
