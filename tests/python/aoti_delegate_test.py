"""NativeRT archives with AOTInductor delegates (package_nativert_with_aoti_delegate) in brisk.

Each archive is made here by PyTorch's own writer: torch.export, then
torch.nativert.backends._lower_utils.lower_exported_program (AOTInductor compiles the
whole program) and package_nativert_with_aoti_delegate (one PT2 archive holding the
original program, the delegate program and the compiled files). brisk runs the delegate
program by default, through the aoti plugin, and its outputs are checked against
ep.module() of the original program: zoo models with a dynamic batch and with static
shapes, repeated runs, inputs left unchanged, several threads at once, the parallel
executor, run_async, weight swaps (the containers take the new weights as constants),
the options that choose the original program, and broken archives (a truncated library,
files for another machine or CPU, a delegate program whose files are missing or belong
to another model), each one brisk.Error naming the file.
"""
import copy
import os
import shutil
import sys
import tempfile
import unittest
import zipfile

os.environ.setdefault("OMP_NUM_THREADS", "1")
import torch  # noqa: E402
from torch.nativert.backends._lower_utils import (  # noqa: E402
    lower_exported_program, package_nativert_with_aoti_delegate)

import brisk  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import junit  # noqa: E402
from aoti_checks import assert_close, check_threads  # noqa: E402

torch.set_num_threads(1)
ZOO = os.path.join(os.environ.get("TEST_SRCDIR", ""), "brisk", "tools", "zoo")
sys.path.insert(0, ZOO)
import models  # noqa: E402

TMP = tempfile.mkdtemp(prefix="aoti_delegate_test.")
_ARCHIVES = {}


def archive(name, dynamic_batch=False):
    """The zoo model `name` exported (batch dim dynamic when asked), lowered and packaged
    once per test process; returns (path, eager module, example args)."""
    key = (name, dynamic_batch)
    if key not in _ARCHIVES:
        z = models.MODELS[name]()
        # A batch above 1 for a dynamic one: export specializes a dim of size 1.
        args, kwargs = z.inputs2 if dynamic_batch else z.inputs
        dyn = None
        if dynamic_batch:
            batch = torch.export.Dim("batch", min=1, max=1024)
            dyn = tuple({0: batch} for _ in args)
        ep = torch.export.export(z.eager, tuple(args), kwargs, dynamic_shapes=dyn)
        delegate_ep, files = lower_exported_program(ep, "model", "aoti")
        path = os.path.join(TMP, f"{name}{'.dyn' if dynamic_batch else ''}.aoti.pt2")
        package_nativert_with_aoti_delegate(path, "model", "aoti", ep, delegate_ep, files)
        _ARCHIVES[key] = (path, ep, list(args))
    return _ARCHIVES[key]


def details(m):
    return [n["detail"] for n in m.inspect()]


def rewrite(src, dst, change):
    """Copies archive `src` to `dst`, each member's bytes through change(name, data)
    (return None to leave a member out)."""
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", zipfile.ZIP_STORED) as zout:
        for info in zin.infolist():
            data = change(info.filename, zin.read(info.filename))
            if data is not None:
                zout.writestr(info.filename, data)
    return dst


class WholeGraph(unittest.TestCase):
    def check(self, name, dynamic_batch):
        path, ep, args = archive(name, dynamic_batch)
        m = brisk.load(path)
        self.assertTrue(any("AOTInductor region 'model-aoti'" in d for d in details(m)), details(m))
        ref = ep.module()
        before = [a.clone() for a in args]
        with torch.no_grad():
            expected = ref(*args)
        for i in range(3):
            assert_close(self, m(*args), expected, f"{name} run {i}")
        for a, b in zip(args, before):
            self.assertTrue(torch.equal(a, b), f"{name}: an input changed")
        # Other values of the same shape: not the example's outputs remembered.
        other = [torch.randn_like(a) if a.is_floating_point() else a for a in args]
        with torch.no_grad():
            assert_close(self, m(*other), ref(*other), f"{name} other inputs")
        return m, ep, args

    def test_mlp_dynamic_batch(self):
        m, ep, args = self.check("mlp", dynamic_batch=True)
        # The compiled region is static (NativeRT's lowering re-exports at the example
        # shapes); another batch is refused with a message, and the original program,
        # dynamic, serves it.
        x = torch.randn(5, args[0].shape[1])
        with self.assertRaisesRegex(brisk.Error, "size|shape"):
            m(x)
        original = brisk.load(archive("mlp", True)[0], pt2_program="model")
        with torch.no_grad():
            assert_close(self, original(x), ep.module()(x), "original program, batch 5")

    def test_audio_1d_static(self):
        self.check("audio_1d", dynamic_batch=False)

    def test_det_head_two_inputs_several_outputs(self):
        self.check("det_head", dynamic_batch=False)

    def test_threads_parallel_executor_and_run_async(self):
        path, ep, args = archive("mlp", True)
        with torch.no_grad():
            expected = ep.module()(*args)
        m = brisk.load(path, max_parallel_ops=2, inter_op_threads=2)  # the parallel executor
        futures = [m.run_async(*args) for _ in range(4)]
        for f in futures:
            assert_close(self, f.wait(), expected, "run_async")
        check_threads(self, m, ep, args[0].shape)

    def test_swap_weights(self):
        path, ep, args = archive("mlp", True)
        m = brisk.load(path)
        weights = m.weights()
        self.assertIn("fc1.weight", weights)
        sd = ep.state_dict
        new = {k: sd[k] * 0.5 for k in ("fc1.weight", "fc3.bias")}
        m.swap_weights(new)
        changed = copy.deepcopy(ep.module())  # load_state_dict writes into ep's own tensors
        changed.load_state_dict({**sd, **new}, strict=False)
        with torch.no_grad():
            assert_close(self, m(*args), changed(*args), "after swap")
            self.assertFalse(torch.allclose(m(*args), ep.module()(*args)), "the swap changed nothing")
        with self.assertRaisesRegex(brisk.Error, "fc1.weight"):
            m.swap_weights({"fc1.weight": torch.zeros(3, 3)})

    def test_swap_weights_from_a_plain_export_of_the_model(self):
        path, ep, args = archive("mlp", True)
        m = brisk.load(path)
        sd = {k: v * 0.5 if k == "fc2.weight" else v for k, v in ep.state_dict.items()}
        changed = copy.deepcopy(ep.module())
        changed.load_state_dict(sd, strict=False)
        plain = os.path.join(TMP, "mlp.plain.pt2")
        torch.export.save(torch.export.export(changed, tuple(args)), plain)
        m.swap_weights(plain)
        with torch.no_grad():
            assert_close(self, m(*args), changed(*args), "swapped from a plain export")

    def test_swap_of_a_weight_frozen_into_the_region_is_refused(self):
        # Under freezing AOTInductor packs linear weights into constants of its own (other
        # names, opaque layout): a new value cannot reach them, so the swap is refused and
        # the module keeps serving the old weights.
        z = models.MODELS["mlp"]()
        args, _ = z.inputs
        with torch.no_grad():
            ep = torch.export.export(z.eager, tuple(args))
            with torch._inductor.config.patch({"freezing": True}):
                delegate_ep, files = lower_exported_program(ep, "model", "aoti")
        path = os.path.join(TMP, "mlp.frozen.aoti.pt2")
        package_nativert_with_aoti_delegate(path, "model", "aoti", ep, delegate_ep, files)
        m = brisk.load(path)
        (region,) = [d for d in details(m) if "AOTInductor" in d]
        self.assertNotIn("6 of 6", region)  # some constants are AOTInductor's own
        with torch.no_grad():
            expected = ep.module()(*args)
            assert_close(self, m(*args), expected, "frozen")
            with self.assertRaisesRegex(brisk.Error, "may be folded into the compiled region"):
                m.swap_weights({"fc1.weight": ep.state_dict["fc1.weight"] * 0.5})
            assert_close(self, m(*args), expected, "after the refused swap")

    def test_weights_are_held_once(self):
        m = brisk.load(archive("mlp", True)[0])
        self.assertTrue(any("constants are brisk's weights, read in place" in d for d in details(m)), details(m))


