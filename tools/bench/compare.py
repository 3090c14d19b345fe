#!/usr/bin/env python3
"""brisk vs PyTorch on the zoo models: one command, one table, one chart.

    bazel run //tools/bench:compare [-- --models resnet18,mlp:b64 --rounds 7 --quick]

For each model and batch size it times, in one process and on the same inputs:
  eager              the model's Python source (tools/zoo/models.py, weights from the .pt)
                     under torch.inference_mode(), parameters without requires_grad
  interpreter        the TorchScript interpreter on torch.jit.freeze(module)
  interpreter_ofi    the interpreter on torch.jit.optimize_for_inference(module)
  static_runtime     torch._C._jit_to_static_module(frozen._c)
  brisk              the brisk binding (import brisk), default options
Every executor is called the same way from Python; the JIT executors and brisk under
torch.no_grad(). After warm-up, each round times a block of ~--seconds per executor, in
an order that rotates every round; the table gives the median over all timed inferences
and, per executor, the median of its per-round ratios to the interpreter's latency.
Outputs are checked against the interpreter's (allclose) before timing.

Peak memory is measured per executor in a separate process (this script with
--memory-child): load the model and inputs, reset the peak (`echo 5 >
/proc/self/clear_refs`), run, read VmHWM: the peak RSS increase over the loaded model.

Threads and the allocator are fixed (one intra-op thread, MKL single-threaded, glibc
malloc without mmap and trimming): the script re-executes itself with that
environment when it is missing, and prints it.

Writes results/compare-<date>.{md,json,png} and results/latest.{md,json,png} in the
workspace (--out to change; --quick writes compare-<date>-quick.* and leaves latest.*).
"""
import argparse
import collections
import contextlib
import datetime
import gc
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time

# --- Fixed settings (before torch is imported) -----------------------------------------

SETTINGS_ENV = collections.OrderedDict([
    ("OMP_NUM_THREADS", "1"),
    ("MKL_NUM_THREADS", "1"),
    # Without these, glibc returns large freed blocks to the OS and re-faults them on the
    # next run: conv nets then spend much of their time in page faults, differently in
    # every process.
    ("GLIBC_TUNABLES", "glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=68719476736"),
])


def _ensure_settings():
    missing = {k: v for k, v in SETTINGS_ENV.items() if os.environ.get(k) != v}
    if not missing:
        return
    if os.environ.get("BRISK_COMPARE_REEXEC"):  # guard against a loop if exec drops env
        raise SystemExit(f"compare: could not set {sorted(missing)} in the environment")
    os.environ.update(missing)
    os.environ["BRISK_COMPARE_REEXEC"] = "1"
    # GLIBC_TUNABLES is read by the dynamic loader at process start: only a new process
    # gets it.
    os.execv(sys.executable, [sys.executable, os.path.abspath(__file__)] + sys.argv[1:])


if __name__ == "__main__":
    _ensure_settings()

import torch  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))

# --- What is compared ----------------------------------------------------------------

Case = collections.namedtuple("Case", ["model", "batch", "inputs"])

CASES = [
    Case("resnet18", 1, "inputs"),
    Case("resnet18", 8, "b8.inputs"),
    Case("mobilenet_v2", 1, "inputs"),
    Case("mobilenet_v2", 8, "b8.inputs"),
    Case("mlp", 1, "inputs"),
    Case("mlp", 64, "inputs2"),
    Case("deepandwide", 1, "inputs"),
    Case("deepandwide", 32, "inputs2"),
    Case("transformer", 1, "inputs"),
    Case("inception_fork", 1, "inputs"),
    Case("inception_nofork", 1, "inputs"),
    Case("chain_mul100", 1, "inputs"),
    Case("chain_add100", 1, "inputs"),
    Case("lstm_tagger", 1, "inputs"),
    Case("gru_encoder", 1, "inputs"),
]
QUICK_CASES = ["mlp:b1", "chain_add100:b1", "inception_fork:b1"]

