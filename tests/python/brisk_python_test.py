"""The Python binding (//python:brisk) as a user sees it: zoo models give what
torch.jit.load gives, errors are brisk.Error, run_async equals run, and stats(),
inspect(), benchmark() and profile() return what they document."""
import json
import os
import sys
import threading
import unittest

os.environ.setdefault("OMP_NUM_THREADS", "1")
import torch  # noqa: E402

import brisk  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import junit  # noqa: E402

# tools/outputs_close.py, two directories up (runfiles or source tree).
sys.path.append(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools"))
import outputs_close  # noqa: E402

torch.set_num_threads(1)

ZOO = os.path.join(os.environ.get("TEST_SRCDIR", ""), "brisk", "tools", "zoo")
MODELS = ["resnet18", "mobilenet_v2", "mlp", "deepandwide", "transformer", "inception_fork",
          "inception_nofork", "control_flow", "multi_output", "chain_mul100", "chain_add100",
          "lstm_tagger", "gru_encoder"]
RTOL, ATOL = 1e-4, 1e-5
# Same dtypes and shapes; a tuple / list matched by an instance of its type; dict keys in
# any order; other values equal.
CLOSE = outputs_close.Rules(rtol=RTOL, atol=ATOL, sequences="isinstance")


def zoo(name, suffix=".pt"):
    return os.path.join(ZOO, name + suffix)


def inputs(name, tag="inputs"):
    d = torch.load(zoo(name, f".{tag}.pt"))
    return list(d["args"]), dict(d["kwargs"])


def assert_close(test, got, expected, what):
    """Fails `test` (AssertionError, a unittest failure) saying where and why they differ."""
    outputs_close.check(got, expected, CLOSE, what)


class ZooModelsMatchTorchScript(unittest.TestCase):
    """Every zoo model, both input sets: brisk's output equals torch.jit.load's."""


def _zoo_case(name):
    def test(self):
        m = brisk.load(zoo(name))
        ref = torch.jit.load(zoo(name)).eval()
        for tag in ("inputs", "inputs2"):
            args, kwargs = inputs(name, tag)
            with torch.no_grad():
                expected = ref(*args, **kwargs)
            assert_close(self, m(*args, **kwargs), expected, f"{name}/{tag}")
    return test


for _name in MODELS:
    setattr(ZooModelsMatchTorchScript, f"test_{_name}", _zoo_case(_name))


class Errors(unittest.TestCase):
    def assert_brisk_error(self, fn, pattern=None):
        with self.assertRaises(brisk.Error) as cm:
            fn()
        e = cm.exception
        self.assertIsInstance(e, RuntimeError)
        msg = str(e)
        self.assertNotIn("\n", msg, "brisk's messages are one line")
        if pattern:
            self.assertRegex(msg, pattern)
        return e

    def test_missing_file(self):
        e = self.assert_brisk_error(lambda: brisk.load("/no/such/model.pt"), "not found|No such|cannot")
        self.assertTrue(hasattr(e, "model") and hasattr(e, "message"))

    def test_not_a_model(self):
        self.assert_brisk_error(lambda: brisk.load(zoo("mlp", ".inputs.pt")))

    def test_wrong_inputs(self):
        m = brisk.load(zoo("mlp"))
        self.assert_brisk_error(lambda: m(torch.randn(1, 3, 224, 224)), "mlp")
        self.assert_brisk_error(lambda: m(), "mlp")
        self.assert_brisk_error(lambda: m(torch.randn(1, 256), torch.randn(1)))
        self.assert_brisk_error(lambda: m(x=torch.randn(1, 256), bogus=1), "bogus")
        self.assert_brisk_error(lambda: m(object()), "cannot convert")
        # The module stays usable after errors.
        self.assertEqual(m(torch.randn(1, 256)).shape, (1, 10))

    def test_options(self):
        self.assert_brisk_error(lambda: brisk.load(zoo("mlp"), no_such_option=True), "unknown option 'no_such_option'")
        self.assert_brisk_error(lambda: brisk.load(zoo("mlp"), memory_planning=1), "expects a bool")
        self.assert_brisk_error(lambda: brisk.load(zoo("mlp"), max_runtimes=-1), r"must be in \[0, 65536\]")
        self.assert_brisk_error(lambda: brisk.load(zoo("mlp"), planner="no_such_planner"), "no_such_planner")
        self.assert_brisk_error(lambda: brisk.load(zoo("mlp"), plugins=["no_such_plugin"]), "no_such_plugin")

    def test_run_async_error_surfaces_on_wait(self):
        m = brisk.load(zoo("mlp"))
        self.assert_brisk_error(lambda: m.run_async(torch.randn(1, 3)).wait())


class RunAsync(unittest.TestCase):
    def test_equals_run(self):
        m = brisk.load(zoo("inception_fork"))
        (x,), _ = inputs("inception_fork")
        expected = m(x)
        fut = m.run_async(x)
        self.assertIsInstance(fut, brisk.Future)
        assert_close(self, fut.wait(), expected, "default launcher")
        self.assertTrue(fut.done())
        assert_close(self, fut.value(), expected, "value()")

    def test_python_launchers(self):
        m = brisk.load(zoo("inception_fork"))
        (x,), _ = inputs("inception_fork")
        expected = m(x)
        tasks = []

        def inline(task):
            tasks.append("inline")
            task()

        def on_thread(task):
            tasks.append("thread")
            threading.Thread(target=task).start()

        assert_close(self, m.run_async(x, launcher=inline).wait(), expected, "inline launcher")
        assert_close(self, m.run_async(x, launcher=on_thread).wait(), expected, "thread launcher")
        self.assertIn("inline", tasks, "the fork task went through the Python launcher")
        self.assertIn("thread", tasks)

    def test_raising_launcher_fails_the_run(self):
        # The launcher's exception is the run's error (not printed and swallowed), named
        # at the fork node; the Module runs on afterwards.
        m = brisk.load(zoo("inception_fork"))
        (x,), _ = inputs("inception_fork")

        def broken(task):
            raise ValueError("launcher refuses")

        f = m.run_async(x, launcher=broken)
        with self.assertRaises(brisk.Error) as cm:
            f.wait()
        for part in ("run_async launcher raised ValueError: launcher refuses", "prim::fork", "inception_fork"):
            self.assertIn(part, str(cm.exception))
        assert_close(self, m.run_async(x).wait(), m(x), "a later run")

    def test_kwargs(self):
        m = brisk.load(zoo("multi_output"))
        args, kwargs = inputs("multi_output")
        assert_close(self, m.run_async(*args, **kwargs).wait(), m(*args, **kwargs), "kwargs")


class Introspection(unittest.TestCase):
    def test_stats(self):
        m = brisk.load(zoo("resnet18"))
        (x,), _ = inputs("resnet18")
        m(x)
        s = m.stats()
        for key in ("nodes", "kernels", "retained_values", "managed_values", "memory", "pool"):
            self.assertIn(key, s)
        self.assertEqual(sorted(s["kernels"]), ["delegate", "fallback", "native", "out_variant"])
        self.assertGreater(s["nodes"], 10)
        self.assertEqual(sum(s["kernels"].values()), s["nodes"])
        for key in ("slab_bytes", "lower_bound", "managed_tensors", "plans", "replans", "evictions"):
            self.assertIn(key, s["memory"])
        self.assertGreater(s["memory"]["slab_bytes"], 0, "a run lays out the memory plan")
        self.assertGreaterEqual(s["memory"]["slab_bytes"], s["memory"]["lower_bound"])
        for key in ("live", "idle", "peak", "created", "freed", "waits"):
            self.assertIn(key, s["pool"])
        self.assertGreaterEqual(s["pool"]["created"], 1)

    def test_memory_planning_off(self):
        m = brisk.load(zoo("mlp"), memory_planning=False)
        m(torch.randn(1, 256))
        self.assertEqual(m.stats()["memory"]["slab_bytes"], 0)

    def test_inspect(self):
        m = brisk.load(zoo("mlp"), plugin_options={"onednn.linear": True})
        nodes = m.inspect()
        # 5 nodes, and one onednn partition around each linear layer (and its relu):
        # 3 delegate nodes, each listed before the nodes of its nested block.
        self.assertEqual(len(nodes), 8)
        self.assertEqual(sum(n["kind"] == "delegate" for n in nodes), 3)
        self.assertEqual(len(brisk.load(zoo("mlp"), use_delegates=False).inspect()), 5)
        for n in nodes:
            for key in ("node", "op", "kind", "provider", "detail", "depth"):
                self.assertIn(key, n)
            self.assertIn(n["kind"], ("out-variant", "native", "delegate", "fallback"))
        self.assertEqual(nodes[0]["op"], "brisk::delegate")
        self.assertEqual(nodes[1]["op"].split(".")[0], "aten::linear")

    def test_passes(self):
        m = brisk.load(zoo("resnet18"))
        passes = m.passes()
        self.assertEqual([p["name"] for p in passes],
                         ["eliminate_dead_code", "remove_eval_dropout", "fold_constants",
                          "ops_cpu.decompose_encoder_layer",
                          "ops_cpu.fuse_lstm_cell", "ops_cpu.fuse_gru_cell", "ops_cpu.fuse_rnn_layer",
                          "partition_delegates",
                          "ops_cpu.fuse_pointwise", "eliminate_dead_code_late",
                          "ops_cpu.fuse_view_chain", "own_constant_outputs", "inplace_reuse"])
        by_name = {p["name"]: p for p in passes}
        self.assertGreater(by_name["inplace_reuse"]["changed"], 0, "resnet18's relus reuse their inputs")
        self.assertEqual(by_name["inplace_reuse"]["changed"], m.stats()["inplace_nodes"])
        off = brisk.load(zoo("resnet18"), disabled_passes=["inplace_reuse"])
        self.assertTrue({p["name"]: p for p in off.passes()}["inplace_reuse"]["skipped"])
        self.assertEqual(off.stats()["inplace_nodes"], 0)
        with self.assertRaises(brisk.Error) as cm:
            brisk.load(zoo("mlp"), disabled_passes=["no_such_pass"])
        self.assertIn("no_such_pass", str(cm.exception))
        # Outputs never alias the model's constants; that must not rest on an optional pass.
        with self.assertRaises(brisk.Error) as cm:
            brisk.load(zoo("mlp"), disabled_passes=["own_constant_outputs"])
        self.assertIn("cannot be disabled", str(cm.exception))

    def test_fallback_only(self):
        m = brisk.load(zoo("mlp"), fallback_only=True, plugins=[])
        self.assertEqual({n["kind"] for n in m.inspect()}, {"fallback"})
        (x,), _ = inputs("mlp")
        with torch.no_grad():
            expected = torch.jit.load(zoo("mlp"))(x)
        assert_close(self, m(x), expected, "fallback only")

    def test_benchmark(self):
        m = brisk.load(zoo("mlp"))
        r = m.benchmark(inputs("mlp")[0], warmup=2, iters=7)
        self.assertEqual(r["iters"], 7)
        self.assertEqual(len(r["samples_us"]), 7)
        for key in ("p50_us", "p90_us", "mean_us"):
            self.assertGreater(r[key], 0)
        self.assertGreaterEqual(r["p90_us"], r["p50_us"])
        # The zoo's inputs-file format and a bare tensor work as well.
        m.benchmark(torch.load(zoo("mlp", ".inputs.pt")), warmup=0, iters=1)
        m.benchmark(torch.randn(1, 256), warmup=0, iters=1)

    def test_profile(self):
        m = brisk.load(zoo("inception_fork"))
        trace = os.path.join(os.environ.get("TEST_TMPDIR", "/tmp"), "trace.json")
        p = m.profile(inputs("inception_fork")[0], iters=3, trace_path=trace)
        self.assertEqual(p["runs"], 3)
        self.assertGreater(p["kernel_us_per_run"], 0)
        self.assertTrue(p["nodes"] and p["ops"])
        for key in ("node", "op", "kind", "provider", "calls", "us_per_run"):
            self.assertIn(key, p["nodes"][0])
        self.assertIn("aten::conv2d", {o["op"].split(".")[0] for o in p["ops"]})
        self.assertEqual(p["trace_path"], trace)
        with open(trace) as f:
            events = json.load(f)["traceEvents"]
        self.assertTrue(any(e.get("ph") == "X" for e in events))


class Threads(unittest.TestCase):
    def test_concurrent_calls(self):
        m = brisk.load(zoo("mlp"))
        xs = [torch.randn(1 + i, 256) for i in range(4)]
        expected = [m(x) for x in xs]
        errors = []

        def worker(i):
            try:
                for _ in range(20):
                    torch.testing.assert_close(m(xs[i]), expected[i])
            except Exception as e:  # collected and reported by the main thread
                errors.append(e)

        threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(errors, [])


if __name__ == "__main__":
    junit.main("brisk_python_test")
