"""brisk for Python: load a TorchScript file or a torch.export PT2 archive and run it
with brisk.

    import torch, brisk
    m = brisk.load("resnet18.pt")                # or a .pt2 archive; keyword per brisk::Options field
    y = m(torch.randn(1, 3, 224, 224))           # like the module it was saved from
    fut = m.run_async(x); y = fut.wait()         # launcher=callable for fork tasks
    m.stats(); m.inspect()                       # kernels, memory plan, runtime pool
    m.benchmark((x,), warmup=10, iters=100)      # timed in C++: p50/p90/mean us
    m.profile((x,), iters=20, trace_path="t.json")  # per node / per op, Chrome trace

Every error brisk reports is a brisk.Error (a RuntimeError) with brisk's one-line
message and the attributes model, node, op, message.

Set-up: `pip install dist/brisk-*.whl` (built by `tools/wheel/build.sh`; needs the torch
it was built against), or in the tree `bazel build //python:brisk` and
`export PYTHONPATH=$PWD/bazel-bin/python/site` (see python/README.md). The `brisk` command
(also `python -m brisk`) comes with the wheel.
"""
import os
import sys

# torch first: the extension links libtorch_python, whose Python types (torch.Tensor,
# the JIT's converters) must be initialised by torch itself.
import torch  # noqa: F401

_here = os.path.dirname(os.path.abspath(__file__))


def _check_torch():
    """brisk's C++ is compiled against one torch release (brisk/_build_info.py, written at
    build time): another one would fail later with undefined symbols or worse, so say it
    at import, in one line naming both."""
    try:
        from . import _build_info
    except ImportError:  # a source checkout without the build's file: the extension check below
        return
    found = str(getattr(torch, "__version__", "unknown"))
    if found.split("+", 1)[0] != _build_info.torch_version:  # "2.14.1+cu130" is 2.14.1
        where = getattr(torch, "__file__", None) or "an unknown location"
        raise ImportError(
            f"brisk {_build_info.version} was built against torch {_build_info.torch_version}, but the "
            f"imported torch is {found} (from {where}); install torch=={_build_info.torch_version} "
            f"or a brisk built against torch {found}")


_check_torch()
del _check_torch

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

try:
    from ._build_info import version as __version__
except ImportError:  # pragma: no cover - see _check_torch
    __version__ = "unknown"

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
