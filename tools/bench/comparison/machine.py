"""What the report records about where it ran: the CPU and its flags, memory, OS, the
torch build's kernel libraries, the thread settings in force, the other runtimes'
versions (or why one is missing), the load average and brisk's git revision. Numbers
from different machines or loads are not comparable; the record says which they are."""
import collections
import contextlib
import os
import platform
import re
import subprocess

import torch

from .settings import SETTINGS_ENV


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


def runtime_versions():
    """Versions of the other runtimes ("not installed" when an import fails: their
    executors then report the ImportError per case)."""
    out = collections.OrderedDict(torch=torch.__version__)
    for name in ("onnxruntime", "openvino", "onnx", "onnxscript"):
        try:
            mod = __import__(name)
            out[name] = getattr(mod, "__version__", "?")
        except Exception as ex:  # noqa: BLE001
            out[name] = f"not installed ({type(ex).__name__})"
    out["nativert"] = _nativert_status()
    return out


def _nativert_status():
    """NativeRT's C++ runner is compiled into some torch builds only; the PyPI wheel
    registers a stub class in its place, which cannot be constructed."""
    runner = getattr(getattr(torch._C, "_nativert", None), "PyModelRunner", None)
    if runner is None:
        return "not installed (torch._C._nativert.PyModelRunner does not exist in this torch)"
    if not hasattr(runner, "run"):
        return ("not installed (this torch build registers torch._C._nativert.PyModelRunner as a stub "
                "without a constructor or run(): NativeRT's C++ runtime is not compiled in)")
    return torch.__version__


def loadavg():
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
