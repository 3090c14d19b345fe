"""Peak memory per executor, each in a process of its own (the entry script with
--memory-child): load the model and inputs, reset the peak (`echo 5 >
/proc/self/clear_refs`), run, read VmHWM: the peak RSS increase over the loaded model.
Measured under the fixed allocator settings and under glibc's default malloc.

The /proc helpers are also pt2_vs_torchscript.py's, which imports them before its settings
re-exec: so this module imports torch (and the modules that do) only inside functions."""
import collections
import contextlib
import gc
import json
import os
import subprocess
import sys

from . import settings


def status_kib(field):
    """A /proc/self/status field (VmRSS, VmHWM) in KiB."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise RuntimeError(f"no {field} in /proc/self/status")


def reset_peak():
    """VmHWM := the current RSS (Linux >= 4.0: writing 5 to clear_refs)."""
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")


def memory_child(executor, cid, zoo, iters, workdir):
    """The child's side: one executor, one case; prints its measurement as one JSON line."""
    import torch

    from . import cases, executors
    torch.set_num_threads(1)
    case = cases.select_cases(cid, False)[0]
    args, kwargs = cases.load_inputs(zoo, case)
    e = executors.make_executor(executor, zoo, case, args, kwargs, workdir)
    if e.fn is None:
        print(json.dumps({"error": e.error}))
        return
    gc.collect()
    with contextlib.suppress(Exception):
        import ctypes
        ctypes.CDLL("libc.so.6").malloc_trim(0)  # start from the loaded model, not load's garbage
    base = status_kib("VmRSS")
    reset_peak()
    with e.grad_ctx():
        e.fn()
        first = status_kib("VmHWM") - base
        reset_peak()
        for _ in range(iters - 1):
            e.fn()
        steady = status_kib("VmHWM") - base
    print(json.dumps({"baseline_kib": base, "first_peak_kib": first, "steady_peak_kib": steady,
                      "peak_kib": max(first, steady), "end_kib": status_kib("VmRSS") - base}))


def _memory_env(malloc):
    env = dict(os.environ)
    env[settings.MALLOC_ENV] = malloc
    if malloc == settings.MALLOC_DEFAULT:
        env.pop("GLIBC_TUNABLES", None)
    return env


def measure_memory(case, zoo, opts, log, workdir):
    """{malloc setting: {executor: peak}}: one process per executor and setting. The
    work directory holds the ONNX files and AOTInductor packages the timing process
    made, and Inductor's cache: the processes measure running, not building."""
    from .cases import case_id
    out = collections.OrderedDict()
    for malloc in (settings.MALLOC_TUNED, settings.MALLOC_DEFAULT):
        per = out[malloc] = collections.OrderedDict()
        for name in opts.executor_list:
            cmd = [sys.executable, settings.ENTRY_SCRIPT, "--memory-child", name, "--models", case_id(case),
                   "--zoo", zoo, "--memory-iters", str(opts.memory_iters), "--workdir", workdir]
            try:
                p = subprocess.run(cmd, capture_output=True, text=True, timeout=900, env=_memory_env(malloc))
                line = (p.stdout.strip().splitlines() or [""])[-1]
                per[name] = json.loads(line) if p.returncode == 0 and line.startswith("{") else {
                    "error": f"exit {p.returncode}: {(p.stderr.strip().splitlines() or [''])[-1]}"}
            except Exception as ex:  # noqa: BLE001
                per[name] = {"error": f"{type(ex).__name__}: {ex}"}
        log(f"  memory ({malloc}): " + ", ".join(
            f"{n} +{m['peak_kib'] / 1024:.1f} MiB" if "peak_kib" in m else f"{n} {m.get('error')}"
            for n, m in per.items()))
    return out
