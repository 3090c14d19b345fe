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

torch.set_num_threads(1)

ZOO = os.path.join(os.environ.get("TEST_SRCDIR", ""), "brisk", "tools", "zoo")
TMP = os.environ.get("TEST_TMPDIR") or tempfile.mkdtemp()
OPTION_SETS = {"default": {}, "fallback_only": {"fallback_only": True}, "no_native": {"use_native": False}}


def zoo(name, suffix=".pt"):
    return os.path.join(ZOO, name + suffix)


def save_scripted(module, name):
    path = os.path.join(TMP, name + ".pt")
    torch.jit.script(module).save(path)
    return path


def assert_same(test, got, expected, what):
    if isinstance(expected, torch.Tensor):
        test.assertIsInstance(got, torch.Tensor, what)
        test.assertEqual(got.shape, expected.shape, what)
        scale = max(1.0, expected.abs().max().item()) if expected.numel() else 1.0
        test.assertTrue(torch.allclose(got, expected, rtol=1e-5, atol=1e-5 * scale), what)
    elif isinstance(expected, dict):
        test.assertIsInstance(got, dict, what)
        test.assertEqual(sorted(got), sorted(expected), what)
        for k in expected:
            assert_same(test, got[k], expected[k], f"{what}[{k!r}]")
    elif isinstance(expected, (tuple, list)):
        # Named tuples: torch and brisk each make their own class; name and fields match.
        test.assertIsInstance(got, tuple if isinstance(expected, tuple) else list, what)
        test.assertEqual(type(got).__name__, type(expected).__name__, what)
        test.assertEqual(getattr(got, "_fields", None), getattr(expected, "_fields", None), what)
        test.assertEqual(len(got), len(expected), what)
        for i, (g, e) in enumerate(zip(got, expected)):
            assert_same(test, g, e, f"{what}[{i}]")
    else:
        test.assertEqual(got, expected, what)


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


if __name__ == "__main__":
    junit.main("hardening_test")
