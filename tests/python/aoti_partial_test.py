"""brisk.lower: regions of a program compiled by AOTInductor, the rest on brisk's kernels.

Checked against ep.module() of the original program: a partitioner of the user's that
tags nodes (a linear layer and an elementwise chain of a small model; a zoo model's
recurrent layer), the measured default partitioner (its report says what it timed and
kept, with and without the program compiled whole as a choice, and the archive runs what
it kept), repeated runs with other values, inputs left
unchanged, several threads, a weight swap, the original program of the same archive, and
bad calls (not an ExportedProgram, a tagged placeholder) as brisk.Error.
"""
import copy
import os
import shutil
import sys
import tempfile
import unittest

os.environ.setdefault("OMP_NUM_THREADS", "1")
import torch  # noqa: E402

import brisk  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import junit  # noqa: E402
from aoti_checks import assert_close, check_threads  # noqa: E402

torch.set_num_threads(1)
ZOO = os.path.join(os.environ.get("TEST_SRCDIR", ""), "brisk", "tools", "zoo")
sys.path.insert(0, ZOO)
import models  # noqa: E402

TMP = tempfile.mkdtemp(prefix="aoti_partial_test.")


class Small(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.l1 = torch.nn.Linear(64, 256)
        self.l2 = torch.nn.Linear(256, 8)

    def forward(self, x):
        h = self.l1(x)
        h = h * torch.sigmoid(h) + torch.tanh(h) * 0.5 - h.abs() * 0.1
        h = torch.exp(-h * h) + h
        return self.l2(h), h.sum()


def regions(m):
    return [n["detail"] for n in m.inspect() if "AOTInductor region" in n["detail"]]


def tag_linear_and_chain(gm):
    for n in gm.graph.nodes:
        if n.op != "call_function":
            continue
        if n.name == "linear":
            n.meta["brisk_region"] = "first linear"
        elif torch.Tag.pointwise in getattr(n.target, "tags", ()):
            n.meta["brisk_region"] = "chain"


class UserPartitioner(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        torch.manual_seed(0)
        cls.model = Small().eval()
        cls.x = torch.randn(32, 64)
        cls.ep = torch.export.export(cls.model, (cls.x,))
        cls.path = os.path.join(TMP, "small.pt2")
        cls.report = brisk.lower(cls.ep, cls.path, partitioner=tag_linear_and_chain)

    def test_report_names_each_region(self):
        self.assertEqual([r.key for r in self.report], ["first linear", "chain"])
        self.assertTrue(all(r.kept and r.brisk_us is None for r in self.report))
        self.assertIn("aten.exp.default", self.report[1].ops)

    def test_runs_regions_in_aoti_and_the_rest_in_brisk(self):
        m = brisk.load(self.path)
        self.assertEqual(len(regions(m)), 2, regions(m))
        kinds = {n["op"] for n in m.inspect()}
        self.assertIn("aten::sum", kinds)  # left outside every region
        before = self.x.clone()
        with torch.no_grad():
            for i in range(3):
                assert_close(self, m(self.x), self.ep.module()(self.x), f"run {i}")
            other = torch.randn_like(self.x)
            assert_close(self, m(other), self.ep.module()(other), "other values")
        self.assertTrue(torch.equal(self.x, before))

    def test_original_program_of_the_same_archive(self):
        m = brisk.load(self.path, pt2_program="model")
        self.assertEqual(regions(m), [])
        with torch.no_grad():
            assert_close(self, m(self.x), self.ep.module()(self.x), "original")

    def test_threads_and_the_parallel_executor(self):
        # The sum and the second linear layer read the chain's result independently.
        m = brisk.load(self.path, max_parallel_ops=2, inter_op_threads=2)
        check_threads(self, m, self.ep, self.x.shape)

    def test_swap_reaches_the_compiled_region(self):
        m = brisk.load(self.path)
        new = {"l1.weight": self.ep.state_dict["l1.weight"] * 0.5}
        m.swap_weights(new)
        changed = copy.deepcopy(self.model)
        changed.load_state_dict(new, strict=False)
        with torch.no_grad():
            assert_close(self, m(self.x), changed(self.x), "after swap")


class DefaultPartitioner(unittest.TestCase):
    def check_report(self, report, whole_program):
        cands = [r for r in report if r.key != brisk.WHOLE_PROGRAM]
        whole = [r for r in report if r.key == brisk.WHOLE_PROGRAM]
        self.assertEqual(len(whole), 1 if whole_program else 0, report)
        for r in cands:
            self.assertIsNotNone(r.brisk_us)
            if r.kept:
                self.assertLessEqual(r.aoti_us, 0.9 * r.brisk_us, r)
            elif r.aoti_us <= 0.9 * r.brisk_us:
                self.assertIn("whole program", r.note, r)  # dropped in context
        if whole and whole[0].kept:
            self.assertLess(whole[0].aoti_us, whole[0].brisk_us, whole[0])
            self.assertFalse(any(r.kept for r in cands), report)
            return 1
        if whole:
            self.assertIn("whole program ran", whole[0].note, whole[0])
        return sum(r.kept for r in cands)

    def test_measures_and_keeps_what_it_measured_faster(self):
        z = models.MODELS["gru_encoder"]()
        args, kwargs = z.inputs
        ep = torch.export.export(z.eager, tuple(args), kwargs)
        path = os.path.join(TMP, "gru.pt2")
        report = brisk.lower(ep, path, iters=20)
        self.assertTrue(report, "no candidates: gru_encoder has a recurrent layer")
        compiled = self.check_report(report, True)
        m = brisk.load(path)
        self.assertEqual(len(regions(m)), compiled)
        with torch.no_grad():
            assert_close(self, m(*args, **kwargs), ep.module()(*args, **kwargs), "gru_encoder")

    def test_without_the_whole_program(self):
        torch.manual_seed(1)
        x = torch.randn(8, 64)
        ep = torch.export.export(Small().eval(), (x,))
        path = os.path.join(TMP, "small_regions.pt2")
        report = brisk.lower(ep, path, iters=10, whole_program=False)
        m = brisk.load(path)
        self.assertEqual(len(regions(m)), self.check_report(report, False))
        with torch.no_grad():
            assert_close(self, m(x), ep.module()(x), "small")


class BadCalls(unittest.TestCase):
    def test_not_an_exported_program(self):
        with self.assertRaisesRegex(brisk.Error, "ExportedProgram"):
            brisk.lower(Small(), os.path.join(TMP, "x.pt2"))

    def test_tagged_placeholder(self):
        ep = torch.export.export(Small().eval(), (torch.randn(2, 64),))

        def tag_input(gm):
            next(n for n in gm.graph.nodes if n.op == "placeholder").meta["brisk_region"] = "r"

        with self.assertRaisesRegex(brisk.Error, "placeholder"):
            brisk.lower(ep, os.path.join(TMP, "y.pt2"), partitioner=tag_input)


def tearDownModule():
    shutil.rmtree(TMP, ignore_errors=True)


if __name__ == "__main__":
    junit.main("aoti_partial_test")
