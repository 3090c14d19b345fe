"""Exports the while_loop test programs (torch._higher_order_ops.while_loop) with
torch.export, their inputs and ep.module()'s outputs, for tests/pt2/while_loop_test.cc.

Usage: export_while_loops.py --out DIR --jit-pickle PATH/jit_pickle.py
Writes, per program, <name>.pt2 (export IR) and <name>_core.pt2 (run_decompositions),
and per input case <case>.inputs.pt / <case>.expected.pt; plus damaged copies whose
cond_graph returns a float tensor or whose body_graph drops a carried value.
"""
import argparse
import importlib.util
import json
import os
import zipfile

import torch
from torch._higher_order_ops.while_loop import while_loop
from torch.export import Dim


class Counter(torch.nn.Module):
    """Carried (i: 0-d int64, h: [B, 16]); runs while i < n (n an input tensor). The body
    reads parameters, the outer x and n (additional inputs) and the batch size
    (sym_size: the batch is dynamic)."""

    def __init__(self):
        super().__init__()
        self.inp = torch.nn.Linear(16, 16)
        self.fc = torch.nn.Linear(16, 16)

    def forward(self, x, n):
        def cond(i, h):
            return i < n

        def body(i, h):
            return i + 1, torch.tanh(self.fc(h)) + x + h.shape[0] * 0.01

        i, h = while_loop(cond, body, (torch.zeros((), dtype=torch.int64), self.inp(x)))
        return h, i


class NoAdditional(torch.nn.Module):
    """One carried value, no additional inputs: h = 2h + 1 while h.sum() < 100."""

    def forward(self, x):
        (h,) = while_loop(lambda h: h.sum() < 100, lambda h: (h * 2 + 1,), (x,))
        return h


class NestedCond(torch.nn.Module):
    """A torch.cond inside the body, each branch with its own parameters."""

    def __init__(self):
        super().__init__()
        self.up = torch.nn.Linear(8, 8)
        self.down = torch.nn.Linear(8, 8)

    def forward(self, x, n):
        def cond(i, h):
            return i < n

        def body(i, h):
            h2 = torch.cond(h.sum() > 0, lambda h: torch.sigmoid(self.up(h)) - 0.6,
                            lambda h: torch.relu(self.down(h)) + 0.3, (h,))
            return i + 1, h2

        return while_loop(cond, body, (torch.zeros((), dtype=torch.int64), x))


class NestedWhile(torch.nn.Module):
    """A while_loop inside a while_loop's body; the inner body uses the (dynamic) batch
    size as an int (h * B: a SymInt where mul.Tensor wants a tensor) and in a shape
    (ones(B, 1))."""

    def forward(self, x, n):
        def inner(j, h):
            return j + 1, h * 0.5 + torch.ones(h.shape[0], 1) * (h.shape[0] * j)

        def outer(i, h):
            _, h2 = while_loop(lambda j, h: j < i, inner, (torch.zeros((), dtype=torch.int64), h))
            return i + 1, torch.tanh(h2 / (h.shape[0] * 4))

        return while_loop(lambda i, h: i < n, outer, (torch.zeros((), dtype=torch.int64), x))


def damaged(src, dst, edit):
    """A copy of archive src whose program JSON went through edit(program)."""
    writer = torch._C.PyTorchFileWriter(dst)
    with zipfile.ZipFile(src) as z:
        for info in z.infolist():
            name = info.filename.split("/", 1)[1]
            if name in (".data/version", ".data/serialization_id"):
                continue  # the writer adds its own
            body = z.read(info.filename)
            if name == "models/model.json":
                program = json.loads(body)
                edit(program)
                body = json.dumps(program).encode()
            writer.write_record(name, body, len(body))
    writer.write_end_of_file()


def while_node(program):
    return next(n for n in program["graph_module"]["graph"]["nodes"]
                if n["target"] == "torch.ops.higher_order.while_loop")


def cond_returns_float(program):
    cond = while_node(program)["inputs"][0]["arg"]["as_graph"]["graph"]
    cond["outputs"] = [cond["inputs"][0]]  # h, a float [2, 2] tensor


def body_drops_a_value(program):
    body = while_node(program)["inputs"][1]["arg"]["as_graph"]["graph"]
    body["outputs"] = body["outputs"][:1]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--jit-pickle", required=True)
    a = ap.parse_args()
    spec = importlib.util.spec_from_file_location("jit_pickle", a.jit_pickle)
    jit_pickle = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(jit_pickle)
    torch.manual_seed(0)
    path = lambda n: os.path.join(a.out, n)

    def export(name, module, args, dynamic=None, cases=()):
        ep = torch.export.export(module, args, dynamic_shapes=dynamic)
        torch.export.save(ep, path(name + ".pt2"))
        torch.export.save(ep.run_decompositions(), path(name + "_core.pt2"))
        for case, inputs in cases:
            jit_pickle.save({"args": list(inputs), "kwargs": {}}, path(case + ".inputs.pt"))
            with torch.no_grad():
                expected = ep.module()(*inputs)
                eager = module(*inputs)
            torch.testing.assert_close(expected, eager)
            jit_pickle.save(expected, path(case + ".expected.pt"))

    n = lambda k: torch.tensor(k)
    counter = Counter().eval()
    export("while_counter", counter, (torch.randn(4, 16), n(3)),
           {"x": {0: Dim("batch", min=1, max=64)}, "n": None},
           [("while_trips0", (torch.randn(2, 16), n(0))),
            ("while_trips1", (torch.randn(5, 16), n(1))),
            ("while_trips9", (torch.randn(3, 16), n(9)))])
    x = torch.rand(2, 2)
    export("while_no_additional", NoAdditional(), (x,), None, [("while_no_additional", (x,))])
    g = torch.Generator().manual_seed(5)
    export("while_nested_cond", NestedCond().eval(), (torch.randn(3, 8), n(2)), None,
           [("while_nested_cond", (torch.randn(3, 8, generator=g), n(6)))])

    export("while_nested_while", NestedWhile(), (torch.randn(3, 4), n(3)),
           {"x": {0: Dim("batch", min=1, max=64)}, "n": None},
           [("while_nested_while", (torch.randn(6, 4), n(4)))])

    damaged(path("while_no_additional.pt2"), path("while_bad_cond.pt2"), cond_returns_float)
    damaged(path("while_counter.pt2"), path("while_bad_body.pt2"), body_drops_a_value)


if __name__ == "__main__":
    main()
