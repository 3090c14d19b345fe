"""//tools/bench:compare in --quick mode (the CI smoke test): it runs, every executor
agrees with eager PyTorch, and the Markdown, JSON and chart are written. Also the
comparison package's helpers (case selection, output comparison, executor selection,
best other runtime). No timing is asserted.

Two runs keep it fast: the TorchScript executors, ONNX Runtime, OpenVINO and brisk on two
small cases with memory processes; Inductor and AOTInductor (tens of seconds of compiling
per model and process) on the MLP alone, without them."""
import json
import os
import subprocess
import sys
import unittest

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import junit  # noqa: E402

R = os.path.join(os.environ.get("TEST_SRCDIR", ""), "brisk")
COMPARE = os.path.join(R, "tools", "bench", "compare.py")
# The comparison package beside compare.py (its settings re-exec only happens when
# compare.py runs as a script).
sys.path.insert(0, os.path.dirname(COMPARE))
from comparison import cases, executors, outputs, settings, timing  # noqa: E402

OUT = os.path.join(os.environ.get("TEST_TMPDIR", "/tmp"), "compare_out")
CASES = "mlp:b1,inception_fork:b1"
COMPILED = ("inductor", "aotinductor", "brisk_aoti", "brisk_aoti_partial")
# Under --config=asan (ASan's runtime preloaded into python3), OpenVINO cannot run: it
# dlopens its TBB binding with RTLD_DEEPBIND, which the sanitizer runtime refuses. It is
# another project's binary; the plain build runs it.
UNDER_ASAN = "libasan" in os.environ.get("LD_PRELOAD", "")
# The reduced-precision rows (--precision), after the fp32 ones.
PRECISION = "int8,fp16" + ("" if UNDER_ASAN else ",bf16")
CHEAP = [n for n in executors.EXECUTORS
         if n not in COMPILED and n not in executors.REDUCED_EXECUTORS and not (UNDER_ASAN and n == "openvino")]
COMPILED_CASE = "mlp:b1"


def run_compare(out, *flags):
    env = dict(os.environ)
    env.pop("GLIBC_TUNABLES", None)  # the script must set it itself (re-exec)
    proc = subprocess.run(
        [sys.executable, COMPARE, "--quick", "--zoo", os.path.join(R, "tools", "zoo"), "--out", out] + list(flags),
        capture_output=True, text=True, env=env, timeout=400)  # < the test's 900 s
    sys.stdout.write(proc.stdout[-4000:])
    sys.stderr.write(proc.stderr[-4000:])
    stem = None
    if proc.returncode == 0:
        names = [f for f in os.listdir(out) if f.endswith("-quick.json")]
        stem = os.path.join(out, names[0][:-len(".json")]) if names else None
    return proc, stem


def not_installed(report, name):
    """A runtime whose package does not import, or (NativeRT) that this torch build
    ships only as a stub: the report's versions say so."""
    return "not installed" in str(report.get("versions", {}).get(name, ""))


def assert_runs_or_says_why(test, report, r, name):
    """An executor runs and agrees; only a runtime whose package does not import may be
    skipped, and then with its reason in the table's data."""
    e = r["executors"][name]
    if not_installed(report, name):
        test.assertFalse(e["available"])
        test.assertTrue(e["error"], f"{r['model']} {name}: skipped without a reason")
        return
    test.assertTrue(e["available"], f"{r['model']} {name}: {e['error']}")
    test.assertTrue(e["agrees"], f"{r['model']} {name}: max diff {e['max_abs_diff']}")
    test.assertGreater(e["p50_us"], 0)
    test.assertEqual(len(e["ratio_rounds"]), 1)
    test.assertGreater(e["load_s"], 0)


