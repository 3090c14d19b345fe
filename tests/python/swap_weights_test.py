"""Module.swap_weights: brisk's outputs change exactly as eager's do with the new weights.

For zoo models through both frontends (<name>.pt TorchScript, <name>.pt2 / .core.pt2
torch.export), from a state_dict and from another model file: the model's own eager
nn.Module (tools/zoo/models.py, same seeds, so the same weights as the files) gets the
same new weights and is the reference. Covered: folds that depend on weights (resnet18's
conv-bn fold, mlp's packed small-GEMM weights, core IR's folded permute(weight)),
replacements that accumulate over calls, checks (unknown name, shape, dtype, not a
tensor) that leave the module unchanged, and runs in flight during a swap, which finish
on the old weights or the new ones, never a mix.
"""
import copy
import os
import sys
import tempfile
import threading
import unittest

os.environ.setdefault("OMP_NUM_THREADS", "1")
import torch  # noqa: E402

import brisk  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import junit  # noqa: E402

torch.set_num_threads(1)

ZOO = os.path.join(os.environ.get("TEST_SRCDIR", ""), "brisk", "tools", "zoo")
sys.path.insert(0, ZOO)
import models  # noqa: E402  (tools/zoo/models.py: the eager twins of the zoo files)

# tools/outputs_close.py, two directories up (runfiles or source tree).
sys.path.append(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools"))
import outputs_close  # noqa: E402

RTOL, ATOL_SCALE = 1e-4, 1e-5
# rtol, and an atol of ATOL_SCALE * the reference's largest |value| (at least 1).
CLOSE = outputs_close.Rules(rtol=RTOL, atol_scale=ATOL_SCALE, scale_floor=1.0)
FORMATS = {"torchscript": ".pt", "pt2": ".pt2", "core": ".core.pt2"}


def zoo(file):
    return os.path.join(ZOO, file)


def assert_close(test, got, expected, what):
    """Fails `test` (AssertionError, a unittest failure) saying where and why they differ."""
    outputs_close.check(got, expected, CLOSE, what)


def new_weights(names, eager, seed):
    """Every floating-point weight brisk names, scaled elementwise by a factor in
    [0.5, 1.5): new values everywhere, signs kept (batch norm variances stay positive)."""
    g = torch.Generator().manual_seed(seed)
    sd = eager.state_dict()
    out = {}
    for name in names:
        t = sd[name]
        if t.is_floating_point():
            out[name] = t * (0.5 + torch.rand(t.shape, generator=g, dtype=t.dtype))
    return out


def eager_with(eager, weights):
    e = copy.deepcopy(eager)
    e.load_state_dict(weights, strict=False)
    return e.eval()


class SwapWeights(unittest.TestCase):
    def check_model(self, name, fmt):
        z = models.MODELS[name]()
        args, kwargs = z.inputs
        m = brisk.load(zoo(name + FORMATS[fmt]))
        names = list(m.weights())
        self.assertTrue(names, f"{name}/{fmt}: no named weights")
        with torch.no_grad():
            old = z.eager(*args, **kwargs)
            assert_close(self, m(*args, **kwargs), old, f"{name}/{fmt} before")
            w = new_weights(names, z.eager, seed=1)
            ref = eager_with(z.eager, w)(*args, **kwargs)
        self.assertFalse(torch.allclose(ref, old), f"{name}: the new weights do not change the output")
        before = [a.clone() for a in args]
        self.assertEqual(m.weights_version, 0)
        m.swap_weights(w)
        self.assertEqual(m.weights_version, 1)
        for r in range(2):
            assert_close(self, m(*args, **kwargs), ref, f"{name}/{fmt} after swap, run {r}")
        for a, b in zip(args, before):
            self.assertTrue(torch.equal(a, b), f"{name}/{fmt}: input changed")
        if fmt == "torchscript":  # the zoo's PT2 exports of these have static shapes
            a2, k2 = z.inputs2
            with torch.no_grad():
                ref2 = eager_with(z.eager, w)(*a2, **k2)
            assert_close(self, m(*a2, **k2), ref2, f"{name}/{fmt} after swap, inputs2")

    def test_mlp(self):
        for fmt in FORMATS:
            self.check_model("mlp", fmt)

    def test_resnet18_conv_bn_fold(self):
        for fmt in FORMATS:
            self.check_model("resnet18", fmt)

    def test_lstm_tagger(self):
        for fmt in FORMATS:
            self.check_model("lstm_tagger", fmt)

    def test_replacements_accumulate(self):
        z = models.MODELS["mlp"]()
        (x,), _ = z.inputs
        m = brisk.load(zoo("mlp.pt2"))
        w = new_weights(list(m.weights()), z.eager, seed=2)
        first = {k: v for k, v in w.items() if k.startswith("fc1.")}
        rest = {k: v for k, v in w.items() if not k.startswith("fc1.")}
        m.swap_weights(first)
        m.swap_weights(rest)
        self.assertEqual(m.weights_version, 2)
        with torch.no_grad():
            assert_close(self, m(x), eager_with(z.eager, w)(x), "fc1 then the rest")

    def test_replacements_accumulate_on_conv_partitions(self):
        # The oneDNN conv partitions free the dense bytes of weights only they read; the
        # weights a swap replaced are kept by the Module for the next swap, so they must
        # reach a generation as copies, or the second swap would build on freed bytes.
        z = models.MODELS["inception_nofork"]()
        (x,), _ = z.inputs
        m = brisk.load(zoo("inception_nofork.pt2"))
        names = list(m.weights())
        w = new_weights(names, z.eager, seed=3)
        conv_weights = [n for n in names if n.endswith(".weight")]
        first = {k: v for k, v in w.items() if k in conv_weights}
        rest = {k: v for k, v in w.items() if k not in conv_weights}
        self.assertTrue(first and rest)
        with torch.no_grad():
            m.swap_weights(first)
            assert_close(self, m(x), eager_with(z.eager, first)(x), "first swap")
            m.swap_weights(rest)
            assert_close(self, m(x), eager_with(z.eager, w)(x), "first, then the rest")

    def test_caller_tensors_are_copied(self):
        z = models.MODELS["mlp"]()
        (x,), _ = z.inputs
        m = brisk.load(zoo("mlp.pt"))
        w = new_weights(list(m.weights()), z.eager, seed=3)
        m.swap_weights(w)
        expected = m(x)
        for t in w.values():
            t.zero_()  # must not reach the loaded model
        self.assertTrue(torch.equal(m(x), expected))

    def test_from_another_file(self):
        # Weights saved by another export of the same model, in the other format each way.
        z = models.MODELS["mlp"]()
        (x,), _ = z.inputs
        with torch.no_grad():
            e = eager_with(z.eager, new_weights([k for k, _ in z.eager.named_parameters()], z.eager, seed=4))
            ref = e(x)
        with tempfile.TemporaryDirectory() as d:
            ts_path = os.path.join(d, "mlp_new.pt")
            torch.jit.script(e).save(ts_path)
            pt2_path = os.path.join(d, "mlp_new.pt2")
            torch.export.save(torch.export.export(e, (x,)), pt2_path)
            for target, source in (("mlp.pt2", ts_path), ("mlp.pt", pt2_path), ("mlp.core.pt2", pt2_path)):
                m = brisk.load(zoo(target))
                m.swap_weights(source)
                assert_close(self, m(x), ref, f"{target} <- {os.path.basename(source)}")

    def test_bad_replacements_change_nothing(self):
        z = models.MODELS["mlp"]()
        (x,), _ = z.inputs
        for fmt in FORMATS:
            m = brisk.load(zoo("mlp" + FORMATS[fmt]))
            expected = m(x)
            w = m.weights()
            shape, dtype = w["fc1.weight"]
            self.assertEqual((shape, dtype), ((512, 256), "Float"))
            bad = {
                "unknown name": ({"fc9.weight": torch.zeros(1)}, "fc9.weight"),
                "wrong shape": ({"fc1.weight": torch.zeros(256, 512)}, "fc1.weight"),
                "wrong dtype": ({"fc1.weight": torch.zeros(512, 256, dtype=torch.float64)}, "Double"),
                "not a tensor": ({"fc1.weight": 3}, "not a Tensor"),
                "not a mapping": ([1, 2], "state_dict"),
                "missing file": (os.path.join(ZOO, "no_such_model.pt"), "no_such_model.pt"),
                "another model's file": (zoo("resnet18.pt"), "no weight named"),
            }
            for what, (arg, needle) in bad.items():
                with self.assertRaises(brisk.Error, msg=f"{fmt}: {what}") as cm:
                    m.swap_weights(arg)
                msg = str(cm.exception)
                self.assertNotIn("\n", msg, what)
                self.assertIn(needle, msg, f"{fmt}: {what}")
                self.assertEqual(m.weights_version, 0, what)
                self.assertTrue(torch.equal(m(x), expected), f"{fmt}: changed by a refused swap ({what})")

    def test_model_file_rewritten_since_load(self):
        # The next generation is built from the file: a different model there is refused.
        import shutil
        z = models.MODELS["mlp"]()
        (x,), _ = z.inputs
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "model.pt")
            shutil.copy(zoo("mlp.pt"), path)
            m = brisk.load(path)
            expected = m(x)
            w = {"fc3.bias": torch.ones(10)}
            shutil.copy(zoo("resnet18.pt"), path)
            with self.assertRaises(brisk.Error) as cm:
                m.swap_weights(w)
            self.assertTrue("changed since it was loaded" in str(cm.exception) or
                            "no weight named" in str(cm.exception), str(cm.exception))
            self.assertTrue(torch.equal(m(x), expected))
            self.assertEqual(m.weights_version, 0)

    def test_model_file_rewritten_with_the_same_weight_names(self):
        # Same architecture, other values (or another forward) saved over the loaded file:
        # the weight list still matches, but a swap must not bring in the new file.
        z = models.MODELS["mlp"]()
        (x,), _ = z.inputs
        with torch.no_grad():
            other = eager_with(z.eager, new_weights([k for k, _ in z.eager.named_parameters()], z.eager, seed=7))
        for fmt, save in (("torchscript", lambda e, p: torch.jit.script(e).save(p)),
                          ("pt2", lambda e, p: torch.export.save(torch.export.export(e, (x,)), p))):
            with tempfile.TemporaryDirectory() as d:
                path = os.path.join(d, "model" + FORMATS[fmt])
                save(z.eager.eval(), path)
                m = brisk.load(path)
                expected = m(x)
                save(other, path)
                with self.assertRaises(brisk.Error, msg=fmt) as cm:
                    m.swap_weights({"fc3.bias": torch.zeros(10)})
                self.assertIn("changed since it was loaded", str(cm.exception), fmt)
                self.assertTrue(torch.equal(m(x), expected), fmt)
                self.assertEqual(m.weights_version, 0, fmt)

    def test_relative_path_then_chdir(self):
        # A Module keeps using the file it loaded, whatever the working directory is later.
        z = models.MODELS["mlp"]()
        (x,), _ = z.inputs
        with torch.no_grad():
            other = eager_with(z.eager, new_weights([k for k, _ in z.eager.named_parameters()], z.eager, seed=8))
            ref = eager_with(z.eager, {"fc3.bias": torch.zeros(10)})(x)
        cwd = os.getcwd()
        with tempfile.TemporaryDirectory() as a, tempfile.TemporaryDirectory() as b, \
                tempfile.TemporaryDirectory() as empty:
            torch.jit.script(z.eager.eval()).save(os.path.join(a, "m.pt"))
            torch.jit.script(other).save(os.path.join(b, "m.pt"))
            try:
                os.chdir(a)
                m = brisk.load("m.pt")
                for where in (b, empty):  # another m.pt there; no m.pt there
                    os.chdir(where)
                    m.swap_weights({"fc3.bias": torch.zeros(10)})
                    assert_close(self, m(x), ref, f"swap after chdir to {'another m.pt' if where == b else 'nothing'}")
            finally:
                os.chdir(cwd)

    def test_from_a_file_of_another_model_sharing_some_weights(self):
        # A file whose weights are a subset of ours (same names and shapes) is another model.
        class Part(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.fc1 = torch.nn.Linear(256, 512)

            def forward(self, x):
                return self.fc1(x)

        z = models.MODELS["mlp"]()
        (x,), _ = z.inputs
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "part.pt")
            torch.jit.script(Part().eval()).save(path)
            for fmt in FORMATS:
                m = brisk.load(zoo("mlp" + FORMATS[fmt]))
                expected = m(x)
                with self.assertRaises(brisk.Error, msg=fmt) as cm:
                    m.swap_weights(path)
                self.assertIn("not a file of this model", str(cm.exception), fmt)
                self.assertTrue(torch.equal(m(x), expected), fmt)
                self.assertEqual(m.weights_version, 0, fmt)

    def test_runs_in_flight_keep_their_weights(self):
        z = models.MODELS["mlp"]()
        (x,), _ = z.inputs
        m = brisk.load(zoo("mlp.pt2"))
        old = m(x)
        w = new_weights(list(m.weights()), z.eager, seed=5)
        swapped = threading.Event()
        started = threading.Event()
        outs, errors = [], []

        def runner():
            try:
                extra = 0
                while extra < 200:
                    outs.append(m(x))
                    started.set()
                    if swapped.is_set():
                        extra += 1
            except Exception as e:  # noqa: BLE001 (reported below)
                errors.append(e)
                started.set()

        threads = [threading.Thread(target=runner) for _ in range(2)]
        for t in threads:
            t.start()
        started.wait()
        m.swap_weights(w)
        swapped.set()
        for t in threads:
            t.join()
        self.assertEqual(errors, [])
        new = m(x)
        self.assertFalse(torch.equal(old, new))
        n_old = sum(torch.equal(o, old) for o in outs)
        n_new = sum(torch.equal(o, new) for o in outs)
        self.assertEqual(n_old + n_new, len(outs), "a run mixed old and new weights")
        self.assertGreater(n_old, 0)
        self.assertGreater(n_new, 0)

    def test_module_without_a_file(self):
        m = brisk.load(zoo("mlp.pt"))
        self.assertEqual(m.weights_version, 0)
        # A model whose file has no named weights (saved frozen) refuses by name.
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "frozen.pt")
            torch.jit.freeze(torch.jit.script(models.MODELS["mlp"]().eager)).save(path)
            f = brisk.load(path)
            self.assertEqual(f.weights(), {})
            with self.assertRaises(brisk.Error) as cm:
                f.swap_weights({"fc1.weight": torch.zeros(512, 256)})
            self.assertIn("no named weights", str(cm.exception))


if __name__ == "__main__":
    junit.main("swap_weights_test")
