"""What aoti_delegate_test and aoti_partial_test both check: outputs against ep.module()
within a tolerance that scales with the values, and one Module run from several threads
at once."""
import os
import sys
import threading

import torch

# tools/outputs_close.py, two directories up (runfiles or source tree).
sys.path.append(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools"))
import outputs_close  # noqa: E402

# rtol 1e-4 and an atol of 1e-5 * the reference's largest |value| (at least 1): AOTInductor's
# generated loops sum in other orders than brisk's kernels and ep.module().
CLOSE = outputs_close.Rules(rtol=1e-4, atol_scale=1e-5, scale_floor=1.0, sequences="any")


def flat(x):
    if isinstance(x, torch.Tensor):
        return [x]
    if isinstance(x, dict):
        return [t for k in sorted(x) for t in flat(x[k])]
    return [t for v in x for t in flat(v)]


def assert_close(test, got, expected, what):
    """The outputs' tensors in order (dicts by sorted key), whatever the containers."""
    outputs_close.check(flat(got), flat(expected), CLOSE, what)


def check_threads(test, m, ep, shape, threads=4, runs=20):
    """`threads` threads each run `m` `runs` times on their own random input of `shape`
    and compare with ep.module(); any failure fails `test`."""
    errors = []

    def worker(seed):
        try:
            x = torch.randn(shape, generator=torch.Generator().manual_seed(seed))
            with torch.no_grad():
                want = ep.module()(x)
            for _ in range(runs):
                assert_close(test, m(x), want, f"thread {seed}")
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    pool = [threading.Thread(target=worker, args=(s,)) for s in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    test.assertEqual(errors, [])
