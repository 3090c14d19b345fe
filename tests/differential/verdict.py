"""Judges one brisk run of a program against the interpreter's.

Outcome.status: "pass"; "refused" (brisk declined to load it with a clear brisk.Error,
which is allowed, and reported); "fail". Outcome.category names the kind of failure
(the shrinker keeps a reduction only if it fails the same way).
"""
import math
import re
from dataclasses import dataclass

import torch

RTOL = 1e-5
ATOL = 1e-5


@dataclass
class Outcome:
    status: str
    category: str = ""
    detail: str = ""

    @property
    def signature(self):
        """The category plus, for a run error, the op and the start of its message
        without paths, node numbers and value names: one signature per bug, roughly.
        The shrinker keeps a reduction only if it still fails with the same signature."""
        if self.category.startswith("crash") or self.category in ("hang", "exit"):
            m = re.search(r"during '(\w+)'", self.detail)
            after = "; after a run error" if "before that:" in self.detail else ""
            return f"{self.category} during {m.group(1) if m else '?'}{after}"
        if not self.category.startswith("run error"):
            return self.category
        m = re.search(r"op (\S+): (.*?)(?:; run |$)", self.detail)
        if not m:
            return self.category
        msg = re.sub(r"%\w+|#\d+|\d+", "N", m.group(2))[:60]
        return f"{self.category}: {m.group(1)}: {msg}"


def first_difference(got, ref, path="out"):
    """None if got equals ref (structure, types, dtypes, shapes; floats within a
    tolerance that grows with the reference's magnitude; everything else exactly)."""
    if isinstance(ref, torch.Tensor):
        if not isinstance(got, torch.Tensor):
            return f"{path}: expected a Tensor, got {_short(got)}"
        if got.dtype != ref.dtype:
            return f"{path}: dtype {got.dtype}, expected {ref.dtype}"
        if got.shape != ref.shape:
            return f"{path}: shape {tuple(got.shape)}, expected {tuple(ref.shape)}"
        if ref.is_floating_point():
            if not torch.equal(torch.isnan(got), torch.isnan(ref)):
                return f"{path}: NaNs differ"
            g, r = got.nan_to_num(0.0).double(), ref.nan_to_num(0.0).double()
            scale = max(1.0, r.abs().max().item()) if r.numel() else 1.0
            bad = (g - r).abs() > ATOL * scale + RTOL * r.abs()
            if bad.any():
                i = bad.nonzero()[0].tolist()
                return (f"{path}: values differ, max abs diff {(g - r).abs().max().item():.3g} "
                        f"(at {i}: {g[tuple(i)].item()!r} vs {r[tuple(i)].item()!r})")
        elif not torch.equal(got, ref):
            return f"{path}: values differ ({_short(got)} vs {_short(ref)})"
        return None
    if type(got) is not type(ref):
        return f"{path}: expected {type(ref).__name__} {_short(ref)}, got {type(got).__name__} {_short(got)}"
    if isinstance(ref, (list, tuple)):
        if len(got) != len(ref):
            return f"{path}: length {len(got)}, expected {len(ref)}"
        for i, (g, r) in enumerate(zip(got, ref)):
            d = first_difference(g, r, f"{path}[{i}]")
            if d:
                return d
        return None
    if isinstance(ref, dict):
        if list(got) != list(ref):  # TorchScript dicts keep insertion order
            return f"{path}: keys {list(got)}, expected {list(ref)}"
        for k in ref:
            d = first_difference(got[k], ref[k], f"{path}[{k!r}]")
            if d:
                return d
        return None
    if isinstance(ref, float):
        if math.isnan(ref) and math.isnan(got):
            return None
        if abs(got - ref) > ATOL * max(1.0, abs(ref)) + RTOL * abs(ref):
            return f"{path}: {got!r}, expected {ref!r}"
        return None
    if got != ref:
        return f"{path}: {_short(got)}, expected {_short(ref)}"
    return None


def _short(v, limit=120):
    s = repr(v) if not isinstance(v, torch.Tensor) else f"tensor{tuple(v.shape)} {v.dtype}"
    return s if len(s) <= limit else s[:limit] + "..."


def is_clear_message(msg):
    """A refusal must say what went wrong in one line of text."""
    return bool(msg.strip()) and "\n" not in msg.strip() and len(msg) < 2000


def judge(program, ref, events):
    runs = {}
    problems = []
    for ev in events:
        kind = ev[0]
        if kind == "load_error":
            _, etype, msg, is_brisk = ev
            if is_brisk and is_clear_message(msg):
                return Outcome("refused", "load refused", msg)
            return Outcome("fail", "load error", f"{etype} at load (not a clear brisk.Error): {msg!r}")
        if kind == "run_error":
            _, tag, etype, msg, _ = ev
            problems.append(("run error", f"run {tag!r} raised {etype}: {msg}"))
        elif kind == "run":
            runs[ev[1]] = ev[2]
        elif kind == "held":
            d = first_difference(ev[2], runs[ev[1]]["out"])
            if d:
                problems.append(("held output", f"run {ev[1]!r}'s outputs changed by later runs: {d}"))
        elif kind == "child_error":
            problems.append(("harness", ev[1]))
        elif kind == "exit":
            st = ev[1]
            if st[0] == "signal":
                return Outcome("fail", f"crash {st[1]}", f"brisk process killed by {st[1]} during {st[2]!r}"
                               + _so_far(problems))
            if st[0] == "timeout":
                return Outcome("fail", "hang", f"brisk did not finish {st[1]!r} in time" + _so_far(problems))
            if st[0] == "exit":
                return Outcome("fail", "exit", f"brisk process exited with {st[1]} during {st[2]!r}"
                               + _so_far(problems))
    for tag, r in ref.items():
        got = runs.get(tag)
        if got is None:
            continue  # reported as a run error
        d = first_difference(got["out"], r["out"])
        if d:
            problems.append(("output", f"run {tag!r}: {d}"))
        if got["stdout"] != r["stdout"]:
            problems.append(("stdout", f"run {tag!r}: printed {got['stdout']!r}, interpreter printed "
                                       f"{r['stdout']!r}"))
        d = first_difference(got["inputs_after"], r["inputs_after"], "inputs")
        if d:
            what = "mutated inputs differ from the interpreter's" if program.mutates_inputs else \
                "inputs changed by the run"
            problems.append(("inputs", f"run {tag!r}: {what}: {d}"))
    if problems:
        cats = sorted({c for c, _ in problems})
        return Outcome("fail", "+".join(cats), "; ".join(d for _, d in problems))
    return Outcome("pass")


def _so_far(problems):
    return ("; before that: " + "; ".join(d for _, d in problems)) if problems else ""
