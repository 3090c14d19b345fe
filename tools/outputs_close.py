"""Are two outputs of a model close? The one recursive comparison behind every place that asks:
the zoo's export scripts, tools/bench's comparison, the Python tests and the differential
test's verdict. It walks tensors, tuples and lists (named tuples too), dicts, scalars, None,
nested in any way.

Each site keeps its own tolerances and rules as a `Rules` value (they differ on purpose: a
build-time export check, a benchmark across runtimes that sum in other orders and a fuzzer
are not held to the same bound). The result says where (the path, e.g. out[1]['logits'])
and why the first difference is, and the largest absolute difference over all tensors,
which the benchmark tables print.

Tensors must have the same dtype and shape (torch.allclose refuses mixed dtypes, so every
site always required that). Values are compared in double precision, elementwise:

    close  <=>  got == expected
                or |got - expected| <= atol + atol_scale * magnitude + rtol * |base|

where magnitude = max(scale_floor, max |expected|) over the whole reference tensor (NaN
counted as 0, inf as its dtype's largest finite value), and base is the expected value
(torch.allclose(got, expected)'s convention) or, with rtol_of="got", the other one
(torch.allclose(expected, got)'s, as the zoo's export checks always called it). NaNs are
close to NaNs only with equal_nan; an infinite difference is never close.

Imports nothing but torch: genrules (tools/zoo) and tests load it by path.
"""
import dataclasses
import math

import torch

SEQUENCE_RULES = ("any", "isinstance", "named", "same")


@dataclasses.dataclass(frozen=True)
class Rules:
    """How close is close, and which differences in structure count. The defaults are
    exact equality with the loosest container rules; each site spells out the rest."""

    rtol: float = 0.0
    atol: float = 0.0
    # A share of the reference's largest |value|, added to atol: a sum of large terms
    # carries rounding errors relative to the terms, not to a result that may be ~0.
    atol_scale: float = 0.0
    # The least magnitude atol_scale multiplies (1.0: "max |expected|, at least 1").
    scale_floor: float = 0.0
    # Which side rtol multiplies: "expected" (torch.allclose(got, expected)) or "got".
    rtol_of: str = "expected"
    equal_nan: bool = False
    # Integer and bool tensors bit-equal instead of within the tolerance.
    exact_integers: bool = False
    # What a tuple / list must be matched by:
    #   "any"         any tuple or list of the same length (list and tuple interchangeable)
    #   "isinstance"  an instance of the expected value's type
    #   "named"       the same kind (tuple / list), class name and _fields: two NamedTuple
    #                 classes made separately (torch's and brisk's) for one TorchScript type
    #   "same"        exactly the expected value's type
    sequences: str = "any"
    # Every non-tensor value (dicts, scalars, None) of exactly the expected type: 1 is not
    # 1.0 or True, an OrderedDict is not a dict.
    strict_types: bool = False
    # Dict keys in the same order (TorchScript dicts keep insertion order); else as sets.
    dict_order: bool = False
    # Python floats within the tensor tolerance (magnitude: the float itself); else ==.
    float_scalars: bool = False

    def __post_init__(self):
        if self.rtol_of not in ("expected", "got"):
            raise ValueError(f"outputs_close.Rules: rtol_of must be 'expected' or 'got', not {self.rtol_of!r}")
        if self.sequences not in SEQUENCE_RULES:
            raise ValueError(f"outputs_close.Rules: sequences must be one of {SEQUENCE_RULES}, not {self.sequences!r}")

    def replace(self, **changes):
        return dataclasses.replace(self, **changes)


@dataclasses.dataclass
class Result:
    """Truthy when the outputs are close. Otherwise `path` and `reason` describe the first
    difference (in traversal order: sequence index, then the expected dict's key order)."""

    path: str = None
    reason: str = None
    # The largest |got - expected| over every tensor element (0.0 for equal scalars);
    # None when the structure differs anywhere (types, lengths, keys, dtypes, shapes, or
    # unequal non-tensor values), where no such number means anything.
    max_abs_diff: float = 0.0

    @property
    def ok(self):
        return self.path is None

    def __bool__(self):
        return self.ok

    def __str__(self):
        return "close" if self.ok else f"{self.path}: {self.reason}"


def compare(got, expected, rules, path="out"):
    """Compares `got` with the reference `expected` under `rules`; returns a Result."""
    walk = _Walk(rules)
    walk.visit(got, expected, path)
    result = walk.result
    if walk.structure_differs:
        result.max_abs_diff = None
    elif result.max_abs_diff is None:  # nothing to subtract (empty containers): as max(..., default=0.0)
        result.max_abs_diff = 0.0
    return result


def check(got, expected, rules, what="out"):
    """compare(), raising AssertionError("<path>: <reason>") when the outputs differ (a
    test failure under unittest, a failed build step in a genrule)."""
    result = compare(got, expected, rules, what)
    if not result:
        raise AssertionError(str(result))
    return result


