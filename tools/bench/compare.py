#!/usr/bin/env python3
"""brisk vs PyTorch and other CPU runtimes on the zoo models: `bazel run //tools/bench:compare
[-- --help]`. The entry script only; the comparison is the package beside it
(tools/bench/comparison: cli.py documents the flags and the method)."""
import os
import sys

# This file's own directory, unresolved, first: under `bazel run` it is the runfiles' copy of
# tools/bench (Python would otherwise put the symlink's target, the source tree, first), so
# the package, tools/outputs_close.py and _sr_shim.so all come from the runfiles.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from comparison import settings  # noqa: E402  (imports nothing heavy)

if __name__ == "__main__":
    # Threads and the allocator before torch is imported: re-executes when they are missing.
    settings.ensure_settings()
    from comparison import cli
    rc = cli.main()
    # Leave without Python's and libtorch's teardown: after the TorchScript interpreter
    # has run prim::fork tasks, torch 2.14 sometimes aborts while destroying its inter-op
    # thread pool at exit ("terminate called without an active exception"; 4 exits in
    # 20 of a memory child for inception_fork with the CPUs busy). Everything this
    # script reports is written and flushed by then.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(rc)