class QuickRun(unittest.TestCase):
    proc = None

    @classmethod
    def setUpClass(cls):
        cls.proc, cls.stem = run_compare(OUT, "--models", CASES, "--executors", ",".join(CHEAP),
                                         "--precision", PRECISION)

    def setUp(self):
        self.assertEqual(self.proc.returncode, 0, self.proc.stderr[-2000:])
        self.assertIsNotNone(self.stem, "no compare-<date>-quick.json written")

    def report(self):
        with open(self.stem + ".json") as f:
            return json.load(f)

    def test_settings_are_fixed_and_printed(self):
        s = self.report()["settings"]
        self.assertEqual(s["OMP_NUM_THREADS"], "1")
        self.assertEqual(s["MKL_NUM_THREADS"], "1")
        self.assertIn("glibc.malloc.mmap_max=0", s["GLIBC_TUNABLES"])
        self.assertEqual(s["torch.get_num_threads"], 1)
        self.assertIn("GLIBC_TUNABLES=glibc.malloc.mmap_max=0", self.proc.stdout)
        m = self.report()["machine"]
        for key in ("cpu", "nproc", "memory_gib", "torch"):
            self.assertIn(key, m)
        # The kernel libraries of the torch build are named (read from torch.__config__).
        self.assertIn("MKL", m["kernels"])
        self.assertIn("oneDNN", m["kernels"])

    def test_every_executor_runs_and_agrees(self):
        report = self.report()
        results = report["results"]
        self.assertEqual([f"{r['model']}:b{r['batch']}" for r in results], CASES.split(","))
        reduced = [n for n, k in executors.REDUCED_EXECUTORS.items() if k in PRECISION.split(",")]
        self.assertEqual(report["options"]["executors"], CHEAP + reduced)
        for r in results:
            # Reduced precision: within the looser bound, with the error stated, and never
            # the "best other runtime".
            for name in reduced:
                assert_runs_or_says_why(self, report, r, name)
                self.assertIn("of the output's range", r["executors"][name]["source"])
            self.assertNotIn(r["best_other"]["name"], executors.REDUCED_EXECUTORS)
            self.assertEqual(r["output_reference"], "eager")
            for name in CHEAP:
                assert_runs_or_says_why(self, report, r, name)
            self.assertEqual(r["executors"]["interpreter"]["ratio"], 1.0)
            # Without the shim Static Runtime can deadlock on inception_fork (sr_shim.cc).
            self.assertIn("sr_shim", r["executors"]["static_runtime"]["source"])
            self.assertGreater(r["executors"]["brisk_cpp"]["p50_us"], 0)
            # ep.module() and brisk (PT2) run the same archive; their ratio is in the summary.
            self.assertIn("torch.export.export + package_pt2", r["executors"]["ep_module"]["source"])
            self.assertIn("torch.export.export + package_pt2", r["executors"]["brisk_pt2"]["source"])
            self.assertGreater(r["pt2_ratio"]["ratio"], 0)
            self.assertEqual(len(r["pt2_ratio"]["ratio_rounds"]), 1)
            self.assertEqual(len(r["executors"]["brisk_cpp"]["ratio_rounds"]), 1)
            for name in COMPILED:
                self.assertNotIn(name, r["executors"])
            # The best other runtime is never brisk, and brisk's ratio to it is recorded.
            best = r["best_other"]
            self.assertIn(best["name"], executors.OTHERS)
            self.assertGreater(best["brisk_ratio"], 0)

    def test_memory_per_executor_under_both_mallocs(self):
        for r in self.report()["results"]:
            self.assertEqual(sorted(r["memory"]), sorted([settings.MALLOC_TUNED, settings.MALLOC_DEFAULT]))
            for malloc, per in r["memory"].items():
                for name in CHEAP:
                    if not_installed(self.report(), name):
                        self.assertTrue(per[name].get("error"), f"{r['model']} {name}: no measurement, no reason")
                        continue
                    self.assertIn("peak_kib", per[name], f"{r['model']} {name} ({malloc}): {per[name]}")

    def test_markdown_table(self):
        with open(self.stem + ".md") as f:
            md = f.read()
        openvino = "" if UNDER_ASAN else "OpenVINO | "
        openvino_bf16 = "" if UNDER_ASAN else "OpenVINO, bf16 | "
        self.assertIn("| model | batch | eager | interpreter (frozen) | interpreter + optimize_for_inference | "
                      "Static Runtime | NativeRT | ep.module() (PT2) | ONNX Runtime | " + openvino + "brisk | brisk (PT2) | "
                      "brisk, no delegates | brisk, no elementwise fusion | brisk (PT2), int8_dynamic | "
                      "brisk (PT2), fp16_weights | brisk (PT2), bf16 | ONNX Runtime, quantize_dynamic int8 | " + openvino_bf16 +
                      "brisk, C++ loop | best other runtime (µs) | brisk / best other | brisk (PT2) / ep.module() | "
                      "outputs agree |", md)
        self.assertIn("*brisk (PT2), int8_dynamic*: reduced precision", md)
        # Every case has its brisk (PT2) / ep.module() ratio in that column.
        self.assertRegex(md, r"\n\| mlp \| 1 \|.*\| [0-9.]+ \| [0-9.]+ \| yes \|\n")
        self.assertRegex(md, r"\n\| mlp \| 1 \| [0-9.]+ \([0-9.]+\) \|")
        self.assertIn("## Build time", md)
        self.assertIn("## Peak memory", md)
        self.assertIn("glibc's default malloc", md)
        self.assertIn("Machine: ", md)
        self.assertIn("NativeRT", md)

    def test_chart_written(self):
        with open(self.stem + ".png", "rb") as f:
            self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")

    def test_quick_leaves_latest_alone(self):
        self.assertFalse(os.path.exists(os.path.join(OUT, "latest.md")))