class _Walk:
    """One traversal. It does not stop at the first difference: max_abs_diff covers every
    tensor, and a later structural difference still voids it."""

    def __init__(self, rules):
        self.rules = rules
        self.result = Result(max_abs_diff=None)
        self.structure_differs = False

    # --- bookkeeping ---

    def _differ(self, path, reason, structural=True):
        if self.result.path is None:
            self.result.path, self.result.reason = path, reason
        self.structure_differs |= structural

    def _diff(self, d):
        # A running max in which NaN wins, as in a tensor's max(): a NaN difference (NaN
        # against a number, or against NaN under equal_nan) shows as nan, not as 0.
        cur = self.result.max_abs_diff
        if cur is None or math.isnan(d) or (not math.isnan(cur) and d > cur):
            self.result.max_abs_diff = d

    # --- values ---

    def visit(self, got, exp, path):
        r = self.rules
        if isinstance(exp, torch.Tensor):
            return self._tensor(got, exp, path)
        if r.strict_types and type(got) is not type(exp):
            return self._differ(path, f"expected {type(exp).__name__} {_short(exp)}, "
                                      f"got {type(got).__name__} {_short(got)}")
        if isinstance(exp, (list, tuple)):
            return self._sequence(got, exp, path)
        if isinstance(exp, dict):
            return self._dict(got, exp, path)
        if r.float_scalars and isinstance(exp, float) and isinstance(got, float):
            return self._float(got, exp, path)
        if isinstance(got, torch.Tensor) or not got == exp:
            return self._differ(path, f"{_short(got)}, expected {_short(exp)}")
        self._diff(0.0)

    def _sequence(self, got, exp, path):
        rule = self.rules.sequences
        if rule == "any":
            ok = isinstance(got, (list, tuple))
        elif rule == "isinstance":
            ok = isinstance(got, type(exp))
        elif rule == "named":
            ok = (isinstance(got, tuple if isinstance(exp, tuple) else list)
                  and type(got).__name__ == type(exp).__name__
                  and getattr(got, "_fields", None) == getattr(exp, "_fields", None))
        else:
            ok = type(got) is type(exp)
        if not ok:
            return self._differ(path, f"expected {type(exp).__name__} {_short(exp)}, "
                                      f"got {type(got).__name__} {_short(got)}")
        if len(got) != len(exp):
            return self._differ(path, f"length {len(got)}, expected {len(exp)}")
        for i, (g, e) in enumerate(zip(got, exp)):
            self.visit(g, e, f"{path}[{i}]")

    def _dict(self, got, exp, path):
        if not isinstance(got, dict):
            return self._differ(path, f"expected {type(exp).__name__} {_short(exp)}, "
                                      f"got {type(got).__name__} {_short(got)}")
        same = list(got) == list(exp) if self.rules.dict_order else set(got) == set(exp)
        if not same:
            return self._differ(path, f"keys {list(got)}, expected {list(exp)}")
        for k in exp:
            self.visit(got[k], exp[k], f"{path}[{k!r}]")

    def _float(self, got, exp, path):
        r = self.rules
        if math.isnan(exp) or math.isnan(got):
            if not (r.equal_nan and math.isnan(exp) and math.isnan(got)):
                self._differ(path, f"{got!r}, expected {exp!r}", structural=False)
            self._diff(float("nan"))
            return
        d = abs(got - exp)
        magnitude = max(r.scale_floor, abs(exp) if math.isfinite(exp) else 0.0)
        base = exp if r.rtol_of == "expected" else got
        allowed = r.atol + r.atol_scale * magnitude + r.rtol * abs(base)
        if not (got == exp or (math.isfinite(d) and d <= allowed)):
            self._differ(path, f"{got!r}, expected {exp!r}", structural=False)
        self._diff(d)

    def _tensor(self, got, exp, path):
        r = self.rules
        if not isinstance(got, torch.Tensor):
            return self._differ(path, f"expected a Tensor, got {_short(got)}")
        if got.dtype != exp.dtype:
            return self._differ(path, f"dtype {got.dtype}, expected {exp.dtype}")
        if got.shape != exp.shape:
            return self._differ(path, f"shape {tuple(got.shape)}, expected {tuple(exp.shape)}")
        if exp.numel() == 0:
            return self._diff(0.0)
        g, e = _wide(got), _wide(exp)
        d = (g - e).abs()
        self._diff(d.max().item())
        if r.exact_integers and not (exp.is_floating_point() or exp.is_complex()):
            close = g == e
        else:
            allowed = r.atol + r.atol_scale * _magnitude(exp, r.scale_floor)
            base = e if r.rtol_of == "expected" else g
            close = (g == e) | (torch.isfinite(d) & (d <= allowed + r.rtol * base.abs()))
            if r.equal_nan:
                nan_g, nan_e = torch.isnan(g), torch.isnan(e)
                if not torch.equal(nan_g, nan_e):
                    i = (nan_g != nan_e).nonzero()[0].tolist()
                    return self._differ(path, f"NaNs differ ({_at(got, exp, i)})", structural=False)
                close = close | (nan_g & nan_e)
        if not bool(close.all()):
            i = (~close).nonzero()[0].tolist()
            self._differ(path, f"values differ, max abs diff {d.max().item():.3g} ({_at(got, exp, i)})",
                         structural=False)


def _wide(t):
    """Double (complex double) copy: differences of float32 / bf16 / int values exactly."""
    t = t.detach()
    return t.to(torch.complex128) if t.is_complex() else t.to(torch.float64)


def _magnitude(exp, floor):
    """max(floor, max |exp|): NaN counts as 0 and inf as the dtype's largest finite value,
    so one NaN or inf in a reference neither poisons nor unbounds the tolerance."""
    if exp.dtype == torch.bool:
        return floor
    t = exp.detach()
    if t.is_complex():
        t = t.abs()
    if t.is_floating_point():
        t = torch.nan_to_num(t, nan=0.0)
    return max(floor, t.to(torch.float64).abs().max().item())


def _at(got, exp, index):
    """The first differing element: "at [i, j]: got vs expected" (0-d tensors: no index)."""
    g, e = got.detach()[tuple(index)].item(), exp.detach()[tuple(index)].item()
    return f"at {index}: {g!r} vs {e!r}" if index else f"{g!r} vs {e!r}"


def _short(v, limit=120):
    s = f"tensor{tuple(v.shape)} {v.dtype}" if isinstance(v, torch.Tensor) else repr(v)
    return s if len(s) <= limit else s[:limit] + "..."
