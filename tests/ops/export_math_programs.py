"""Exports the programs of out_math_pt2_test.cc with their inputs and ep.module()'s
outputs.

Usage: export_math_programs.py --out DIR --jit-pickle PATH/jit_pickle.py
Writes <name>.pt2 (torch.export's default aten IR), <name>.core.pt2 (the core ATen IR,
run_decompositions()), <name>.inputs.pt and <name>.expected.pt for each program:
  math_ops      exp, abs, sin, cos, bitwise_not, maximum, minimum, a & b (__and__.Tensor;
                bitwise_and.Tensor in the core IR), amax, max.dim, prod.dim_int, std.dim,
                std.correction, new_zeros
  math_inplace  clamp_, masked_fill_.Scalar, silu_, hardswish_, dropout_ (eval) and
                fill_.Tensor, which the aten IR keeps in place
"""
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import export_common  # noqa: E402


class MathOps(torch.nn.Module):
    def forward(self, x, y, m, b, n):
        unary = torch.exp(x) + torch.abs(x) + torch.sin(x) + torch.cos(x)
        mask = ~(m & b)
        bits = torch.bitwise_not(n) & (n + 3)
        ext = torch.maximum(x, y[0]) - torch.minimum(x, y)
        am = torch.amax(x, dim=[0, 1], keepdim=True)
        values, indices = torch.max(x, -1)
        p = torch.prod(y, 1)
        s = torch.std(x, 1, keepdim=True) + torch.std(y, dim=0, correction=0)
        z = x.new_zeros((2, x.shape[1]))
        return unary, mask, bits, ext, am, values, indices, p, s, z


class InPlaceOps(torch.nn.Module):
    def forward(self, x, m, t):
        w = x * 2
        w.clamp_(-1.0, 1.5)
        w.masked_fill_(m, 0.5)
        s = F.silu(x * 3, inplace=True)
        h = F.hardswish(x * 4, inplace=True)
        d = F.dropout(x * 5, 0.1, False, True)
        z = x * 6
        z[0].fill_(t)
        return w, s, h, d, z


def main():
    out, jit_pickle = export_common.setup()
    g = torch.Generator().manual_seed(11)
    programs = {
        "math_ops": (MathOps().eval(), (torch.randn(4, 5, generator=g), torch.rand(4, 5, generator=g) + 0.5,
                                        torch.rand(4, 5, generator=g) > 0.5, torch.rand(5, generator=g) > 0.3,
                                        torch.randint(-50, 50, (4, 5), generator=g, dtype=torch.int32))),
        "math_inplace": (InPlaceOps().eval(), (torch.randn(3, 6, generator=g), torch.rand(6, generator=g) > 0.5,
                                               torch.tensor(-2.5))),
    }
    for name, (module, args) in programs.items():
        ep = torch.export.export(module, args)
        torch.export.save(ep, os.path.join(out, name + ".pt2"))
        torch.export.save(ep.run_decompositions(), os.path.join(out, name + ".core.pt2"))
        export_common.save_inputs_and_expected(jit_pickle, out, name, ep, args)


if __name__ == "__main__":
    main()
