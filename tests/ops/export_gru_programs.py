"""Exports the GRU programs of fused_gru_step_test.cc with their inputs and
ep.module()'s outputs.

Usage: export_gru_programs.py --out DIR --jit-pickle PATH/jit_pickle.py
Writes <name>.core.pt2 (torch.export's core ATen IR), <name>.inputs.pt and
<name>.expected.pt for each program, and <name>.pt2 (the aten IR, aten.gru.input kept
as one node) for gru_bidir2:
  gru_bidir2        nn.GRU, 2 layers, bidirectional, batch_first, batch 3, initial
                    state given: every step of the core IR must fuse
  gru_cell          a hand-written GRU step loop in nn.GRU's shape and formula: every
                    step must fuse
  gru_cell_swapped  the same with the roles of the r and z gates swapped: not PyTorch's
                    gate order, so no step may fuse
"""
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import export_common  # noqa: E402

H = 16


class GruBidir2(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.gru = torch.nn.GRU(8, H, num_layers=2, bidirectional=True, batch_first=True)

    def forward(self, x, h0):
        return self.gru(x, h0)


class Cell(torch.nn.Module):
    """gh = linear(h) and gx = linear(x_t) split in three, nn.GRU's core-IR shape ([1, B, H] state)."""

    def __init__(self, swapped):
        super().__init__()
        self.swapped = swapped
        self.w_ih = torch.nn.Parameter(torch.randn(3 * H, 8) * 0.3)
        self.w_hh = torch.nn.Parameter(torch.randn(3 * H, H) * 0.3)
        self.b_ih = torch.nn.Parameter(torch.randn(3 * H) * 0.1)
        self.b_hh = torch.nn.Parameter(torch.randn(3 * H) * 0.1)

    def forward(self, x, h):  # x [T, B, 8], h [1, B, H]
        steps, batch = x.shape[0], x.shape[1]
        gx = F.linear(x.reshape(steps * batch, 8), self.w_ih, self.b_ih).view(steps, batch, 3 * H)
        outs = []
        for t in range(steps):
            gh = F.linear(h.view(batch, H), self.w_hh, self.b_hh).view(batch, 3 * H)
            xr, xz, xn = torch.split(gx[t], [H, H, H], 1)
            hr, hz, hn = torch.split(gh, [H, H, H], 1)
            r = torch.sigmoid(hr + xr)
            z = torch.sigmoid(hz + xz)
            if self.swapped:
                r, z = z, r
            n = torch.tanh(xn + hn * r)
            h = (h - n) * z + n
            outs.append(h)
        return torch.cat(outs)


def main():
    out, jit_pickle = export_common.setup()
    torch.manual_seed(7)
    g = torch.Generator().manual_seed(77)
    programs = {
        "gru_bidir2": (GruBidir2().eval(), (torch.randn(3, 5, 8, generator=g), torch.randn(4, 3, H, generator=g))),
        "gru_cell": (Cell(False).eval(), (torch.randn(5, 3, 8, generator=g), torch.randn(1, 3, H, generator=g))),
        "gru_cell_swapped": (Cell(True).eval(), (torch.randn(5, 3, 8, generator=g),
                                                 torch.randn(1, 3, H, generator=g))),
    }
    for name, (module, args) in programs.items():
        ep = torch.export.export(module, args)
        if name == "gru_bidir2":
            torch.export.save(ep, os.path.join(out, name + ".pt2"))
        torch.export.save(ep.run_decompositions(), os.path.join(out, name + ".core.pt2"))
        export_common.save_inputs_and_expected(jit_pickle, out, name, ep, args)


if __name__ == "__main__":
    main()
