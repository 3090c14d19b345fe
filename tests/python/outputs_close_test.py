"""The specification of tools/outputs_close.py, the one "are these outputs close" of the
repository (the zoo export checks, tools/bench's comparison, the Python tests, the
differential verdict): what each rule means, where the result says the outputs differ,
and the differences that must fail. Pure Python on small tensors: no model, no brisk."""
import collections
import math
import os
import sys
import unittest

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import junit  # noqa: E402

# tools/outputs_close.py, two directories up (runfiles or source tree).
sys.path.append(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools"))
import outputs_close as oc  # noqa: E402

EXACT = oc.Rules()
LOOSE = oc.Rules(rtol=1e-3, atol=1e-4)
Pair = collections.namedtuple("Pair", ["a", "b"])
OtherPair = collections.namedtuple("Pair", ["a", "b"])  # another class, same name and fields
Renamed = collections.namedtuple("Renamed", ["a", "b"])
Refielded = collections.namedtuple("Pair", ["x", "y"])  # same name, other fields


class Result(unittest.TestCase):
    def test_close_is_truthy_with_no_path(self):
        r = oc.compare(torch.ones(2), torch.ones(2), EXACT)
        self.assertTrue(r)
        self.assertTrue(r.ok)
        self.assertIsNone(r.path)
        self.assertEqual(str(r), "close")
        self.assertEqual(r.max_abs_diff, 0.0)

    def test_difference_says_where_and_why(self):
        got = {"logits": (torch.zeros(2), torch.tensor([1.0, 2.5]))}
        want = {"logits": (torch.zeros(2), torch.tensor([1.0, 2.0]))}
        r = oc.compare(got, want, LOOSE, "model")
        self.assertFalse(r)
        self.assertEqual(r.path, "model['logits'][1]")
        self.assertIn("values differ, max abs diff 0.5", r.reason)
        self.assertIn("at [1]: 2.5 vs 2.0", r.reason)
        self.assertEqual(str(r), f"model['logits'][1]: {r.reason}")
        self.assertEqual(r.max_abs_diff, 0.5)

    def test_the_first_difference_is_reported_the_largest_measured(self):
        got = [torch.tensor([1.1]), torch.tensor([3.0])]
        want = [torch.tensor([1.0]), torch.tensor([1.0])]
        r = oc.compare(got, want, EXACT)
        self.assertEqual(r.path, "out[0]")
        self.assertAlmostEqual(r.max_abs_diff, 2.0)

    def test_structure_differences_have_no_max_diff(self):
        r = oc.compare([torch.ones(2) * 5, torch.ones(3)], [torch.ones(2), torch.ones(4)], EXACT)
        self.assertFalse(r)
        self.assertEqual(r.path, "out[0]")  # the first difference, a value one
        self.assertIsNone(r.max_abs_diff)   # but the shapes differ at out[1]
        self.assertIsNone(oc.compare("a", "b", EXACT).max_abs_diff)

    def test_a_nan_difference_shows_as_nan(self):
        nan = float("nan")
        got = [torch.tensor([nan]), torch.tensor([5.0])]
        want = [torch.tensor([1.0]), torch.tensor([1.0])]
        self.assertTrue(math.isnan(oc.compare(got, want, EXACT).max_abs_diff))
        got.reverse()
        self.assertTrue(math.isnan(oc.compare(got, want, EXACT).max_abs_diff))

    def test_empty_outputs_agree_with_zero_difference(self):
        self.assertEqual(oc.compare([], [], EXACT).max_abs_diff, 0.0)
        self.assertEqual(oc.compare(torch.ones(0, 3), torch.ones(0, 3), EXACT).max_abs_diff, 0.0)

    def test_check_raises_assertion_error_with_the_path(self):
        oc.check(torch.ones(2), torch.ones(2), EXACT, "fine")
        with self.assertRaisesRegex(AssertionError, r"^m/inputs\[0\]: values differ"):
            oc.check([torch.ones(2)], [torch.zeros(2)], EXACT, "m/inputs")

    def test_rules_are_validated(self):
        with self.assertRaises(ValueError):
            oc.Rules(rtol_of="reference")
        with self.assertRaises(ValueError):
            oc.Rules(sequences="loose")
        self.assertEqual(LOOSE.replace(atol=0.5).atol, 0.5)
        self.assertEqual(LOOSE.atol, 1e-4)


class Tensors(unittest.TestCase):
    def test_dtype_and_shape_must_match(self):
        r = oc.compare(torch.ones(2, dtype=torch.float64), torch.ones(2), LOOSE)
        self.assertEqual(r.reason, "dtype torch.float64, expected torch.float32")
        r = oc.compare(torch.ones(1, 2), torch.ones(2), LOOSE)
        self.assertEqual(r.reason, "shape (1, 2), expected (2,)")
        self.assertIn("expected a Tensor", oc.compare(1.0, torch.tensor(1.0), LOOSE).reason)

    def test_rtol_and_atol_as_torch_allclose(self):
        # |got - expected| <= atol + rtol * |expected|
        rules = oc.Rules(rtol=0.1, atol=0.01)
        self.assertTrue(oc.compare(torch.tensor([10.0 + 1.0]), torch.tensor([10.0]), rules))
        self.assertFalse(oc.compare(torch.tensor([10.0 + 1.02]), torch.tensor([10.0]), rules))
        self.assertTrue(oc.compare(torch.tensor([0.01]), torch.tensor([0.0]), rules))
        self.assertFalse(oc.compare(torch.tensor([0.02]), torch.tensor([0.0]), rules))

    def test_rtol_of_got(self):
        # torch.allclose(expected, got): rtol multiplies |got| (the zoo export checks).
        got, want = torch.tensor([2.0]), torch.tensor([1.0])
        self.assertFalse(oc.compare(got, want, oc.Rules(rtol=0.6)))
        self.assertTrue(oc.compare(got, want, oc.Rules(rtol=0.6, rtol_of="got")))

    def test_atol_scales_with_the_references_magnitude(self):
        # atol + atol_scale * max(scale_floor, max |expected|)
        want = torch.tensor([1000.0, 0.0])
        rules = oc.Rules(atol_scale=1e-3)
        self.assertTrue(oc.compare(torch.tensor([1000.0, 0.9]), want, rules))   # allowed 1.0
        self.assertFalse(oc.compare(torch.tensor([1000.0, 1.1]), want, rules))
        self.assertTrue(oc.compare(torch.tensor([1000.0, 1.1]), want, rules.replace(atol=0.2)))

    def test_scale_floor(self):
        want, got = torch.tensor([0.001]), torch.tensor([0.0015])
        self.assertFalse(oc.compare(got, want, oc.Rules(atol_scale=1e-3)))     # allowed 1e-6
        self.assertTrue(oc.compare(got, want, oc.Rules(atol_scale=1e-3, scale_floor=1.0)))  # 1e-3
        # An empty or bool reference has only the floor.
        self.assertTrue(oc.compare(torch.ones(0), torch.ones(0), oc.Rules(atol_scale=1e-3, scale_floor=1.0)))

    def test_magnitude_ignores_nan_and_bounds_inf(self):
        rules = oc.Rules(atol_scale=1e-3, scale_floor=1.0, equal_nan=True)
        want = torch.tensor([float("nan"), 1000.0])
        self.assertTrue(oc.compare(torch.tensor([float("nan"), 1000.5]), want, rules))  # NaN counted as 0
        self.assertFalse(oc.compare(torch.tensor([float("nan"), 1002.0]), want, rules))
        # inf counts as float32's largest value (3.4e38): atol 3.4e35, not unbounded.
        want = torch.tensor([float("inf"), 0.0])
        self.assertTrue(oc.compare(torch.tensor([float("inf"), 1e35]), want, rules))
        self.assertFalse(oc.compare(torch.tensor([float("inf"), 1e36]), want, rules))

    def test_nan(self):
        want = torch.tensor([1.0, float("nan")])
        self.assertFalse(oc.compare(want.clone(), want, LOOSE))
        self.assertTrue(oc.compare(want.clone(), want, LOOSE.replace(equal_nan=True)))
        r = oc.compare(torch.tensor([float("nan"), 1.0]), want, LOOSE.replace(equal_nan=True))
        self.assertEqual(r.reason, "NaNs differ (at [0]: nan vs 1.0)")
        # NaN is never close to a number, whatever the tolerance.
        self.assertFalse(oc.compare(torch.tensor([float("nan")]), torch.tensor([1.0]), oc.Rules(atol=1e9)))

    def test_infinities(self):
        inf = float("inf")
        self.assertTrue(oc.compare(torch.tensor([inf, -inf]), torch.tensor([inf, -inf]), EXACT))
        self.assertFalse(oc.compare(torch.tensor([inf]), torch.tensor([-inf]), oc.Rules(atol=1e9)))
        self.assertFalse(oc.compare(torch.tensor([1e38]), torch.tensor([inf]), oc.Rules(rtol=1.0)))

    def test_default_rules_are_exact(self):
        self.assertFalse(oc.compare(torch.tensor([1.0 + 1e-6]), torch.tensor([1.0]), EXACT))
        self.assertTrue(oc.compare(torch.tensor([-0.0]), torch.tensor([0.0]), EXACT))

    def test_values_are_compared_in_double(self):
        # 1 - 2**-30 rounds to 1.0 in float32; the difference of the two float32 values is exact.
        got, want = torch.tensor([1.0]), torch.tensor([2.0 ** -30])
        self.assertEqual(oc.compare(got, want, EXACT).max_abs_diff, 1.0 - 2.0 ** -30)

    def test_integers_within_the_tolerance_or_exactly(self):
        got, want = torch.tensor([100001]), torch.tensor([100000])
        self.assertTrue(oc.compare(got, want, oc.Rules(rtol=1e-5)))
        self.assertFalse(oc.compare(got, want, oc.Rules(rtol=1e-5, exact_integers=True)))
        exact_ints = oc.Rules(atol=0.5, exact_integers=True)
        self.assertFalse(oc.compare(torch.tensor([True]), torch.tensor([False]), exact_ints))
        self.assertTrue(oc.compare(torch.tensor([1.25]), torch.tensor([1.0]), exact_ints))  # floats still within
        self.assertTrue(oc.compare(torch.tensor([True]), torch.tensor([True]), oc.Rules(atol_scale=1.0)))

    def test_requires_grad_and_views(self):
        want = torch.ones(4, requires_grad=True)
        self.assertTrue(oc.compare(want * 1.0, want, EXACT))
        self.assertTrue(oc.compare(torch.ones(2, 4)[:, 1], torch.ones(2), EXACT))

    def test_zero_dim(self):
        r = oc.compare(torch.tensor(2.0), torch.tensor(1.0), EXACT)
        self.assertEqual(r.reason, "values differ, max abs diff 1 (2.0 vs 1.0)")


class Containers(unittest.TestCase):
    def test_nested(self):
        want = {"a": [torch.ones(2), (torch.zeros(1), None)], "b": 3, "c": "text"}
        got = {"a": [torch.ones(2), (torch.zeros(1), None)], "b": 3, "c": "text"}
        self.assertTrue(oc.compare(got, want, EXACT))
        got["a"][1] = (torch.zeros(1), 0)
        r = oc.compare(got, want, EXACT)
        self.assertEqual((r.path, r.reason), ("out['a'][1][1]", "0, expected None"))

    def test_length(self):
        r = oc.compare([1, 2], [1, 2, 3], EXACT)
        self.assertEqual(r.reason, "length 2, expected 3")

    def test_sequences_any(self):
        rules = oc.Rules(sequences="any")
        self.assertTrue(oc.compare([1, 2], (1, 2), rules))
        self.assertTrue(oc.compare(Pair(1, 2), (1, 2), rules))
        self.assertFalse(oc.compare({0: 1}, [1], rules))

    def test_sequences_isinstance(self):
        rules = oc.Rules(sequences="isinstance")
        self.assertTrue(oc.compare(Pair(1, 2), (1, 2), rules))  # a namedtuple is a tuple
        self.assertFalse(oc.compare((1, 2), Pair(1, 2), rules))
        self.assertFalse(oc.compare([1, 2], (1, 2), rules))

    def test_sequences_named(self):
        rules = oc.Rules(sequences="named")
        self.assertTrue(oc.compare(OtherPair(1, 2), Pair(1, 2), rules))  # same name and fields
        self.assertFalse(oc.compare(Renamed(1, 2), Pair(1, 2), rules))
        self.assertFalse(oc.compare(Refielded(1, 2), Pair(1, 2), rules))
        self.assertFalse(oc.compare((1, 2), Pair(1, 2), rules))
        self.assertFalse(oc.compare((1, 2), [1, 2], rules))
        self.assertTrue(oc.compare([1, 2], [1, 2], rules))

    def test_sequences_same(self):
        rules = oc.Rules(sequences="same")
        self.assertFalse(oc.compare(OtherPair(1, 2), Pair(1, 2), rules))
        self.assertFalse(oc.compare(Pair(1, 2), (1, 2), rules))
        r = oc.compare([1, 2], (1, 2), rules)
        self.assertEqual(r.reason, "expected tuple (1, 2), got list [1, 2]")

    def test_dict_keys(self):
        self.assertTrue(oc.compare({"b": 1, "a": 2}, {"a": 2, "b": 1}, EXACT))
        self.assertFalse(oc.compare({"b": 1, "a": 2}, {"a": 2, "b": 1}, oc.Rules(dict_order=True)))
        r = oc.compare({"a": 1}, {"b": 1}, EXACT)
        self.assertEqual(r.reason, "keys ['a'], expected ['b']")
        self.assertIn("expected dict", oc.compare([1], {"a": 1}, EXACT).reason)
        # Mixed key types need no ordering.
        self.assertTrue(oc.compare({1: 0, "x": 0}, {"x": 0, 1: 0}, EXACT))

    def test_dicts_iterate_in_the_references_order(self):
        got = {"a": torch.ones(1) * 2, "b": torch.ones(1) * 2}
        want = collections.OrderedDict([("b", torch.ones(1)), ("a", torch.ones(1))])
        self.assertEqual(oc.compare(got, want, EXACT).path, "out['b']")

    def test_strict_types(self):
        rules = oc.Rules(strict_types=True)
        self.assertTrue(oc.compare(1, 1.0, EXACT))
        self.assertFalse(oc.compare(1, 1.0, rules))
        self.assertFalse(oc.compare(True, 1, rules))
        self.assertFalse(oc.compare({"a": 1}, collections.OrderedDict(a=1), rules))
        r = oc.compare(None, 0, rules)
        self.assertEqual(r.reason, "expected int 0, got NoneType None")

    def test_scalars_exact_unless_float_scalars(self):
        self.assertFalse(oc.compare(1.0 + 1e-9, 1.0, LOOSE))
        rules = LOOSE.replace(float_scalars=True)
        self.assertTrue(oc.compare(1.0 + 1e-9, 1.0, rules))
        self.assertFalse(oc.compare(1.1, 1.0, rules))
        self.assertEqual(oc.compare(1.1, 1.0, rules).reason, "1.1, expected 1.0")
        # The scalar's own magnitude scales atol_scale, as a 0-d tensor's would.
        self.assertTrue(oc.compare(1000.5, 1000.0, oc.Rules(atol_scale=1e-3, float_scalars=True)))

    def test_float_scalar_nan(self):
        rules = LOOSE.replace(float_scalars=True)
        nan = float("nan")
        self.assertFalse(oc.compare(nan, nan, rules))
        self.assertTrue(oc.compare(nan, nan, rules.replace(equal_nan=True)))
        # NaN against a number differs, either way round.
        self.assertFalse(oc.compare(nan, 2.5, rules.replace(equal_nan=True)))
        self.assertFalse(oc.compare(2.5, nan, rules.replace(equal_nan=True)))

    def test_tensor_where_a_scalar_is_expected(self):
        self.assertFalse(oc.compare(torch.ones(3), 1.0, LOOSE))
        self.assertFalse(oc.compare(torch.ones(3), None, LOOSE))


class Sites(unittest.TestCase):
    """The rules the repository's sites use, on the cases that tell them apart."""

    def test_compare_treats_runtime_lists_like_tuples(self):
        # tools/bench: other runtimes return flat lists of what the model returns as tuples.
        rules = oc.Rules(rtol=1e-3, atol=1e-4, equal_nan=True, sequences="any")
        a = torch.ones(3)
        self.assertTrue(oc.compare([a + 1e-6, a], (a, a), rules))
        self.assertEqual(oc.compare([a], (a, a), rules).max_abs_diff, None)

    def test_verdict_holds_types_and_integers_exactly(self):
        rules = oc.Rules(rtol=1e-5, atol_scale=1e-5, scale_floor=1.0, equal_nan=True, exact_integers=True,
                         sequences="same", strict_types=True, dict_order=True, float_scalars=True)
        self.assertTrue(oc.compare([torch.tensor([1.0 + 1e-6]), 2.0], [torch.tensor([1.0]), 2.0], rules))
        self.assertFalse(oc.compare([torch.tensor([1]), 2.0], [torch.tensor([2]), 2.0], rules))
        self.assertFalse(oc.compare((1, 2), [1, 2], rules))
        self.assertFalse(oc.compare(2, 2.0, rules))


if __name__ == "__main__":
    junit.main("outputs_close_test")
