"""A Module across the life of its process: Python exiting while daemon threads are in
the middle of runs, os.fork() after the inter-op arena ran, and a task launcher that
calls the Module it launches for. Each case runs in a fresh Python process under a
timeout, so an abort or a hang is a failed test, not a lost run."""
import os
import subprocess
import sys
import textwrap
import unittest

import torch  # noqa: F401  (the binding needs it loaded)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import junit  # noqa: E402

ZOO = os.path.join(os.environ.get("TEST_SRCDIR", ""), "brisk", "tools", "zoo")

PRELUDE = textwrap.dedent("""
    import os, sys, threading, time, torch, brisk
    torch.set_num_threads(1)
    zoo = sys.argv[1]
    x = torch.load(zoo + "/inception_fork.inputs.pt")["args"]
    expected = torch.jit.load(zoo + "/inception_fork.pt")(*x)
    def load(**kw):
        return brisk.load(zoo + "/inception_fork.pt", **kw)
""")


def run(body, timeout=120):
    p = subprocess.run([sys.executable, "-c", PRELUDE + textwrap.dedent(body), ZOO],
                       capture_output=True, text=True, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


class ProcessLifecycle(unittest.TestCase):
    def test_exit_with_runs_in_flight(self):
        # Daemon threads loop runs (serial and parallel executor, with and without a
        # Python launcher); the main thread returns while they run.
        #
        # The daemon threads hand their results to the main thread instead of dropping
        # them. A daemon thread that frees any torch tensor while the interpreter
        # finalizes can abort the process inside torch itself: torch frees a tensor
        # with the GIL released, and taking it back during finalization ends the thread
        # through a noexcept destructor (pytorch/pytorch#38228, "terminate called
        # without an active exception"). Measured here: a daemon loop of plain
        # torch.nn.functional.conv2d aborted 120 exits of 120; the same loop of brisk
        # runs that dropped its results, 1 of 120. What is left is brisk's part: runs
        # inside brisk, on its own threads and the inter-op arena, when Python exits.
        for launcher in ("None", "lambda t: t()"):
            for opts in ("", "max_parallel_ops=2"):
                body = f"""
                    import queue
                    m = load({opts})
                    results = queue.SimpleQueue()
                    def loop():
                        while True:
                            results.put(m.run_async(*x, launcher={launcher}).wait())
                            results.put(m(*x))
                    for _ in range(3):
                        threading.Thread(target=loop, daemon=True).start()
                    deadline = time.monotonic() + 0.5
                    while time.monotonic() < deadline:
                        results.get()  # freed here, by the main thread
                    print("main returns")
                """
                for attempt in range(2):  # the exit races the runs: try it more than once
                    rc, out, err = run(body)
                    what = f"launcher={launcher} {opts} attempt {attempt}"
                    self.assertEqual(rc, 0, f"{what}: exit {rc}: {err[-2000:]}")
                    self.assertIn("main returns", out, what)
                    self.assertNotIn("terminate called", err, what)

    def test_fork_after_the_parallel_executor_ran(self):
        rc, out, err = run("""
            import traceback
            m = load(max_parallel_ops=4)
            assert torch.allclose(m(*x), expected, rtol=1e-4, atol=1e-5)
            # Several children: in each, the first runs set up libtorch's per-thread
            # state on new threads at once, which is where a race would show.
            for i in range(6):
                pid = os.fork()
                if pid == 0:
                    # Always os._exit: a child leaving through Python's exit would run
                    # the destructors of libtorch's pools, whose threads died at fork.
                    try:
                        ok = torch.allclose(m(*x), expected, rtol=1e-4, atol=1e-5)
                        if i == 0:
                            ok = ok and torch.allclose(load(max_parallel_ops=4)(*x), expected, rtol=1e-4, atol=1e-5)
                    except BaseException:
                        traceback.print_exc()
                        os._exit(4)
                    os._exit(0 if ok else 3)
                _, status = os.waitpid(pid, 0)
                print("child", os.waitstatus_to_exitcode(status))
                m(*x)
        """, timeout=180)
        self.assertEqual(rc, 0, err[-2000:])
        self.assertEqual(out.split("\n").count("child 0"), 6, out + err[-2000:])

    def test_launcher_calling_the_same_module(self):
        # Under max_runtimes=1 the nested call would wait for the run that launched it.
        rc, out, err = run("""
            for cap in (1, 2):
                m = load(max_runtimes=cap)
                def launcher(task):
                    m(*x)
                    task()
                try:
                    got = m.run_async(*x, launcher=launcher).wait()
                    print(cap, torch.allclose(got, expected, rtol=1e-4, atol=1e-5))
                except brisk.Error as e:
                    print(cap, "error:", e)
                print(cap, "after", torch.allclose(m(*x), expected, rtol=1e-4, atol=1e-5))
        """)
        self.assertEqual(rc, 0, err[-2000:])
        # Refused under max_runtimes=1, with one error: the nested call's, raised by the
        # launcher and so the run's.
        self.assertIn("1 error:", out)
        self.assertIn("would wait for itself forever", out)
        self.assertIn("run_async launcher raised", out)
        self.assertIn("1 after True", out)
        self.assertIn("2 True", out)


if __name__ == "__main__":
    junit.main("process_lifecycle_test")
