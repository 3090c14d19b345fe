"""Exports the LSTM programs of fused_lstm_step_test.cc in torch.export's core ATen IR,
with their inputs and ep.module()'s outputs.

Usage: export_lstm_cells.py --out DIR --jit-pickle PATH/jit_pickle.py
Writes <name>.core.pt2, <name>.inputs.pt and <name>.expected.pt for:
  lstm_b10       nn.LSTM at batch 10 (more rows than the small GEMM takes: the sgemm_
                 path), returning the last h and c as well
  lstm_bidir2    nn.LSTM, 2 layers, bidirectional, 7 steps at batch 3, no initial
                 state (the first steps are folded), returning the last h and c: two
                 layer nodes whose h_n / c_n replace the last steps' states
  cell           a hand-written LSTM step loop in nn.LSTM's shape, initial state given
                 as inputs (so no step is folded away): every step must fuse
  cell_swapped   the same with the roles of the i and f gates swapped: not ATen's gate
                 order, so no step may fuse
"""
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import export_common  # noqa: E402

H = 16


class LstmB10(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = torch.nn.LSTM(8, H, batch_first=True)

    def forward(self, x):
        y, (h, c) = self.lstm(x)
        return y, h, c


class LstmBidir2(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = torch.nn.LSTM(8, H, num_layers=2, bidirectional=True)

    def forward(self, x):
        y, (h, c) = self.lstm(x)
        return y, h, c


class Cell(torch.nn.Module):
    """gates = linear(h) + linear(x_t), nn.LSTM's core-IR shape ([1, B, H] state)."""

    def __init__(self, swapped):
        super().__init__()
        self.swapped = swapped
        self.w_ih = torch.nn.Parameter(torch.randn(4 * H, 8) * 0.3)
        self.w_hh = torch.nn.Parameter(torch.randn(4 * H, H) * 0.3)
        self.b_ih = torch.nn.Parameter(torch.randn(4 * H) * 0.1)
        self.b_hh = torch.nn.Parameter(torch.randn(4 * H) * 0.1)

    def forward(self, x, h, c):  # x [T, B, 8], h and c [1, B, H]
        steps, batch = x.shape[0], x.shape[1]
        gx = F.linear(x.reshape(steps * batch, 8), self.w_ih, self.b_ih).view(steps, batch, 4 * H)
        outs = []
        for t in range(steps):
            gates = F.linear(h.view(batch, H), self.w_hh, self.b_hh).view(1, batch, 4 * H) + gx[t]
            i, f, g, o = torch.split(gates, [H, H, H, H], 2)
            if self.swapped:
                i, f = f, i
            c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
            h = torch.sigmoid(o) * torch.tanh(c)
            outs.append(h)
        return torch.cat(outs), c


def main():
    out, jit_pickle = export_common.setup()
    torch.manual_seed(5)
    g = torch.Generator().manual_seed(55)
    programs = {
        "lstm_b10": (LstmB10().eval(), (torch.randn(10, 4, 8, generator=g),)),
        "lstm_bidir2": (LstmBidir2().eval(), (torch.randn(7, 3, 8, generator=g),)),
        "cell": (Cell(False).eval(), (torch.randn(5, 3, 8, generator=g), torch.randn(1, 3, H, generator=g),
                                      torch.randn(1, 3, H, generator=g))),
        "cell_swapped": (Cell(True).eval(), (torch.randn(5, 3, 8, generator=g), torch.randn(1, 3, H, generator=g),
                                             torch.randn(1, 3, H, generator=g))),
    }
    for name, (module, args) in programs.items():
        ep = torch.export.export(module, args).run_decompositions()
        torch.export.save(ep, os.path.join(out, name + ".core.pt2"))
        export_common.save_inputs_and_expected(jit_pickle, out, name, ep, args)


if __name__ == "__main__":
    main()
