"""//tools/bench:compare in --quick mode (the CI smoke test): it runs, every executor
agrees with the interpreter, and the Markdown, JSON and chart are written. Also the
script's own helpers (case selection, output comparison). No timing is asserted."""
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
sys.path.insert(0, os.path.dirname(COMPARE))
import compare  # noqa: E402  (its settings re-exec only happens when run as a script)

OUT = os.path.join(os.environ.get("TEST_TMPDIR", "/tmp"), "compare_out")
CASES = "mlp:b1,inception_fork:b1"


class QuickRun(unittest.TestCase):
    proc = None

    @classmethod
    def setUpClass(cls):
        env = dict(os.environ)
        env.pop("GLIBC_TUNABLES", None)  # the script must set it itself (re-exec)
        cls.proc = subprocess.run(
            [sys.executable, COMPARE, "--quick", "--models", CASES, "--zoo", os.path.join(R, "tools", "zoo"),
             "--out", OUT], capture_output=True, text=True, env=env, timeout=400)  # < the test's 900 s
        sys.stdout.write(cls.proc.stdout[-4000:])
        sys.stderr.write(cls.proc.stderr[-4000:])
        cls.stem = None
        if cls.proc.returncode == 0:
            names = [f for f in os.listdir(OUT) if f.endswith("-quick.json")]
            cls.stem = os.path.join(OUT, names[0][:-len(".json")]) if names else None

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
        results = self.report()["results"]
        self.assertEqual([f"{r['model']}:b{r['batch']}" for r in results], CASES.split(","))
        for r in results:
            for name in compare.EXECUTORS:
                e = r["executors"][name]
                self.assertTrue(e["available"], f"{r['model']} {name}: {e['error']}")
                self.assertTrue(e["agrees"], f"{r['model']} {name}: max diff {e['max_abs_diff']}")
                self.assertGreater(e["p50_us"], 0)
                self.assertEqual(len(e["ratio_rounds"]), 1)
            self.assertEqual(r["executors"]["interpreter"]["ratio"], 1.0)
            # Without the shim Static Runtime can deadlock on inception_fork (sr_shim.cc).
            self.assertIn("sr_shim", r["executors"]["static_runtime"]["source"])
            self.assertGreater(r["executors"]["brisk_cpp"]["p50_us"], 0)
            self.assertEqual(len(r["executors"]["brisk_cpp"]["ratio_rounds"]), 1)

    def test_memory_per_executor(self):
        for r in self.report()["results"]:
            for name in compare.EXECUTORS:
                self.assertIn("peak_kib", r["memory"][name], f"{r['model']} {name}: {r['memory'][name]}")

    def test_markdown_table(self):
        with open(self.stem + ".md") as f:
            md = f.read()
        self.assertIn("| model | batch | eager | interpreter (frozen) | interpreter + optimize_for_inference | "
                      "Static Runtime | brisk | brisk, C++ loop | outputs agree |", md)
        self.assertRegex(md, r"\n\| mlp \| 1 \| [0-9.]+ \([0-9.]+\) \|")
        self.assertIn("## Peak memory", md)
        self.assertIn("Machine: ", md)

    def test_chart_written(self):
        with open(self.stem + ".png", "rb") as f:
            self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")

    def test_quick_leaves_latest_alone(self):
        self.assertFalse(os.path.exists(os.path.join(OUT, "latest.md")))


class Helpers(unittest.TestCase):
    def test_select_cases(self):
        self.assertEqual([compare.case_id(c) for c in compare.select_cases("resnet18", False)],
                         ["resnet18:b1", "resnet18:b8"])
        self.assertEqual([compare.case_id(c) for c in compare.select_cases("mlp:b64,mlp", False)],
                         ["mlp:b64", "mlp:b1"])
        self.assertEqual(len(compare.select_cases("", False)), len(compare.CASES))
        with self.assertRaises(SystemExit):
            compare.select_cases("nosuchmodel", False)

    def test_compare_outputs(self):
        a = torch.ones(3)
        self.assertEqual(compare.compare_outputs((a, {"k": [a]}), (a.clone(), {"k": [a.clone()]})), (True, 0.0))
        ok, diff = compare.compare_outputs(a + 1, a)
        self.assertFalse(ok)
        self.assertAlmostEqual(diff, 1.0)
        self.assertEqual(compare.compare_outputs(a, torch.ones(4)), (False, None))
        self.assertEqual(compare.compare_outputs({"a": a}, {"b": a}), (False, None))
        self.assertTrue(compare.compare_outputs(a + 1e-6, a)[0])


if __name__ == "__main__":
    junit.main("compare_smoke_test")
