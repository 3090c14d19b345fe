"""Writes a model taking (xs: List[Tensor], scale: float) and inputs files for it the way
users save them with torch.save: the list as a plain Python list, `scale` as a rank-0
tensor. The interpreter accepts both; so must the CLI. Usage: make_typed_inputs.py DIR"""
import sys
from typing import List

import torch


class SumScaled(torch.nn.Module):
    def forward(self, xs: List[torch.Tensor], scale: float) -> torch.Tensor:
        out = xs[0] * scale
        for x in xs[1:]:
            out = out + x
        return out


d = sys.argv[1]
torch.jit.script(SumScaled()).save(f"{d}/sum_scaled.pt")
g = torch.Generator().manual_seed(0)
xs = [torch.randn(2, 3, generator=g), torch.randn(2, 3, generator=g)]
torch.save({"args": [xs], "kwargs": {"scale": torch.tensor(2.0)}}, f"{d}/sum_scaled.inputs.pt")
torch.save({"args": [xs, torch.tensor(0.5)], "kwargs": {}}, f"{d}/sum_scaled_pos.inputs.pt")
