"""brisk for Python: load a TorchScript file and run it with brisk.

    import torch, brisk
    m = brisk.load("resnet18.pt")                # keyword per brisk::Options field
    y = m(torch.randn(1, 3, 224, 224))           # like the TorchScript module
    fut = m.run_async(x); y = fut.wait()         # launcher=callable for fork tasks
    m.stats(); m.inspect()                       # kernels, memory plan, runtime pool
    m.benchmark((x,), warmup=10, iters=100)      # timed in C++: p50/p90/mean us
    m.profile((x,), iters=20, trace_path="t.json")  # per node / per op, Chrome trace

Every error brisk reports is a brisk.Error (a RuntimeError) with brisk's one-line
message and the attributes model, node, op, message.

Set-up: `bazel build //python:brisk` and `export PYTHONPATH=$PWD/bazel-bin/python/site`
(see python/README.md).
"""
import os
import sys

# torch first: the extension links libtorch_python, whose Python types (torch.Tensor,
# the JIT's converters) must be initialised by torch itself.
import torch  # noqa: F401

_here = os.path.dirname(os.path.abspath(__file__))

# Plugins (libbrisk_ops_cpu.so) are dlopen-ed by brisk and resolve brisk's registries
# against the loaded extension, so its symbols must be global (the CLI gets the same
# from -rdynamic). Python loads extensions RTLD_LOCAL by default.
_flags = sys.getdlopenflags()
sys.setdlopenflags(_flags | os.RTLD_GLOBAL)
try:
    from . import _brisk
except ImportError as e:  # pragma: no cover - a set-up problem, not a brisk error
    raise ImportError(
        f"brisk: cannot load the C++ extension next to {__file__} ({e}). Build it with "
        "`bazel build //python:brisk` and put bazel-bin/python/site on PYTHONPATH.") from e
finally:
    sys.setdlopenflags(_flags)

Error = _brisk.Error
Module = _brisk.Module
Future = _brisk.Future

__all__ = ["Error", "Future", "Module", "WHOLE_PROGRAM", "load", "lower"]

WHOLE_PROGRAM = "whole_program"  # brisk.lower's record for the program compiled whole


def load(path, **options):
    """Loads a TorchScript file (torch.jit.save output) or a PT2 archive (torch.export's
    package_pt2, or NativeRT's AOTInductor-delegated archive) into a brisk Module.

    Keyword options are brisk::Options fields (README "Options"); raises brisk.Error.
    """
    return _brisk.load(os.fspath(path), options, [_here])


def lower(ep, path, partitioner=None, **kwargs):
    """Compiles regions of an ExportedProgram with AOTInductor and writes one PT2 archive
    (NativeRT's format) in which each is a call into its compiled files and every other
    node stays on brisk's kernels; brisk.load(path) runs it. `partitioner(gm)` tags nodes
    of ep.module() with node.meta["brisk_region"] = key; None measures candidates (runs of
    pointwise ops, recurrent layers) and keeps those AOTInductor runs faster, then writes
    the fastest of brisk alone, the kept regions and (whole_program=True) the program
    compiled whole. Returns one record per region (key, nodes, ops, brisk_us, aoti_us,
    kept, note), the last one keyed WHOLE_PROGRAM when it was tried. Keyword options:
    example_inputs=(args, kwargs), model_name, backend_id, keep_ratio, iters, whole_program. See
    brisk/_lower.py and delegates/aoti/README.md."""
    from brisk import _lower  # torch.nativert and Inductor load only when asked for
    return _lower.lower(ep, path, partitioner, **kwargs)


# The option list comes from brisk's option table (the same one the CLI flags and the
# README are checked against), so it cannot fall behind. (python -OO strips docstrings.)
if load.__doc__:
    load.__doc__ += "\n    Options (name (type, default[, range]): meaning):\n" + "\n".join(
        "    " + line for line in _brisk.options_doc([_here]).splitlines()) + "\n"
