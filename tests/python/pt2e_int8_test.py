"""PT2E int8 programs on the onednn backend's int8 kernels (delegates/onednn/quantized_chain.h).

Small networks are quantized here with torchao's prepare_pt2e / convert_pt2e and
X86InductorQuantizer (static, per-channel int8 weights, uint8 activations), exported,
written as PT2 archives and run by brisk against the program's ep.module():
- every quantized convolution and linear layer runs as an int8 partition where the CPU
  has VNNI (oneDNN's int8 kernels need it to compute the program's sums; elsewhere the
  program's float ops run, and the checks on values still apply);
- outputs match within a tolerance of the output's scale, the inputs are left
  unchanged, repeated runs give the same bits, and a second batch size matches too;
- with `onednn.int8=false` the same program runs on its float ops and matches too;
- several threads and run_async at once give the same bits as one caller.

One network at a time covers: a residual add of a dequantized operand (+ relu), grouped
and depthwise convolutions, a strided one, relu6 (hardtanh), a convolution whose result
stays fp32 (no quantize after it), and linear layers (relu, 3-d input, fp32 result).
"""
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

from torch.export.pt2_archive._package import package_pt2  # noqa: E402
from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e  # noqa: E402
import torchao.quantization.pt2e.quantizer.x86_inductor_quantizer as xiq  # noqa: E402

torch.set_num_threads(1)


def cpu_flags():
    with open("/proc/cpuinfo") as f:
        return set(f.read().split())


FLAGS = cpu_flags()
VNNI = "avx512_vnni" in FLAGS or "avx_vnni" in FLAGS
# brisk's own depthwise kernel (ops_cpu/simd/depthwise_int8_nhwc.h) needs AVX-512 VNNI.
AVX512_VNNI = "avx512_vnni" in FLAGS and "avx512bw" in FLAGS


class ConvNet(torch.nn.Module):
    """stem (strided, relu6) -> 1x1 -> depthwise (relu6) -> 1x1 + residual add -> grouped conv -> 1x1 (fp32).

    The head reads the grouped convolution's result without an activation, so its source
    has a nonzero zero point, which an unpadded convolution takes in its bias.
    """

    def __init__(self):
        super().__init__()
        self.stem = torch.nn.Conv2d(3, 16, 3, stride=2, padding=1)
        self.expand = torch.nn.Conv2d(16, 48, 1)
        self.dw = torch.nn.Conv2d(48, 48, 3, padding=1, groups=48)
        self.project = torch.nn.Conv2d(48, 16, 1)
        self.grouped = torch.nn.Conv2d(16, 32, 3, padding=1, groups=4)
        self.head = torch.nn.Conv2d(32, 10, 1)

    def forward(self, x):
        x = torch.nn.functional.relu6(self.stem(x))
        y = torch.nn.functional.relu6(self.dw(torch.relu(self.expand(x))))
        x = self.project(y) + x
        return self.head(self.grouped(x))


class DepthwiseNet(torch.nn.Module):
    """Depthwise 3x3 layers as brisk's int8 kernel takes them: the first reads the quantized
    model input (uint8 NCHW, reordered at the edge); strides 1 and 2 on odd sizes; 32
    channels (one 256-bit block) and 80 (a 512-bit block and a 16-channel tail); relu6,
    relu and no activation; padding 1 and 0 (a zero point the kernel folds itself).
    """

    def __init__(self):
        super().__init__()
        self.dw1 = torch.nn.Conv2d(32, 32, 3, padding=1, groups=32)
        self.dw2 = torch.nn.Conv2d(32, 32, 3, stride=2, padding=1, groups=32)
        self.expand = torch.nn.Conv2d(32, 80, 1)
        self.dw3 = torch.nn.Conv2d(80, 80, 3, padding=1, groups=80)
        self.dw4 = torch.nn.Conv2d(80, 80, 3, stride=2, groups=80)
        self.head = torch.nn.Conv2d(80, 10, 1)

    def forward(self, x):
        x = torch.nn.functional.relu6(self.dw1(x))
        x = torch.relu(self.dw2(x))
        x = self.dw3(torch.relu(self.expand(x)))
        return self.head(self.dw4(x))