class CompiledQuickRun(unittest.TestCase):
    """Inductor and AOTInductor build and run the MLP (default mode under --quick)."""
    proc = None

    @classmethod
    def setUpClass(cls):
        cls.proc, cls.stem = run_compare(OUT + "_compiled", "--models", COMPILED_CASE, "--executors",
                                         ",".join(COMPILED), "--no-memory")

    def test_inductor_and_aotinductor_run_and_agree(self):
        self.assertEqual(self.proc.returncode, 0, self.proc.stderr[-2000:])
        with open(self.stem + ".json") as f:
            report = json.load(f)
        self.assertEqual(report["options"]["inductor_mode"], "default")
        # The references run with any subset.
        self.assertEqual(report["options"]["executors"], ["eager", "interpreter"] + list(COMPILED))
        (r,) = report["results"]
        for name in COMPILED:
            assert_runs_or_says_why(self, report, r, name)
        self.assertIn("freezing", r["executors"]["inductor"]["source"])
        self.assertIn("package_nativert_with_aoti_delegate", r["executors"]["brisk_aoti"]["source"])
        self.assertIn("brisk.lower", r["executors"]["brisk_aoti_partial"]["source"])


class Helpers(unittest.TestCase):
    def test_select_cases(self):
        self.assertEqual([cases.case_id(c) for c in cases.select_cases("resnet18", False)],
                         ["resnet18:b1", "resnet18:b8"])
        self.assertEqual([cases.case_id(c) for c in cases.select_cases("mlp:b64,mlp", False)],
                         ["mlp:b64", "mlp:b1"])
        self.assertEqual(len(cases.select_cases("", False)), len(cases.CASES))
        with self.assertRaises(SystemExit):
            cases.select_cases("nosuchmodel", False)

    def test_selected_executors(self):
        # Every fp32 executor; the reduced-precision rows only on request (--precision).
        self.assertEqual(executors.selected_executors(""),
                         [n for n in executors.EXECUTORS if n not in executors.REDUCED_EXECUTORS])
        self.assertEqual(executors.selected_executors("brisk_int8"), ["eager", "interpreter", "brisk_int8"])
        self.assertEqual(executors.selected_executors("brisk,onnxruntime"),
                         ["eager", "interpreter", "onnxruntime", "brisk"])
        with self.assertRaises(SystemExit):
            executors.selected_executors("tensorrt")

    def test_best_other_skips_brisk_and_wrong_outputs(self):
        def ex(p50, agrees=True, rounds=None):
            return {"available": True, "agrees": agrees, "p50_us": p50, "round_p50_us": rounds or [p50]}
        best = timing.best_other({"interpreter": ex(30.0), "onnxruntime": ex(20.0, rounds=[20.0, 25.0]),
                                   "openvino": ex(5.0, agrees=False), "brisk": ex(10.0, rounds=[10.0, 20.0])})
        self.assertEqual(best["name"], "onnxruntime")
        self.assertAlmostEqual(best["brisk_ratio"], 0.65)
        self.assertIsNone(timing.best_other({"brisk": ex(10.0)}))

    def test_pt2_ratio(self):
        def ex(rounds, available=True):
            return {"available": available, "round_p50_us": rounds}
        r = timing.pt2_ratio({"brisk_pt2": ex([10.0, 30.0, 20.0]), "ep_module": ex([20.0, 30.0, 80.0])})
        self.assertEqual(r["ratio_rounds"], [0.5, 1.0, 0.25])
        self.assertEqual(r["ratio"], 0.5)
        self.assertIsNone(timing.pt2_ratio({"brisk_pt2": ex([10.0]), "ep_module": ex([], available=False)}))
        self.assertIsNone(timing.pt2_ratio({"brisk_pt2": ex([10.0])}))
        self.assertIn("ep_module", executors.PT2_EXECUTORS)
        self.assertIn("ep_module", executors.OTHERS)

    def test_compare_outputs(self):
        a = torch.ones(3)
        self.assertEqual(outputs.compare_outputs((a, {"k": [a]}), (a.clone(), {"k": [a.clone()]})), (True, 0.0))
        ok, diff = outputs.compare_outputs(a + 1, a)
        self.assertFalse(ok)
        self.assertAlmostEqual(diff, 1.0)
        self.assertEqual(outputs.compare_outputs(a, torch.ones(4)), (False, None))
        self.assertEqual(outputs.compare_outputs({"a": a}, {"b": a}), (False, None))
        self.assertTrue(outputs.compare_outputs(a + 1e-6, a)[0])


if __name__ == "__main__":
    junit.main("compare_smoke_test")
