"""The output check: every executor's output against the reference's (eager fp32; for the
static int8 rows the fp32 model their program was quantized from), before any timing. An
executor whose outputs differ is still timed, but never named the best other runtime.

fp32 rows: tools/outputs_close.py under CLOSE. Reduced-precision rows compute something
else on purpose: their largest difference must stay within a share of the reference
output's range, and the share is written into the row's note."""
import os
import sys

import torch

# tools/outputs_close.py, the repository's one "are these outputs close": two levels up
# from this package (tools/bench/comparison), in the runfiles as in the source tree.
# Appended, so nothing in tools/ (cli/, zoo/, ...) shadows a module found elsewhere.
sys.path.append(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
import outputs_close  # noqa: E402

# oneDNN's blocked convolutions (ofi), OpenVINO's and ONNX Runtime's own kernels and
# Inductor's generated loops all sum in other orders than ATen.
RTOL, ATOL = 1e-3, 1e-4
# Lists and tuples alike: the other runtimes return flat lists of what the model returns
# as tuples. Same dtypes and shapes, dict keys in any order, NaN where the reference has NaN.
CLOSE = outputs_close.Rules(rtol=RTOL, atol=ATOL, equal_nan=True, sequences="any")

# Reduced precision (--precision): within this share of the reference output's range.
REDUCED_ERROR = 0.05
# Static int8 (every activation quantized too) is checked against the fp32 model it was
# quantized from (tools/zoo/models_pt2.int8_float_model), and allowed more: the zoo's
# random mobilenet_v2 has 1000 logits within int8 noise of each other, and its PT2E
# program differs from the fp32 model by 12-17% of the output's range (resnet18 and mlp
# about 1%; the column notes give each row's own figure).
REDUCED_ERROR_BY_KIND = {"int8_static": 0.25}


def flat_tensors(obj):
    """A model's inputs or outputs as the flat tensor list exporters use."""
    if isinstance(obj, torch.Tensor):
        return [obj]
    if isinstance(obj, dict):
        return [t for k in obj for t in flat_tensors(obj[k])]
    if isinstance(obj, (list, tuple)):
        return [t for x in obj for t in flat_tensors(x)]
    return []


def compare_outputs(got, expected):
    """(agrees, max abs difference) of two outputs of one model; the difference is None
    when their structure (types, shapes, dtypes, keys) differs."""
    result = outputs_close.compare(got, expected, CLOSE)
    return result.ok, result.max_abs_diff


def output_range(expected):
    ts = [t for t in flat_tensors(expected) if t.is_floating_point() and t.numel()]
    return max((t.max() - t.min()).item() for t in ts) if ts else 0.0


def check_output(e, expected):
    """Runs e once and compares its output with the reference's (other runtimes return
    flat tensor lists: compared with the reference's tensors in the same order)."""
    with e.grad_ctx():
        got = e.fn()
    if e.to_torch is not None:
        return compare_outputs(e.to_torch(got), flat_tensors(expected))
    return compare_outputs(got, expected)


def judge(e, want, what, kind):
    """Sets e.agrees and e.max_abs_diff against the reference `want` (described as
    `what`); a reduced-precision row (`kind`, its --precision) is held to its share of
    the output's range instead, and its note says how far it is."""
    e.agrees, e.max_abs_diff = check_output(e, want)
    if kind and e.max_abs_diff is not None:
        span = output_range(want)
        e.agrees = e.max_abs_diff <= REDUCED_ERROR_BY_KIND.get(kind, REDUCED_ERROR) * span
        e.note = (e.note + "; " if e.note else "") + (
            f"largest difference from {what}: {e.max_abs_diff / max(span, 1e-30):.2%} "
            "of the output's range")