class ChoosingTheProgram(unittest.TestCase):
    def test_options_that_run_the_original(self):
        path, ep, args = archive("mlp", True)
        with torch.no_grad():
            expected = ep.module()(*args)
        for opts in ({"pt2_program": "model"}, {"use_delegates": False}):
            m = brisk.load(path, **opts)
            self.assertFalse(any("AOTInductor" in d for d in details(m)), f"{opts}: {details(m)}")
            assert_close(self, m(*args), expected, str(opts))

    def test_delegate_program_without_its_backend_is_one_error(self):
        path = archive("mlp", True)[0]
        with self.assertRaisesRegex(brisk.Error, "--delegate aoti"):
            brisk.load(path, pt2_program="model-aoti", use_delegates=False)

    def test_any_backend_list_runs_it(self):
        path, ep, args = archive("mlp", True)
        for delegates in (["aoti"], ["onednn"], []):
            m = brisk.load(path, delegates=delegates)
            self.assertTrue(any("AOTInductor" in d for d in details(m)), str(delegates))


class BrokenArchives(unittest.TestCase):
    def broken(self, tag, change):
        src = archive("mlp", True)[0]
        return rewrite(src, os.path.join(TMP, f"broken_{tag}.pt2"), change)

    def expect_error(self, path, pattern):
        with self.assertRaisesRegex(brisk.Error, pattern):
            m = brisk.load(path)
            m(*archive("mlp", True)[2])

    def test_truncated_library(self):
        path = self.broken("truncated", lambda n, d: d[: len(d) // 3] if n.endswith(".so") else d)
        self.expect_error(path, r"wrapper\.so.*truncated|truncated.*wrapper\.so")

    def test_library_that_is_not_elf(self):
        path = self.broken("garbage", lambda n, d: b"\0" * len(d) if n.endswith(".so") else d)
        self.expect_error(path, r"wrapper\.so")

    def test_missing_library(self):
        path = self.broken("missing", lambda n, d: None if n.endswith(".so") else d)
        self.expect_error(path, r"model-aoti.*no AOTInductor library|no data/aotinductor/model-aoti")

    def test_other_machine(self):
        path = self.broken("machine", lambda n, d: d.replace(b'"x86_64"', b'"aarch64"')
                           if n.endswith("_metadata.json") else d)
        self.expect_error(path, r"aarch64.*_metadata\.json")

    def test_other_cpu(self):
        path = self.broken("isa", lambda n, d: d.replace(b'"AOTI_CPU_ISA": "', b'"AOTI_CPU_ISA": "SVE256 ')
                           if n.endswith("_metadata.json") else d)
        self.expect_error(path, r"lacks SVE256")

    def test_files_of_another_model(self):
        other = archive("det_head")[0]
        with zipfile.ZipFile(other) as z:
            lib = next(n for n in z.namelist() if n.endswith(".so"))
            other_so = z.read(lib)
        path = self.broken("swapped", lambda n, d: other_so if n.endswith(".so") else d)
        self.expect_error(path, r"does not match|takes \d+ inputs")


def tearDownModule():
    shutil.rmtree(TMP, ignore_errors=True)


if __name__ == "__main__":
    junit.main("aoti_delegate_test")
