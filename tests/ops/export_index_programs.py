"""Exports the PT2 programs of pt2_index_b_test.cc with their inputs and ep.module()'s
outputs.

Usage: export_index_programs.py --out DIR --jit-pickle PATH/jit_pickle.py
Writes <name>.pt2, <name>.inputs.pt and <name>.expected.pt for:
  index_aten     the ops of ops_cpu's indexing / resize_pad / views_more / einsum /
                 conv1d / group_norm kernels as torch.export's aten IR names them
                 (einsum.default, pad.default, upsample_nearest2d.vec, ...), plus a
                 .to(dtype) (_assert_tensor_metadata)
  index_core     the same program in the core ATen IR (constant_pad_nd, alias,
                 upsample_nearest*d.default, ...)
  index_dynamic  a dynamic batch whose element count is read (sym_numel)
and index_assert_fails.pt2 with its inputs: x.to(float64) whose
_assert_tensor_metadata was edited to expect float64, so that on its float32 input
(which brisk's input check accepts) the assertion itself must fail.
"""
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import export_common  # noqa: E402


class Ops(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv1d(4, 6, 3, padding=1)
        self.norm = torch.nn.GroupNorm(3, 6)

    def forward(self, x, idx, img, vol):  # x [B, 4, 8], idx [B, 4, 3] int64, img [B, 2, 3, 5], vol [B, 1, 2, 3, 2]
        outs = [
            torch.einsum("bij,bkj->bik", x, x),
            torch.roll(x, shifts=(1, -2), dims=(1, -1)),
            F.pad(x, (1, 2), value=0.25),
            F.pad(img, (1, 1, 2, 0), mode="reflect"),
            F.pad(x, (2, 1), mode="replicate"),
            torch.gather(x, 2, idx),
        ]
        values, indices = torch.topk(x, 3, dim=-1)
        outs += [values, indices]
        row = idx[0, 0]
        outs += [
            torch.index_select(x, -1, row),
            torch.diagonal(x, 1, 1, 2) * 2,
            torch.narrow(x, 2, 2, 4) + 1,
            x.index_add(2, row, x[:, :, :3], alpha=0.5),
            torch.swapaxes(x, 0, 2) - 1,
            x.detach() * 3,
            F.interpolate(x, scale_factor=2.0, mode="nearest"),
            F.interpolate(img, size=(5, 7), mode="nearest"),
            F.interpolate(vol, scale_factor=(2.0, 1.5, 2.0), mode="nearest"),
            self.norm(self.conv(x)),
            x.to(torch.float64) + 1,
        ]
        return tuple(outs)


class ToDouble(torch.nn.Module):
    def forward(self, x):
        return x.to(torch.float64) + 1


def assert_fails(args):
    ep = torch.export.export(ToDouble(), args)
    for n in ep.graph.nodes:
        if n.target is torch.ops.aten._assert_tensor_metadata.default:
            n.kwargs = {**n.kwargs, "dtype": torch.float64}
    ep.graph_module.recompile()
    return ep


class Dynamic(torch.nn.Module):
    def forward(self, x):
        return x.reshape(x.numel()) * 2, x.sum() / x.numel()


def main():
    out, jit_pickle = export_common.setup()
    torch.manual_seed(11)
    g = torch.Generator().manual_seed(111)
    ops_args = (torch.randn(2, 4, 8, generator=g), torch.randint(0, 8, (2, 4, 3), generator=g),
                torch.randn(2, 2, 3, 5, generator=g), torch.randn(2, 1, 2, 3, 2, generator=g))
    ops = torch.export.export(Ops().eval(), ops_args)
    batch = torch.export.Dim("batch", min=2, max=64)
    dyn_args = (torch.randn(3, 5, generator=g),)
    dyn = torch.export.export(Dynamic(), dyn_args, dynamic_shapes={"x": {0: batch}})
    programs = {
        "index_aten": (ops, ops_args),
        "index_core": (ops.run_decompositions(), ops_args),
        "index_dynamic": (dyn, dyn_args),
    }
    for name, (ep, args) in programs.items():
        torch.export.save(ep, os.path.join(out, name + ".pt2"))
        export_common.save_inputs_and_expected(jit_pickle, out, name, ep, args)
    assert_args = (torch.randn(2, 3, generator=g),)
    torch.export.save(assert_fails(assert_args), os.path.join(out, "index_assert_fails.pt2"))
    jit_pickle.save({"args": list(assert_args), "kwargs": {}}, os.path.join(out, "index_assert_fails.inputs.pt"))


if __name__ == "__main__":
    main()
