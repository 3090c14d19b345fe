"""What aoti_delegate_test and aoti_partial_test both check: outputs against ep.module()
within a tolerance that scales with the values, and one Module run from several threads
at once."""
import threading

import torch


def flat(x):
    if isinstance(x, torch.Tensor):
        return [x]
    if isinstance(x, dict):
        return [t for k in sorted(x) for t in flat(x[k])]
    return [t for v in x for t in flat(v)]


def assert_close(test, got, expected, what):
    g, e = flat(got), flat(expected)
    test.assertEqual(len(g), len(e), what)
    for i, (a, b) in enumerate(zip(g, e)):
        test.assertEqual(a.shape, b.shape, f"{what}: output {i}")
        scale = max(1.0, b.abs().max().item())
        test.assertTrue(torch.allclose(a, b, rtol=1e-4, atol=1e-5 * scale),
                        f"{what}: output {i}: max abs diff {(a - b).abs().max().item()}")


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