EXECUTORS = ["eager", "interpreter", "interpreter_ofi", "static_runtime", "brisk"]
TIMED = EXECUTORS + ["brisk_cpp"]  # brisk_cpp: the brisk Module timed by its C++ loop
LABELS = {
    "brisk_cpp": "brisk, C++ loop",
    "eager": "eager",
    "interpreter": "interpreter (frozen)",
    "interpreter_ofi": "interpreter + optimize_for_inference",
    "static_runtime": "Static Runtime",
    "brisk": "brisk",
}
REFERENCE = "interpreter"
RTOL, ATOL = 1e-3, 1e-4  # oneDNN's blocked convolutions (ofi) round differently


def case_id(c):
    return f"{c.model}:b{c.batch}"


def select_cases(spec, quick):
    if not spec:
        spec = ",".join(QUICK_CASES) if quick else ""
    if not spec:
        return list(CASES)
    out = []
    for item in [s.strip() for s in spec.split(",") if s.strip()]:
        found = [c for c in CASES if item in (c.model, case_id(c))]
        if not found:
            names = ", ".join(sorted({c.model for c in CASES} | {case_id(c) for c in CASES}))
            raise SystemExit(f"compare: unknown model '{item}' (known: {names})")
        out.extend(c for c in found if c not in out)
    return out


# --- Loading -------------------------------------------------------------------------

def zoo_file(zoo, case, suffix):
    return os.path.join(zoo, f"{case.model}{suffix}")


def load_inputs(zoo, case):
    d = torch.load(zoo_file(zoo, case, f".{case.inputs}.pt"))
    return list(d["args"]), dict(d["kwargs"])


_models_module = None


