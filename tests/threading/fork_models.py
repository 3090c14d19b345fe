#!/usr/bin/env python3
"""TorchScript models with forks for the threading tests: nested forks deeper than the
inter-op arena, a fork whose task raises, a loop of forks whose futures live in a list,
and a model with two independent conv branches (no fork) for the parallel executor.

Usage: /opt/brisk/venv/bin/python3 fork_models.py OUT_DIR
Writes <name>.pt plus <name>.inputs.pt ({"args": [...], "kwargs": {}}, pickle_load
compatible, via tools/zoo/jit_pickle.py).
"""
import os
import sys
import warnings
from typing import List

# Python's hash randomization changes the order in which TorchScript prints module
# __constants__ (a set, e.g. Conv2d's), so the saved archives differ run to run without a
# fixed seed (same fix as tools/zoo/export.py).
if os.environ.get("PYTHONHASHSEED") != "0":
    os.environ["PYTHONHASHSEED"] = "0"
    os.execv(sys.executable, [sys.executable] + sys.argv)

# TorchScript stores each scripted function's source file name in the archives' debug
# info, and Python gives a script run as `python3 PATH` an absolute __file__ (under Bazel,
# the sandbox's execroot). Run this file's code again under its cwd-relative name
# ("tests/threading/fork_models.py" from the workspace root or the execroot) so the
# archives don't depend on where the workspace is (export.py does the same for models.py).
if __name__ == "__main__" and os.path.isabs(__file__):
    _rel = os.path.relpath(__file__)
    if not _rel.startswith(".."):
        with open(__file__) as _f:
            _code = compile(_f.read(), _rel, "exec")
        exec(_code, {"__name__": "__main__", "__file__": _rel, "__builtins__": __builtins__})
        sys.exit(0)

# TorchScript is deprecated (torch >= 2.11): torch.jit.script / save / fork / wait each
# warn "`torch.jit.<fn>` is deprecated. Please ..." (FutureWarning from torch.jit's own
# modules). Silence exactly those; the filter must be in place before the
# @torch.jit.script decorators below run.
warnings.filterwarnings("ignore", message=r"`torch\.jit\.\w+` is deprecated\. Please ",
                        category=FutureWarning, module=r"torch\.jit\.")

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools", "zoo"))
import jit_pickle  # noqa: E402


@torch.jit.script
def leaf(x: torch.Tensor) -> torch.Tensor:
    return torch.tanh(x * 1.5 + 0.25)


# Each level forks the next one and waits for it: depth 8 > any arena size used in
# tests, so every worker ends up waiting on a deeper fork at some point.
@torch.jit.script
def level1(x: torch.Tensor) -> torch.Tensor:
    f = torch.jit.fork(leaf, x)
    return torch.jit.wait(f) + leaf(x - 1.0)


@torch.jit.script
def level2(x: torch.Tensor) -> torch.Tensor:
    f = torch.jit.fork(level1, x)
    return torch.jit.wait(f) * 0.5 + torch.relu(x)


@torch.jit.script
def level3(x: torch.Tensor) -> torch.Tensor:
    f = torch.jit.fork(level2, x + 0.125)
    return torch.jit.wait(f) - torch.sigmoid(x)


@torch.jit.script
def level4(x: torch.Tensor) -> torch.Tensor:
    f = torch.jit.fork(level3, x)
    g = torch.jit.fork(level1, x * 2.0)
    return torch.jit.wait(f) + torch.jit.wait(g)


@torch.jit.script
def level5(x: torch.Tensor) -> torch.Tensor:
    f = torch.jit.fork(level4, x)
    return torch.jit.wait(f) * 2.0


@torch.jit.script
def level6(x: torch.Tensor) -> torch.Tensor:
    f = torch.jit.fork(level5, x - 0.5)
    return torch.jit.wait(f) + level1(x)


@torch.jit.script
def level7(x: torch.Tensor) -> torch.Tensor:
    f = torch.jit.fork(level6, x)
    return torch.jit.wait(f) - 1.0


@torch.jit.script
def level8(x: torch.Tensor) -> torch.Tensor:
    f = torch.jit.fork(level7, x)
    g = torch.jit.fork(level7, x + 1.0)
    return torch.jit.wait(f) * torch.jit.wait(g)


class NestedFork(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return level8(x)


@torch.jit.script
def checked(x: torch.Tensor) -> torch.Tensor:
    if bool(x.sum() > 1000.0):
        raise RuntimeError("forked task refused a large input")
    return x * 3.0


class ThrowingFork(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        f = torch.jit.fork(checked, x)
        y = torch.relu(x)
        return torch.jit.wait(f) + y


@torch.jit.script
def scaled(x: torch.Tensor, k: int) -> torch.Tensor:
    return torch.relu(x * float(k + 1) - 2.0)


class WideFork(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        futs: List[torch.jit.Future[torch.Tensor]] = []
        for k in range(6):
            futs.append(torch.jit.fork(scaled, x, k))
        out = torch.zeros_like(x)
        for f in futs:
            out = out + torch.jit.wait(f)
        return out


class TwoBranches(nn.Module):
    """Two independent conv chains joined at the end: the parallel executor's case."""

    def __init__(self):
        super().__init__()
        self.a1 = nn.Conv2d(16, 32, 3, padding=1)
        self.a2 = nn.Conv2d(32, 32, 3, padding=1)
        self.b1 = nn.Conv2d(16, 32, 1)
        self.b2 = nn.Conv2d(32, 32, 3, padding=1)
        self.fc = nn.Linear(64, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        a = torch.relu(self.a2(torch.relu(self.a1(x))))
        b = torch.sigmoid(self.b2(torch.relu(self.b1(x * 0.5))))
        pooled = torch.cat([a.mean(dim=[2, 3]), b.amax(dim=[2, 3])], dim=1)
        return torch.log_softmax(self.fc(pooled), dim=1)


def main():
    out = sys.argv[1]
    torch.manual_seed(11)
    g = torch.Generator().manual_seed(12)
    models = {
        "nested_fork": (NestedFork(), [torch.randn(4, 8, generator=g)]),
        "throwing_fork": (ThrowingFork(), [torch.randn(3, 5, generator=g)]),
        "wide_fork": (WideFork(), [torch.randn(2, 7, generator=g)]),
        "two_branches": (TwoBranches(), [torch.randn(1, 16, 20, 20, generator=g)]),
    }
    for name, (model, args) in models.items():
        scripted = torch.jit.script(model.eval())
        scripted(*args)  # must run
        torch.jit.save(scripted, os.path.join(out, name + ".pt"))
        jit_pickle.save({"args": args, "kwargs": {}}, os.path.join(out, name + ".inputs.pt"))


if __name__ == "__main__":
    main()
