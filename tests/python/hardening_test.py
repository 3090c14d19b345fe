"""What a hostile new user tried, through the Python binding: each case once crashed,
asserted, lied or refused a valid model. Every one now gives the interpreter's result
or one clear brisk.Error."""
import os
import sys
import tempfile
import unittest
from typing import Dict, List, NamedTuple

os.environ.setdefault("OMP_NUM_THREADS", "1")
import torch  # noqa: E402

import brisk  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import junit  # noqa: E402
from stdout_capture import capture_stdout  # noqa: E402

# tools/outputs_close.py, two directories up (runfiles or source tree).
sys.path.append(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools"))
import outputs_close  # noqa: E402

torch.set_num_threads(1)

ZOO = os.path.join(os.environ.get("TEST_SRCDIR", ""), "brisk", "tools", "zoo")
TMP = os.environ.get("TEST_TMPDIR") or tempfile.mkdtemp()
OPTION_SETS = {"default": {}, "fallback_only": {"fallback_only": True}, "no_native": {"use_native": False}}
# The interpreter's result: rtol 1e-5, atol 1e-5 * the reference's largest |value| (at
# least 1); dict keys in any order; named tuples by kind, class name and _fields (torch and
# brisk each make their own class for a TorchScript NamedTuple).
SAME = outputs_close.Rules(rtol=1e-5, atol_scale=1e-5, scale_floor=1.0, sequences="named")


def zoo(name, suffix=".pt"):
    return os.path.join(ZOO, name + suffix)


def save_scripted(module, name):
    path = os.path.join(TMP, name + ".pt")
    torch.jit.script(module).save(path)
    return path


def assert_same(test, got, expected, what):
    """Fails `test` (AssertionError, a unittest failure) saying where and why they differ."""
    outputs_close.check(got, expected, SAME, what)


def rewrite_program(src, dst, edit):
    """Copies the PT2 archive `src` to `dst` with edit(program) applied to its model.json."""
    import json
    import zipfile
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w") as zout:
        for info in zin.infolist():
            data = zin.read(info.filename)
            if info.filename.endswith("models/model.json"):
                program = json.loads(data)
                edit(program)
                data = json.dumps(program).encode()
            zout.writestr(info, data)


class ReturnedTwice(unittest.TestCase):
    """A value an If/Loop body returns at several positions reaches all of them."""

    def test_transformer_with_causal_mask(self):
        # nn.MultiheadAttention does `q, k, v = a, a, a` on the masked path.
        ref = torch.jit.load(zoo("transformer")).eval()
        m = brisk.load(zoo("transformer"))
        g = torch.Generator().manual_seed(7)
        for seq in (10, 17):
            x = torch.randn(1, seq, 256, generator=g)
            causal = torch.nn.Transformer.generate_square_subsequent_mask(seq)
            for mask in (causal, torch.zeros(seq, seq)):
                x_copy = x.clone()
                with torch.no_grad():
                    expected = ref(x, mask=mask)
                for _ in range(2):
                    assert_same(self, m(x, mask=mask), expected, f"transformer seq={seq}")
                self.assertTrue(torch.equal(x, x_copy), "input changed")

    def test_if_and_loop(self):
        class M(torch.nn.Module):
            def forward(self, x, c: bool):
                if c:
                    y = x * 2
                    r = (y, y)
                else:
                    r = (x, x)
                z = x
                w = x
                for _ in range(3):
                    z2 = z * 2 + w
                    z, w = z2, z2
                return r[0], r[1], z, w

        path = save_scripted(M(), "if_loop_twice")
        ref = torch.jit.load(path)
        x = torch.randn(3, 4)
        for name, opts in OPTION_SETS.items():
            m = brisk.load(path, **opts)
            for c in (True, False):
                assert_same(self, m(x, c), ref(x, c), f"{name} c={c}")


class VarargOps(unittest.TestCase):
    """prim::Print and aten::format take a variable number of arguments; the fallback
    path now passes the count as the interpreter does."""

    class Printer(torch.nn.Module):
        def forward(self, x, tag: str):
            print("n is", x.size(0) * 50000000)
            print("shape", x.shape, x.dim())
            print(x.dim(), 2.5, True, tag)
            return "{} and {}: {}".format(x.dim(), x.size(0), tag), f"{tag}={x.size(1)}"

    def test_print_and_format_match_interpreter(self):
        path = save_scripted(self.Printer(), "printer")
        ref = torch.jit.load(path)
        x = torch.randn(2, 3)
        expected, expected_text = capture_stdout(lambda: ref(x, "tail"))
        self.assertIn("shape [2, 3] 2", expected_text)
        for name, opts in OPTION_SETS.items():
            m = brisk.load(path, **opts)
            got, text = capture_stdout(lambda: m(x, "tail"))
            self.assertEqual(text, expected_text, name)
            self.assertEqual(got, expected, name)


class NamedTupleOutput(unittest.TestCase):
    class Pair(NamedTuple):
        low: torch.Tensor
        high: torch.Tensor

    def test_named_tuple_output(self):
        Pair = self.Pair

        class M(torch.nn.Module):
            def forward(self, x) -> Pair:
                return Pair(x.clamp(max=0), x.clamp(min=0))

        path = save_scripted(M(), "named_tuple")
        ref = torch.jit.load(path)
        x = torch.randn(5)
        expected = ref(x)
        for name, opts in OPTION_SETS.items():
            m = brisk.load(path, **opts)
            got = m(x)
            assert_same(self, got, expected, name)
            self.assertEqual(got._fields, ("low", "high"), name)
            self.assertTrue(torch.equal(got.high, expected.high), name)


class Containers(unittest.TestCase):
    """Lists and dicts built inside the model load under every option set (with
    use_native=False they used to have no kernel at all)."""

    def test_lists_and_dicts(self):
        class M(torch.nn.Module):
            def forward(self, x):
                parts: List[torch.Tensor] = [x, x * 2]
                parts.append(x + 1)
                d: Dict[str, torch.Tensor] = {"a": parts[0], "b": parts[2]}
                d["c"] = torch.cat(parts)
                return d["c"], len(parts), d["a"] + d["b"]

        path = save_scripted(M(), "containers")
        ref = torch.jit.load(path)
        for name, opts in OPTION_SETS.items():
            m = brisk.load(path, **opts)
            for shape in ((2, 3), (4, 1)):
                x = torch.randn(*shape)
                assert_same(self, m(x), ref(x), f"{name} {shape}")

    def test_zoo_without_native_kernels(self):
        for name in ("mlp", "deepandwide", "transformer", "inception_fork", "control_flow", "multi_output"):
            m = brisk.load(zoo(name), use_native=False)
            ref = torch.jit.load(zoo(name)).eval()
            d = torch.load(zoo(name, ".inputs.pt"))
            with torch.no_grad():
                expected = ref(*d["args"], **d["kwargs"])
            got = m(*d["args"], **d["kwargs"])
            assert_same(self, got, expected, name)


class BadValues(unittest.TestCase):
    def assert_error(self, fn, pattern):
        with self.assertRaises(brisk.Error) as cm:
            fn()
        self.assertNotIn("\n", str(cm.exception))
        self.assertRegex(str(cm.exception), pattern)

    def test_none_for_tensor_and_bool(self):
        path = save_scripted(VarargOps.Printer(), "printer_none")
        m = brisk.load(path)
        self.assert_error(lambda: m(None, "t"), r"input 'x' \(#0\): expected Tensor, got None")
        self.assert_error(lambda: m(torch.randn(2, 3), None), r"input 'tag' \(#1\): expected str, got None")

    def test_numeric_options_are_bounded(self):
        for key, value in (("intra_op_threads", 100000), ("intra_op_threads", 2**70),
                           ("inter_op_threads", 4294967295), ("max_parallel_ops", 0),
                           ("runtime_idle_ms", -1)):
            self.assert_error(lambda: brisk.load(zoo("mlp"), **{key: value}), rf"option '{key}' must be in \[")

    def test_not_regular_files(self):
        fifo = os.path.join(TMP, "model.fifo")
        if not os.path.exists(fifo):
            os.mkfifo(fifo)
        self.assert_error(lambda: brisk.load(fifo), "FIFO")
        self.assert_error(lambda: brisk.load("/dev/zero"), "character device")
        self.assert_error(lambda: brisk.load(TMP), "directory")


class RoundTwo(unittest.TestCase):
    """The second hostile round: PT2 pytrees and options."""

    def assert_error(self, fn, pattern):
        BadValues.assert_error(self, fn, pattern)

    def test_pt2_namedtuple_output(self):
        import collections
        from torch.utils._pytree import _register_namedtuple
        Pair = collections.namedtuple("Pair", ["low", "high"])
        _register_namedtuple(Pair, serialized_type_name="brisk_test.Pair")

        class M(torch.nn.Module):
            def forward(self, x):
                return Pair(x.clamp(max=0), x.clamp(min=0))

        x = torch.randn(5)
        path = os.path.join(TMP, "namedtuple_out.pt2")
        ep = torch.export.export(M(), (x,))
        torch.export.save(ep, path)
        expected = ep.module()(x)
        for name, opts in OPTION_SETS.items():
            got = brisk.load(path, **opts)(x)
            assert_same(self, got, expected, name)  # type name and _fields too
            self.assertEqual(got._fields, ("low", "high"), name)

    def test_pt2_dict_input_with_an_extra_key(self):
        class M(torch.nn.Module):
            def forward(self, d: Dict[str, torch.Tensor]):
                return d["a"] + d["b"]

        a, b = torch.randn(3), torch.randn(3)
        path = os.path.join(TMP, "dict_in.pt2")
        ep = torch.export.export(M(), ({"a": a, "b": b},))
        torch.export.save(ep, path)
        m = brisk.load(path)
        assert_same(self, m({"a": a, "b": b}), a + b, "exact keys")
        with self.assertRaises(Exception):
            ep.module()({"a": a, "b": b, "c": a})  # the reference refuses it too
        self.assert_error(lambda: m({"a": a, "b": b, "c": a}), r"input 'd': unexpected key 'c'")

    def test_pt2_cond_with_a_constant_int_predicate(self):
        # An archive whose torch.cond predicate is {"as_int": 1} (torch runs it: 1 is truthy).
        class M(torch.nn.Module):
            def forward(self, x):
                return torch.cond(x.sum() > 0, lambda x: x + 1, lambda x: x - 1, (x,))

        x = -torch.rand(4)  # the exported predicate would take the false branch
        src = os.path.join(TMP, "cond_src.pt2")
        torch.export.save(torch.export.export(M(), (x,)), src)
        path = os.path.join(TMP, "cond_int_pred.pt2")

        def int_predicate(program):
            conds = [n for n in program["graph_module"]["graph"]["nodes"]
                     if n["target"] == "torch.ops.higher_order.cond"]
            self.assertEqual(len(conds), 1)
            conds[0]["inputs"][0]["arg"] = {"as_int": 1}

        rewrite_program(src, path, int_predicate)
        expected = torch.export.load(path).module()(x)
        self.assertTrue(torch.equal(expected, x + 1), "torch takes the true branch")
        for name, opts in OPTION_SETS.items():
            assert_same(self, brisk.load(path, **opts)(x), expected, name)

    def test_pt2_damaged_program_fields(self):
        # Fields brisk once ignored; torch refuses each of these programs too.
        def graph(p):
            return p["graph_module"]["graph"]

        def first_input(p):
            name = p["graph_module"]["signature"]["input_specs"][-1]["user_input"]["arg"]["as_tensor"]["name"]
            return graph(p)["tensor_values"][name]

        def set_dtype(code):
            def edit(p):
                first_input(p)["dtype"] = code
            return edit

        def set_first_size(p):
            first_input(p)["sizes"][0] = {"as_int": -5}

        cases = {
            "outputs emptied": (lambda p: graph(p).__setitem__("outputs", []), "outputs but the signature"),
            "output names an undefined value":
                (lambda p: graph(p).__setitem__("outputs", [{"as_tensor": {"name": "nowhere"}}]), "graph output 0"),
            "output is a constant": (lambda p: graph(p).__setitem__("outputs", [{"as_int": 3}]), "graph output 0"),
            "negative static size": (set_first_size, "negative size"),
            "dtype 999": (set_dtype(999), "unknown dtype 999"),
            "dtype -1": (set_dtype(-1), "unknown dtype -1"),
            "dtype as a string": (set_dtype("float"), "is not a dtype code"),
        }
        for what, (edit, needle) in cases.items():
            path = os.path.join(TMP, "damaged_" + what.replace(" ", "_") + ".pt2")
            rewrite_program(zoo("mlp", ".pt2"), path, edit)
            self.assert_error(lambda: brisk.load(path), needle)

    def test_pt2_relations_between_dims(self):
        from torch.export import Dim

        class M(torch.nn.Module):
            def forward(self, x, y, z):
                return x + y, z[1:] * 2

        b = Dim("b", min=2, max=64)
        args = (torch.randn(4, 8), torch.randn(4, 8), torch.randn(5, 8))
        ep = torch.export.export(M(), args, dynamic_shapes=({0: b}, {0: b}, {0: b + 1}))
        path = os.path.join(TMP, "dim_relations.pt2")
        torch.export.save(ep, path)
        m = brisk.load(path)
        for n in (4, 9):  # a second shape too
            ok = (torch.randn(n, 8), torch.randn(n, 8), torch.randn(n + 1, 8))
            assert_same(self, m(*ok), ep.module()(*ok), f"b = {n}")
        bad = {
            "shared dim": ((torch.randn(4, 8), torch.randn(3, 8), torch.randn(5, 8)),
                           r"input 'y' dim 0 is 3, but the program requires it to equal input 'x' dim 0 \(4\)"),
            "derived dim": ((torch.randn(4, 8), torch.randn(4, 8), torch.randn(6, 8)),
                            r"input 'z' dim 0 is 6, but the program requires s\d+ \+ 1 = 5"),
        }
        for what, (inputs, pattern) in bad.items():
            with self.assertRaises(Exception, msg=what):
                ep.module()(*inputs)  # the reference's guard refuses it too
            self.assert_error(lambda: m(*inputs), pattern)

    def test_pt2_program_for_a_torchscript_file(self):
        self.assert_error(lambda: brisk.load(zoo("mlp"), pt2_program="bogus"),
                          r"pt2_program 'bogus' names a program of a PT2 archive")
        brisk.load(zoo("mlp"), pt2_program="")  # the default

    def test_plugin_option_beyond_int64(self):
        self.assert_error(lambda: brisk.load(zoo("mlp"), plugin_options={"ops_cpu.small_gemm": 2**70}),
                          r"plugin option 'ops_cpu.small_gemm' must fit in a 64-bit int")

    def test_zero_threads_means_no_preference(self):
        (x,), _ = torch.load(zoo("mlp", ".inputs.pt")).values()
        m = brisk.load(zoo("mlp"), intra_op_threads=0, inter_op_threads=0)
        assert_same(self, m(x), torch.jit.load(zoo("mlp"))(x), "threads 0")


class Messages(unittest.TestCase):
    """Errors that were right but said too little: each names where the bad value is."""

    def assert_error(self, fn, pattern):
        BadValues.assert_error(self, fn, pattern)

    def test_none_and_wrong_leaves_in_pytree_inputs(self):
        m = brisk.load(zoo("pytree_io", ".pt2"))

        def call(feats, pair, scale, extra):
            return lambda: m(feats, pair, scale=scale, extra=extra)

        t = torch.randn
        good = ({"x": t(2, 8), "y": t(2, 8)}, (t(2, 8), t(2, 8)), t(1), {"bias": t(8)})
        m(*good[:2], scale=good[2], extra=good[3])
        self.assert_error(call({"x": t(2, 8), "y": None}, *good[1:]),
                          r"input 'feats' \(#0\): feats\['y'\] must be Tensor, got None")
        self.assert_error(call(good[0], (t(2, 8), None), *good[2:]),
                          r"input 'pair' \(#1\): pair\[1\] must be Tensor, got None")
        self.assert_error(call(*good[:3], {"bias": None}), r"extra\['bias'\] must be Tensor, got None")
        self.assert_error(call({"x": t(2, 8), "y": 3}, *good[1:]),
                          r"argument 'feats': element \['y'\] is a Python int, expected Tensor")

    def test_sparse_and_mkldnn_weights_in_a_swap(self):
        m = brisk.load(zoo("mlp"))
        w = torch.jit.load(zoo("mlp")).state_dict()["fc1.weight"]
        for bad, layout in ((w.to_sparse(), "Sparse"), (w.to_mkldnn(), "Mkldnn")):
            self.assert_error(lambda: m.swap_weights({"fc1.weight": bad}),
                              rf"weight 'fc1.weight' is Float\[512, 256\], the replacement is Float\[512, 256\] "
                              rf"\({layout} layout\); a weight must be a dense, strided CPU tensor")

    def test_damaged_zip_archives_name_the_file_not_miniz(self):
        with tempfile.TemporaryDirectory() as d:
            for suffix in (".pt", ".pt2"):
                data = open(zoo("mlp", suffix), "rb").read()
                path = os.path.join(d, "cut" + suffix)
                with open(path, "wb") as f:
                    f.write(data[: len(data) // 2])
                with self.assertRaises(brisk.Error) as cm:
                    brisk.load(path)
                msg = str(cm.exception)
                self.assertIn(path, msg)
                self.assertIn("not a readable zip archive (failed finding central directory): "
                              "the file is damaged or truncated", msg)
                self.assertNotIn("miniz", msg)


if __name__ == "__main__":
    junit.main("hardening_test")
