"""Judges one brisk run of a program against the interpreter's.

Outcome.status: "pass"; "refused" (brisk declined to load it with a clear brisk.Error,
which is allowed, and reported); "fail". Outcome.category names the kind of failure
(the shrinker keeps a reduction only if it fails the same way).
"""
import os
import re
import sys
from dataclasses import dataclass

# tools/outputs_close.py, two directories up (runfiles or source tree).
sys.path.append(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools"))
import outputs_close  # noqa: E402

RTOL = 1e-5
ATOL = 1e-5
# brisk's run against the interpreter's: the structure, types (1 is not 1.0, a list not a
# tuple), dtypes and shapes exactly, integers and bools exactly, dict keys in order
# (TorchScript dicts keep insertion order); floats (tensors and Python floats) within
# ATOL * max(1, max |ref|) + RTOL * |ref|, NaN where the interpreter has NaN.
SAME = outputs_close.Rules(rtol=RTOL, atol_scale=ATOL, scale_floor=1.0, equal_nan=True, exact_integers=True,
                           sequences="same", strict_types=True, dict_order=True, float_scalars=True)


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
    """None if got equals ref, else "<path>: <what differs>" (tools/outputs_close.py under
    SAME)."""
    result = outputs_close.compare(got, ref, SAME, path)
    return None if result else str(result)


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
