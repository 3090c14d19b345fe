"""//tools/bench:pt2_vs_torchscript on two small models with one short round: it runs,
writes the Markdown and JSON it documents, counts kernels and fallbacks as brisk's own
stats do, and refuses a model without a TorchScript twin by name. No timing is asserted."""
import json
import os
import subprocess
import sys
import unittest

import brisk

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import junit  # noqa: E402

R = os.path.join(os.environ.get("TEST_SRCDIR", ""), "brisk")
ZOO = os.path.join(R, "tools", "zoo")
SCRIPT = os.path.join(R, "tools", "bench", "pt2_vs_torchscript.py")
OUT = os.path.join(os.environ.get("TEST_TMPDIR", "/tmp"), "pt2_bench_out")


def run(*flags):
    env = dict(os.environ)
    env.pop("GLIBC_TUNABLES", None)  # the script must set it itself (re-exec)
    return subprocess.run([sys.executable, SCRIPT, "--zoo", ZOO, "--out", OUT] + list(flags),
                          capture_output=True, text=True, env=env, timeout=600)


class Pt2BenchSmoke(unittest.TestCase):
    def test_two_models(self):
        proc = run("--models", "mlp,multi_output", "--rounds", "1", "--iters", "3", "--memory-iters", "1")
        self.assertEqual(proc.returncode, 0, proc.stderr[-2000:])
        md = [f for f in os.listdir(OUT) if f.startswith("pt2-vs-torchscript-") and f.endswith(".md")]
        self.assertEqual(len(md), 1, os.listdir(OUT))
        with open(os.path.join(OUT, md[0][:-3] + ".json")) as f:
            data = json.load(f)
        self.assertEqual(data["settings"]["env"]["OMP_NUM_THREADS"], "1")
        self.assertEqual(sorted(data["results"]), ["mlp", "multi_output"])
        for name, row in data["results"].items():
            for fmt, suffix in (("torchscript", ".pt"), ("pt2", ".pt2"), ("core", ".core.pt2")):
                s = brisk.load(os.path.join(ZOO, name + suffix)).stats()
                self.assertEqual(row[fmt]["nodes"], s["nodes"], f"{name} {fmt}")
                self.assertEqual(row[fmt]["kernels"], s["kernels"], f"{name} {fmt}")
                self.assertGreater(row[fmt]["p50_us"], 0)
                self.assertIn("peak_increase_mib", row[fmt]["memory"], f"{name} {fmt}: {row[fmt]['memory']}")
            self.assertEqual(row["torchscript"]["ratio_to_torchscript"], 1.0)
        with open(os.path.join(OUT, md[0])) as f:
            text = f.read()
        # Node counts per format (checked against brisk.load's stats above; with onednn's
        # linear partitions on AVX-512 machines, 3 more).
        self.assertRegex(text, r"\| mlp \| [0-9]+/[0-9]+/[0-9]+ \|")
        self.assertIn("fallback TS/PT2/core", text)

    def test_model_without_twin_is_refused(self):
        proc = run("--models", "cond_model", "--no-memory")
        self.assertNotEqual(proc.returncode, 0)
        self.assertIn("no PT2 export with a TorchScript twin for cond_model", proc.stderr)


if __name__ == "__main__":
    junit.main("pt2_bench_smoke_test")