def zoo_models(zoo):
    """tools/zoo/models.py (the models' Python source), or None."""
    global _models_module
    if _models_module is None:
        path = os.path.join(zoo, "models.py")
        if not os.path.exists(path):
            return None
        import importlib.util
        spec = importlib.util.spec_from_file_location("brisk_zoo_models", path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        _models_module = mod
    return _models_module


def load_eager(zoo, case):
    path = zoo_file(zoo, case, ".pt")
    models = zoo_models(zoo)
    source = "scripted module, not frozen (no Python source found)"
    module = None
    if models is not None and case.model in models.MODELS:
        module = models.MODELS[case.model]().eager
        try:
            # Same seed, same weights; loading them from the .pt makes sure.
            module.load_state_dict(torch.jit.load(path).state_dict())
            source = "tools/zoo/models.py, weights from the .pt"
        except Exception as e:  # noqa: BLE001 - reported, and the seed gives the same weights
            source = f"tools/zoo/models.py, own seed ({type(e).__name__} loading the .pt's weights)"
    if module is None:
        module = torch.jit.load(path)
    module.eval()
    for p in module.parameters():
        p.requires_grad_(False)
    gc.collect()
    return module, source


def sr_shim():
    """tools/bench/_sr_shim.so (built by //tools/bench:compare), or None."""
    try:
        import _sr_shim
        return _sr_shim
    except ImportError:
        return None


class Executor:
    def __init__(self, name):
        self.name = name
        self.fn = None          # one inference; output returned
        self.grad_ctx = torch.no_grad
        self.keep = []          # objects that must stay alive (frozen module behind SR)
        self.note = ""
        self.error = None
        self.load_s = 0.0
        self.samples = []       # µs, all rounds
        self.round_p50 = []
        self.max_abs_diff = None
        self.agrees = None
        self.block = None       # (seconds, min_iters) -> samples, instead of timing fn here


def cpp_executor(brisk_exec, args, kwargs):
    """The brisk Module timed by its own C++ loop (Module.benchmark, no Python call per
    inference), as one more executor in the rotation: the difference to the Python-timed
    brisk is the binding's call overhead."""
    e = Executor("brisk_cpp")
    m = brisk_exec.keep[0]
    e.fn = brisk_exec.fn
    e.agrees, e.max_abs_diff = brisk_exec.agrees, brisk_exec.max_abs_diff
    e.note = "brisk.Module.benchmark (GIL released, timed in C++)"
    inputs = {"args": args, "kwargs": kwargs}
    est = {"us": None}

    def block(seconds, min_iters):
        out = []
        start = time.perf_counter()
        while len(out) < min_iters or time.perf_counter() - start < seconds:
            # Chunks of ~1/4 block keep the block's length close to the others'.
            n = 1 if not est["us"] else max(1, int(seconds * 1e6 / 4 / est["us"]))
            out.extend(m.benchmark(inputs, warmup=0, iters=n)["samples_us"])
            est["us"] = statistics.median(out)
        return out

    e.block = block
    return e


def make_executor(name, zoo, case, args, kwargs):
    e = Executor(name)
    path = zoo_file(zoo, case, ".pt")
    t0 = time.perf_counter()
    try:
        if name == "eager":
            module, e.note = load_eager(zoo, case)
            e.grad_ctx = torch.inference_mode
            e.fn = lambda: module(*args, **kwargs)
        elif name == "interpreter":
            module = torch.jit.freeze(torch.jit.load(path).eval())
            e.fn = lambda: module(*args, **kwargs)
        elif name == "interpreter_ofi":
            module = torch.jit.optimize_for_inference(torch.jit.load(path).eval())
            e.fn = lambda: module(*args, **kwargs)
        elif name == "static_runtime":
            frozen = torch.jit.freeze(torch.jit.load(path).eval())
            sm = torch._C._jit_to_static_module(frozen._c)
            e.keep.append(frozen)
            shim = sr_shim()
            if shim is not None:
                e.fn = lambda: shim.call(sm, *args, **kwargs)
                e.note = "called through tools/bench/sr_shim.cc (GIL released while it runs)"
            elif "prim::fork" in str(frozen.graph):
                # Its own __call__ keeps the GIL and deadlocks here sooner or later.
                raise RuntimeError("tools/bench/_sr_shim.so not found: Static Runtime's own __call__ can "
                                   "deadlock on prim::fork (see sr_shim.cc)")
            else:
                e.fn = lambda: sm(*args, **kwargs)
                e.note = "StaticModule.__call__ (keeps the GIL)"
        elif name == "brisk":
            import brisk
            m = brisk.load(path)
            e.keep.append(m)
            e.fn = lambda: m(*args, **kwargs)
        else:
            raise ValueError(name)
    except Exception as ex:  # noqa: BLE001 - one executor failing must not stop the others
        e.error = f"{type(ex).__name__}: {str(ex).splitlines()[0] if str(ex) else ''}"
        e.fn = None
    e.load_s = time.perf_counter() - t0
    return e


# --- Comparing outputs ---------------------------------------------------------------

def compare_outputs(got, expected):
    """(agrees, max abs difference) of two outputs of one model; the difference is None
    when their structure (types, shapes, dtypes, keys) differs."""
    if isinstance(expected, torch.Tensor):
        if not isinstance(got, torch.Tensor) or got.shape != expected.shape or got.dtype != expected.dtype:
            return False, None
        if expected.numel() == 0:
            return True, 0.0
        diff = (got.double() - expected.double()).abs().max().item()
        return bool(torch.allclose(got, expected, rtol=RTOL, atol=ATOL, equal_nan=True)), diff
    if isinstance(expected, (tuple, list, dict)):
        if isinstance(expected, dict):
            if not isinstance(got, dict) or sorted(got) != sorted(expected):
                return False, None
            pairs = [(got[k], expected[k]) for k in expected]
        else:
            if not isinstance(got, (tuple, list)) or len(got) != len(expected):
                return False, None
            pairs = list(zip(got, expected))
        parts = [compare_outputs(g, x) for g, x in pairs]
        if any(d is None for _, d in parts):
            return False, None
        return all(ok for ok, _ in parts), max((d for _, d in parts), default=0.0)
    return got == expected, (0.0 if got == expected else None)


# --- Timing --------------------------------------------------------------------------

def time_block(e, seconds, min_iters):
    if e.block is not None:
        return e.block(seconds, min_iters)
    samples = []
    gc_was = gc.isenabled()
    gc.disable()  # a collection inside a block would be charged to whoever runs then
    try:
        with e.grad_ctx():
            start = time.perf_counter()
            while len(samples) < min_iters or time.perf_counter() - start < seconds:
                t0 = time.perf_counter_ns()
                e.fn()
                samples.append((time.perf_counter_ns() - t0) / 1e3)
    finally:
        if gc_was:
            gc.enable()
    return samples


def percentile(xs, q):
    xs = sorted(xs)
    if not xs:
        return float("nan")
    pos = q / 100 * (len(xs) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def run_case(case, zoo, opts, log):
    args, kwargs = load_inputs(zoo, case)
    execs = [make_executor(n, zoo, case, args, kwargs) for n in EXECUTORS]
    by_name = {e.name: e for e in execs}
    ref = by_name[REFERENCE]
    if ref.fn is None:
        raise SystemExit(f"compare: the interpreter cannot load {case.model}: {ref.error}")
    with torch.no_grad():
        expected = ref.fn()
    live = []
    for e in execs:
        if e.fn is None:
            log(f"  {e.name}: not available ({e.error})")
            continue
        try:
            with e.grad_ctx():
                got = e.fn()
        except Exception as ex:  # noqa: BLE001
            e.error = f"{type(ex).__name__}: {str(ex).splitlines()[0] if str(ex) else ''}"
            log(f"  {e.name}: fails on the inputs ({e.error})")
            continue
        e.agrees, e.max_abs_diff = compare_outputs(got, expected)
        live.append(e)
    if by_name["brisk"] in live:
        cpp = cpp_executor(by_name["brisk"], args, kwargs)
        execs.append(cpp)
        live.append(cpp)

    for e in live:  # warm-up: profiling executors optimise after a few runs
        time_block(e, opts.warmup_seconds, opts.warmup_iters)
    for r in range(opts.rounds):
        k = r % len(live)
        for e in live[k:] + live[:k]:
            block = time_block(e, opts.seconds, opts.min_iters)
            e.samples.extend(block)
            e.round_p50.append(statistics.median(block))

    result = collections.OrderedDict()
    result["model"] = case.model
    result["batch"] = case.batch
    result["inputs"] = f"{case.model}.{case.inputs}.pt"
    result["executors"] = collections.OrderedDict()
    for e in execs:
        d = collections.OrderedDict(label=LABELS[e.name], available=e in live, error=e.error,
                                    load_s=round(e.load_s, 3))
        if e.note:
            d["source"] = e.note
        if e in live:
            ratios = [p / q for p, q in zip(e.round_p50, ref.round_p50)] if ref in live else []
            d.update(
                iters=len(e.samples),
                p50_us=statistics.median(e.samples),
                p90_us=percentile(e.samples, 90),
                mean_us=statistics.fmean(e.samples),
                min_us=min(e.samples),
                round_p50_us=e.round_p50,
                ratio_rounds=ratios,
                ratio=statistics.median(ratios) if ratios else None,
                agrees=e.agrees,
                max_abs_diff=e.max_abs_diff,
            )
        result["executors"][e.name] = d

    if by_name["brisk"] in live:
        result["brisk_stats"] = by_name["brisk"].keep[0].stats()
    del execs, live, by_name, ref
    gc.collect()
    return result


# --- Memory (one process per executor) -----------------------------------------------

def _status_kib(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise RuntimeError(f"no {field} in /proc/self/status")


def _reset_peak():
    # Linux >= 4.0: writing 5 resets VmHWM to the current RSS.
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")


def memory_child(executor, cid, zoo, iters):
    torch.set_num_threads(1)
    case = select_cases(cid, False)[0]
    args, kwargs = load_inputs(zoo, case)
    e = make_executor(executor, zoo, case, args, kwargs)
    if e.fn is None:
        print(json.dumps({"error": e.error}))
        return
    gc.collect()
    with contextlib.suppress(Exception):
        import ctypes
        ctypes.CDLL("libc.so.6").malloc_trim(0)  # start from the loaded model, not load's garbage
    base = _status_kib("VmRSS")
    _reset_peak()
    with e.grad_ctx():
        e.fn()
        first = _status_kib("VmHWM") - base
        _reset_peak()
        for _ in range(iters - 1):
            e.fn()
        steady = _status_kib("VmHWM") - base
    print(json.dumps({"baseline_kib": base, "first_peak_kib": first, "steady_peak_kib": steady,
                      "peak_kib": max(first, steady), "end_kib": _status_kib("VmRSS") - base}))


def measure_memory(case, zoo, opts, log):
    out = collections.OrderedDict()
    for name in EXECUTORS:
        cmd = [sys.executable, os.path.abspath(__file__), "--memory-child", name, "--models", case_id(case),
               "--zoo", zoo, "--memory-iters", str(opts.memory_iters)]
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
            line = (p.stdout.strip().splitlines() or [""])[-1]
            out[name] = json.loads(line) if p.returncode == 0 and line.startswith("{") else {
                "error": f"exit {p.returncode}: {(p.stderr.strip().splitlines() or [''])[-1]}"}
        except Exception as ex:  # noqa: BLE001
            out[name] = {"error": f"{type(ex).__name__}: {ex}"}
        if "peak_kib" in out[name]:
            log(f"  memory {name}: +{out[name]['peak_kib'] / 1024:.1f} MiB peak")
        else:
            log(f"  memory {name}: {out[name].get('error')}")
    return out


# --- Machine and settings ------------------------------------------------------------

def machine_info():
    info = collections.OrderedDict()
    model, flags = "unknown", set()
    with contextlib.suppress(OSError), open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name") and model == "unknown":
                model = line.split(":", 1)[1].strip()
            elif line.startswith("flags") and not flags:
                flags = set(line.split(":", 1)[1].split())
    info["cpu"] = model
    info["cpu_flags"] = [x for x in ("avx2", "fma", "avx512f", "avx512_vnni", "avx512_bf16", "amx_tile") if x in flags]
    info["nproc"] = len(os.sched_getaffinity(0))
    info["cpu_count"] = os.cpu_count()
    with contextlib.suppress(OSError), open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemTotal:"):
                info["memory_gib"] = round(int(line.split()[1]) / 1024 / 1024, 1)
    info["kernel"] = platform.release()
    info["os"] = _os_release()
    info["python"] = platform.python_version()
    info["torch"] = torch.__version__
    info["kernels"] = _kernel_libraries()
    return info


def _kernel_libraries():
    """The libraries behind ATen's CPU kernels in this torch build, and its CPU dispatch."""
    import re
    out = collections.OrderedDict()
    config = torch.__config__.show()
    for label, pattern in (("MKL", r"Math Kernel Library Version ([\w.]+)"), ("oneDNN", r"MKL-DNN v([\w.]+)")):
        found = re.search(pattern, config)
        if found:
            out[label] = found.group(1)
    with contextlib.suppress(Exception):
        out["ATen CPU capability"] = torch.backends.cpu.get_cpu_capability()
    return out


def _os_release():
    with contextlib.suppress(OSError), open("/etc/os-release") as f:
        for line in f:
            if line.startswith("PRETTY_NAME="):
                return line.split("=", 1)[1].strip().strip('"')
    return platform.platform()


def settings_info():
    s = collections.OrderedDict((k, os.environ.get(k, "unset")) for k in SETTINGS_ENV)
    s["torch.get_num_threads"] = torch.get_num_threads()
    s["torch.get_num_interop_threads"] = torch.get_num_interop_threads()
    return s


def _loadavg():
    with contextlib.suppress(OSError), open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])
    return "unknown"


def git_describe(workspace):
    try:
        rev = subprocess.run(["git", "-C", workspace, "rev-parse", "--short", "HEAD"], capture_output=True,
                             text=True, timeout=10).stdout.strip()
        return rev or "unknown"
    except Exception:  # noqa: BLE001
        return "unknown"


# --- Reports -------------------------------------------------------------------------

def _fmt_us(x):
    return "—" if x is None else (f"{x:.0f}" if x >= 100 else f"{x:.1f}")


def markdown(report):
    m, s, o = report["machine"], report["settings"], report["options"]
    lines = [f"# brisk vs PyTorch on CPU — {report['date']}{' (quick)' if o['quick'] else ''}", ""]
    lines.append(f"Command: `bazel run //tools/bench:compare{' -- ' + ' '.join(o['argv']) if o['argv'] else ''}` "
                 f"(brisk at git {report['git']}).")
    lines.append("")
    lines.append(f"Machine: {m['cpu']} ({', '.join(m['cpu_flags'])}), {m['nproc']} CPUs (nproc), "
                 f"{m.get('memory_gib', '?')} GiB RAM; {m['os']}, Linux {m['kernel']}; "
                 f"PyTorch {m['torch']} from PyPI ({', '.join(f'{k} {v}' for k, v in m.get('kernels', {}).items())}), "
                 f"Python {m['python']}.")
    lines.append("")
    lines.append("Settings: " + ", ".join(f"{k}={v}" for k, v in s.items()) + ".")
    lines.append("")
    lines.append(f"Load average (1/5/15 min) at start: {report.get('loadavg_start', '?')}, "
                 f"at end: {report.get('loadavg_end', '?')}.")
    lines.append("")
    lines.append(f"Method: {o['rounds']} rounds; each round times a ~{o['seconds'] * 1e3:.0f} ms block per executor "
                 "(at least "
                 f"{o['min_iters']} inferences) in an order that rotates every round, after warm-up; all executors "
                 "are called from Python in one process (eager under `torch.inference_mode()`, the others under "
                 "`torch.no_grad()`). Outputs are checked against the interpreter's "
                 f"(allclose rtol={RTOL:g}, atol={ATOL:g}) before timing. Random weights.")
    lines.append("")
    lines.append("## Latency")
    lines.append("")
    lines.append("Median µs per inference; in parentheses, the median of per-round ratios to the interpreter's "
                 "latency (below 1 = faster than the interpreter). *brisk, C++ loop*: the same brisk Module timed by "
                 "`Module.benchmark` in the same rotation (no Python call per inference).")
    lines.append("")
    head = ["model", "batch"] + [LABELS[n] for n in TIMED] + ["outputs agree"]
    lines.append("| " + " | ".join(head) + " |")
    lines.append("|" + "---|" * len(head))
    unavailable = []
    for r in report["results"]:
        row = [r["model"], str(r["batch"])]
        bad = []
        for n in TIMED:
            e = r["executors"].get(n, {"available": False})
            if not e["available"]:
                row.append("n/a")
                bad.append(f"{n}: n/a")
                if e.get("error"):
                    unavailable.append(f"- {r['model']} b{r['batch']}, {LABELS[n]}: {e['error']}")
                continue
            ratio = e.get("ratio")
            row.append(f"{_fmt_us(e['p50_us'])} ({ratio:.2f})" if ratio is not None else _fmt_us(e["p50_us"]))
            if not e["agrees"] and n in EXECUTORS:
                bad.append(f"{n} differs (max {e['max_abs_diff']})" if e["max_abs_diff"] is not None
                           else f"{n} differs (structure)")
        row.append("yes" if not bad else "; ".join(bad))
        lines.append("| " + " | ".join(row) + " |")
    if unavailable:
        lines += ["", "n/a: the executor could not run the case. Its error:", ""] + unavailable
    if any("memory" in r for r in report["results"]):
        lines += ["", "## Peak memory", ""]
        lines.append(f"Peak RSS increase over the loaded model, MiB: one process per executor loads the model and "
                     f"inputs, resets the peak (`echo 5 > /proc/self/clear_refs`), runs {o['memory_iters']} "
                     "inferences and reads VmHWM.")
        lines.append("")
        head = ["model", "batch"] + [LABELS[n] for n in EXECUTORS]
        lines.append("| " + " | ".join(head) + " |")
        lines.append("|" + "---|" * len(head))
        for r in report["results"]:
            if "memory" not in r:
                continue
            row = [r["model"], str(r["batch"])]
            for n in EXECUTORS:
                mm = r["memory"].get(n, {})
                row.append(f"+{mm['peak_kib'] / 1024:.1f}" if "peak_kib" in mm else "n/a")
            lines.append("| " + " | ".join(row) + " |")
    if report.get("chart"):
        lines += ["", f"![latency and memory per executor]({report['chart']})"]
    lines.append("")
    return "\n".join(lines)


def chart(report, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    results = report["results"]
    labels = [f"{r['model']}\nb{r['batch']}" for r in results]
    shown = [n for n in TIMED if n != REFERENCE]
    has_mem = any("memory" in r for r in results)
    fig, axes = plt.subplots(2 if has_mem else 1, 1, figsize=(max(8, 1.15 * len(results) + 2), 9 if has_mem else 4.8),
                             squeeze=False)
    colors = {"eager": "#999999", "interpreter": "#4c72b0", "interpreter_ofi": "#55a868",
              "static_runtime": "#c44e52", "brisk": "#dd8452", "brisk_cpp": "#f0b27a"}
    width = 0.8 / len(shown)
    ax = axes[0][0]
    for i, n in enumerate(shown):
        xs, ys = [], []
        for j, r in enumerate(results):
            e = r["executors"].get(n, {"available": False})
            if e["available"] and e.get("ratio") is not None:
                xs.append(j - 0.4 + width * (i + 0.5))
                ys.append(e["ratio"])
        ax.bar(xs, ys, width, label=LABELS[n], color=colors[n])
    ax.axhline(1.0, color=colors[REFERENCE], linewidth=1.2, label=LABELS[REFERENCE] + " = 1")
    ax.set_xticks(range(len(results)))
    ax.set_xticklabels(labels, fontsize=8)
    ax.set_ylabel("latency / interpreter latency\n(lower is faster)")
    ax.set_title(f"Latency relative to the TorchScript interpreter — {report['machine']['cpu']}, 1 thread, "
                 f"{report['date']}", fontsize=10)
    ax.legend(fontsize=8, ncol=3)
    ax.grid(axis="y", alpha=0.3)
    if has_mem:
        ax = axes[1][0]
        width = 0.8 / len(EXECUTORS)
        for i, n in enumerate(EXECUTORS):
            xs, ys = [], []
            for j, r in enumerate(results):
                mm = r.get("memory", {}).get(n, {})
                if "peak_kib" in mm:
                    xs.append(j - 0.4 + width * (i + 0.5))
                    ys.append(max(mm["peak_kib"] / 1024, 0.05))  # log axis: show ~0 as a stub
            ax.bar(xs, ys, width, label=LABELS[n], color=colors[n])
        ax.set_yscale("log")
        ax.set_xticks(range(len(results)))
        ax.set_xticklabels(labels, fontsize=8)
        ax.set_ylabel("peak RSS increase over\nthe loaded model (MiB, log)")
        ax.set_title("Peak memory per executor (separate process each)", fontsize=10)
        ax.legend(fontsize=8, ncol=3)
        ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


# --- Main ----------------------------------------------------------------------------

def default_zoo():
    # Under `bazel run` this file sits in the runfiles next to tools/zoo's generated files.
    for d in (os.path.join(HERE, "..", "zoo"), os.path.join(HERE, "..", "..", "bazel-bin", "tools", "zoo")):
        if os.path.exists(os.path.join(d, "mlp.pt")):
            return os.path.abspath(d)
    return os.path.abspath(os.path.join(HERE, "..", "zoo"))


def workspace_dir():
    return os.environ.get("BUILD_WORKSPACE_DIRECTORY") or os.getcwd()


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--models", default="", help="comma-separated models or model:bN cases (default: all)")
    p.add_argument("--rounds", type=int, default=None, help="timing rounds (default 7; --quick: 1)")
    p.add_argument("--seconds", type=float, default=None, help="time per executor per round (default 0.2)")
    p.add_argument("--quick", action="store_true", help="CI smoke test: 1 short round, tiny models")
    p.add_argument("--no-memory", action="store_true", help="skip the per-executor memory processes")
    p.add_argument("--memory-iters", type=int, default=None, help="inferences per memory process (default 5)")
    p.add_argument("--zoo", default=None, help="directory with the zoo's .pt files (default: from runfiles)")
    p.add_argument("--out", default=None, help="output directory (default: <workspace>/results)")
    p.add_argument("--memory-child", default=None, help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    a.rounds = a.rounds if a.rounds is not None else (1 if a.quick else 7)
    a.seconds = a.seconds if a.seconds is not None else (0.03 if a.quick else 0.2)
    a.memory_iters = a.memory_iters if a.memory_iters is not None else (2 if a.quick else 5)
    a.min_iters = 2 if a.quick else 3
    a.warmup_seconds = 0.02 if a.quick else 0.3
    a.warmup_iters = 2 if a.quick else 5
    if a.rounds < 1 or a.seconds <= 0 or a.memory_iters < 1:
        p.error("--rounds, --seconds and --memory-iters must be positive")
    return a


def _shown_argv(argv):
    """The user's flags, without the --zoo the bazel-run wrapper adds."""
    out, skip = [], False
    for a in argv:
        if skip:
            skip = False
        elif a == "--zoo":
            skip = True
        elif not a.startswith("--zoo="):
            out.append(a)
    return out


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    opts = parse_args(argv)
    zoo = os.path.abspath(opts.zoo) if opts.zoo else default_zoo()
    if opts.memory_child:
        memory_child(opts.memory_child, opts.models, zoo, opts.memory_iters)
        return 0
    torch.set_num_threads(1)
    cases = select_cases(opts.models, opts.quick)

    def log(msg):
        print(msg, flush=True)

    report = collections.OrderedDict()
    report["date"] = datetime.date.today().isoformat()
    report["git"] = git_describe(workspace_dir())
    report["machine"] = machine_info()
    report["settings"] = settings_info()
    report["options"] = collections.OrderedDict(
        argv=_shown_argv(argv), zoo=zoo, quick=opts.quick, rounds=opts.rounds, seconds=opts.seconds, min_iters=opts.min_iters,
        memory_iters=opts.memory_iters, rtol=RTOL, atol=ATOL)
    log("machine: " + ", ".join(f"{k}={v}" for k, v in report["machine"].items()))
    log("settings: " + " ".join(f"{k}={v}" for k, v in report["settings"].items()))
    log(f"zoo: {zoo}")

    report["loadavg_start"] = _loadavg()
    report["results"] = []
    for case in cases:
        t0 = time.perf_counter()
        log(f"{case_id(case)}:")
        r = run_case(case, zoo, opts, log)
        for n in TIMED:
            e = r["executors"].get(n, {"available": False})
            if e["available"]:
                ratio = "—" if e["ratio"] is None else f"{e['ratio']:.3f}"
                log(f"  {n:16s} p50 {_fmt_us(e['p50_us']):>8s} us  x{ratio} vs interpreter  "
                    f"agrees={e['agrees']} (max diff {e['max_abs_diff']:.3g})" if e["max_abs_diff"] is not None
                    else f"  {n:16s} p50 {_fmt_us(e['p50_us']):>8s} us  x{ratio}  output structure differs")
        if not opts.no_memory:
            r["memory"] = measure_memory(case, zoo, opts, log)
        log(f"  ({time.perf_counter() - t0:.1f} s)")
        report["results"].append(r)

    # Other processes on the machine share its CPUs: the load is part of the record.
    report["loadavg_end"] = _loadavg()
    out = os.path.abspath(opts.out) if opts.out else os.path.join(workspace_dir(), "results")
    os.makedirs(out, exist_ok=True)
    stem = f"compare-{report['date']}{'-quick' if opts.quick else ''}"
    png = os.path.join(out, stem + ".png")
    try:
        chart(report, png)
        report["chart"] = os.path.basename(png)
    except Exception as ex:  # noqa: BLE001 - the table is still worth writing
        log(f"chart: not written ({type(ex).__name__}: {ex})")
    with open(os.path.join(out, stem + ".json"), "w") as f:
        json.dump(report, f, indent=1)
        f.write("\n")
    md = markdown(report)
    with open(os.path.join(out, stem + ".md"), "w") as f:
        f.write(md)
    if not opts.quick:
        for ext in (".md", ".json", ".png"):
            if os.path.exists(os.path.join(out, stem + ext)):
                shutil.copyfile(os.path.join(out, stem + ext), os.path.join(out, "latest" + ext))
        # latest.md shows the chart under its own name.
        with open(os.path.join(out, "latest.md"), "w") as f:
            f.write(md.replace(f"]({stem}.png)", "](latest.png)"))
    log("")
    log(md)
    log(f"written: {os.path.join(out, stem)}.{{md,json,png}}" + ("" if opts.quick else " and latest.*"))
    return 0


if __name__ == "__main__":
    rc = main()
    # Leave without Python's and libtorch's teardown: after the TorchScript interpreter
    # has run prim::fork tasks, torch 2.14 sometimes aborts while destroying its inter-op
    # thread pool at exit ("terminate called without an active exception"; 4 exits in
    # 20 of a memory child for inception_fork with the CPUs busy). Everything this
    # script reports is written and flushed by then.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(rc)