class ResidualRelu(torch.nn.Module):
    """conv -> relu -> conv -> add(identity) -> relu, torchvision BasicBlock's pattern."""

    def __init__(self):
        super().__init__()
        self.c1 = torch.nn.Conv2d(16, 16, 3, padding=1)
        self.c2 = torch.nn.Conv2d(16, 16, 3, padding=1)

    def forward(self, x):
        return torch.relu(self.c2(torch.relu(self.c1(x))) + x)


class Mlp(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.l1 = torch.nn.Linear(64, 128)
        self.l2 = torch.nn.Linear(128, 96)
        self.l3 = torch.nn.Linear(96, 10)

    def forward(self, x):
        return self.l3(torch.relu(self.l2(torch.relu(self.l1(x)))))


# (name, module, input shape, a second batch size, how many int8 partitions it gets)
CASES = [
    ("convnet", ConvNet, (2, 3, 20, 20), 3, 6),
    ("residual_relu", ResidualRelu, (2, 16, 9, 11), 1, 2),
    ("depthwise", DepthwiseNet, (2, 32, 17, 19), 3, 6),
    ("mlp", Mlp, (4, 64), 9, 3),
    ("mlp_3d", Mlp, (2, 5, 64), 3, 3),
]


def quantized_program(module, shape, reduce_range=False):
    torch.manual_seed(0)
    m = module().eval()
    calib = [torch.randn(*shape) for _ in range(4)]
    batch = torch.export.Dim("batch", min=1, max=16)
    dynamic = ({0: batch},)
    ep = torch.export.export(m, (calib[0],), dynamic_shapes=dynamic)
    quantizer = xiq.X86InductorQuantizer()
    quantizer.set_global(xiq.get_default_x86_inductor_quantization_config(reduce_range=reduce_range))
    prepared = prepare_pt2e(ep.module(), quantizer)
    for x in calib:
        prepared(x)
    converted = convert_pt2e(prepared)
    return torch.export.export(converted, (calib[0],), dynamic_shapes=dynamic)


def assert_close(test, out, ref, what):
    # Tolerance by the output's scale: a value one rounding away from a step boundary of
    # an activation's quantization lands on the other step when the sums run in another
    # order (oneDNN's int32 sums are exact, the program's float ones are not), which moves
    # the result by a fraction of a step; on these networks it stays well below 2%.
    scale = ref.abs().max().item()
    diff = (out - ref).abs()
    test.assertEqual(out.shape, ref.shape, what)
    test.assertLessEqual(diff.max().item(), 2e-2 * scale + 1e-6, what)
    test.assertLessEqual(diff.mean().item(), 1e-3 * scale + 1e-7, what)


class Pt2eInt8Test(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.programs = {}
        for name, module, shape, _, _ in CASES:
            ep = quantized_program(module, shape)
            path = os.path.join(cls.tmp.name, name + ".pt2")
            package_pt2(path, exported_programs={"model": ep})
            cls.programs[name] = (ep, path)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def check(self, name, module_options):
        _, _, shape, batch2, _ = next(c for c in CASES if c[0] == name)
        ep, path = self.programs[name]
        m = brisk.load(path, **module_options)
        torch.manual_seed(1)
        for x in [torch.randn(*shape), torch.randn(batch2, *shape[1:]) * 2]:
            before = x.clone()
            ref = ep.module()(x)
            first = m(x)
            assert_close(self, first, ref, f"{name} {tuple(x.shape)}")
            for _ in range(2):
                self.assertTrue(torch.equal(m(x), first), f"{name}: a repeated run changed the result")
            self.assertTrue(torch.equal(x, before), f"{name}: the input changed")
        return m

    def test_int8_partitions_match_the_program(self):
        for name, _, _, _, partitions in CASES:
            with self.subTest(name):
                m = self.check(name, {})
                int8 = [r for r in m.inspect() if r["op"] == "brisk::delegate" and "int8" in r["detail"]]
                self.assertEqual(len(int8), partitions if VNNI else 0, [r["detail"] for r in int8])

    def test_depthwise_layers_run_brisks_kernel(self):
        # Values are checked in test_int8_partitions_match_the_program; here, which kernel.
        m = self.check("depthwise", {})
        own = [r for r in m.inspect() if "brisk int8 depthwise" in r["detail"]]
        self.assertEqual(len(own), 4 if AVX512_VNNI else 0, [r["detail"] for r in m.inspect()])
        for r in own:
            self.assertIn("kernel brisk_dw3x3_int8", r["detail"])
        # onednn.int8_depthwise=false: the same layers on oneDNN's int8 kernels, within
        # the same tolerance of the program (check() asserts it).
        off = self.check("depthwise", {"plugin_options": {"onednn.int8_depthwise": "false"}})
        self.assertFalse(any("brisk int8 depthwise" in r["detail"] for r in off.inspect()))
        self.assertEqual(sum("int8" in r["detail"] for r in off.inspect() if r["op"] == "brisk::delegate"),
                         6 if VNNI else 0)

    def test_intra_op_threads_give_the_same_bits(self):
        # With two intra-op threads the depthwise kernel splits its output rows between
        # them (each with its own interleave buffer) and oneDNN its work; int8 sums are
        # exact, so the bits must be one thread's. A fresh Module each time, so the
        # plans (and the autotuning) are made under that thread count.
        _, path = self.programs["depthwise"]
        torch.manual_seed(3)
        x = torch.randn(16, 32, 17, 19)  # enough rows that two threads split them
        one = brisk.load(path)(x)
        torch.set_num_threads(2)
        try:
            m = brisk.load(path)
            two = [m(x) for _ in range(3)]
        finally:
            torch.set_num_threads(1)
        for t in two:
            self.assertTrue(torch.equal(t, one))

    def test_onednns_own_ranking_when_autotuning_is_off(self):
        # onednn.int8_autotune (on by default, so the test above covers it) times oneDNN's
        # first-ranked convolution kernel against jit_int8 per shape; off, oneDNN's
        # ranking stands. Either kernel must give the program's values.
        for name in ("convnet", "residual_relu"):
            with self.subTest(name):
                m = self.check(name, {"plugin_options": {"onednn.int8_autotune": "false"}})
                self.assertFalse(any("timed:" in r["detail"] for r in m.inspect()))

    def test_float_ops_when_int8_is_off(self):
        for name, *_ in CASES:
            with self.subTest(name):
                m = self.check(name, {"plugin_options": {"onednn.int8": "false"}})
                self.assertFalse(any("int8" in r["detail"] for r in m.inspect()))

    def test_threads_and_run_async_give_the_same_bits(self):
        # Runtimes run the int8 partitions concurrently: each binds its own oneDNN memory
        # objects to the shared primitives, packed weights and quantization constants.
        ep, path = self.programs["convnet"]
        m = brisk.load(path)
        torch.manual_seed(2)
        xs = [torch.randn(2, 3, 20, 20) for _ in range(4)]
        expected = [m(x) for x in xs]
        failures = []

        def worker(i):
            for _ in range(10):
                if not torch.equal(m(xs[i]), expected[i]):
                    failures.append(i)

        threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
        for t in threads:
            t.start()
        futures = [m.run_async(x) for x in xs]
        for t in threads:
            t.join()
        self.assertEqual(failures, [])
        for f, e in zip(futures, expected):
            self.assertTrue(torch.equal(f.wait(), e))

    def test_a_reduced_activation_range_keeps_the_float_ops(self):
        # reduce_range quantizes activations to 0..127: not the uint8 range oneDNN's
        # kernels saturate to, so no group is claimed and the program's own ops run.
        ep = quantized_program(ConvNet, (2, 3, 20, 20), reduce_range=True)
        path = os.path.join(self.tmp.name, "convnet_reduced.pt2")
        package_pt2(path, exported_programs={"model": ep})
        m = brisk.load(path)
        self.assertFalse(any("int8" in r["detail"] for r in m.inspect()))
        x = torch.randn(2, 3, 20, 20)
        assert_close(self, m(x), ep.module()(x), "reduce_range")

    def test_results_stay_quantized_between_partitions(self):
        # The residual network's first partition hands uint8 to the second: its
        # quantize is inside the partition, so no standalone quantize is left between.
        if not VNNI:
            self.skipTest("no VNNI: the program's float ops run")
        m = brisk.load(self.programs["residual_relu"][1])
        ops = [r["op"] for r in m.inspect() if r["depth"] == 0]
        self.assertEqual(ops.count("quantized_decomposed::quantize_per_tensor"), 1, ops)  # the model input's


if __name__ == "__main__":
    junit.main("pt2e_int8_test")
