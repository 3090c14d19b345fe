"""The fixed thread and allocator settings every timing here runs under, and the re-exec
that applies them. Nothing heavy is imported: ensure_settings() must run before torch is
(GLIBC_TUNABLES is read by the dynamic loader at process start, OMP / MKL at their init)."""
import collections
import os
import sys

SETTINGS_ENV = collections.OrderedDict([
    ("OMP_NUM_THREADS", "1"),
    ("MKL_NUM_THREADS", "1"),
    # Without these, glibc returns large freed blocks to the OS and re-faults them on the
    # next run: conv nets then spend much of their time in page faults, differently in
    # every process.
    ("GLIBC_TUNABLES", "glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=68719476736"),
])

# The memory processes also run under glibc's default malloc (other runtimes' arenas
# behave differently from PyTorch's allocator under the fixed tunables): this variable
# set to MALLOC_DEFAULT makes a process keep GLIBC_TUNABLES unset.
MALLOC_ENV = "BRISK_COMPARE_MALLOC"
MALLOC_DEFAULT, MALLOC_TUNED = "glibc-default", "tunables"

# tools/bench: in the runfiles under `bazel run` (compare.py puts its own, unresolved
# directory first on sys.path, so the package is the runfiles' copy), else the source tree.
BENCH_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# What the memory processes run: the entry script, with --memory-child.
ENTRY_SCRIPT = os.path.join(BENCH_DIR, "compare.py")


def ensure_settings():
    """Re-executes this process (sys.argv[0]: compare.py, or another benchmark script
    that uses these settings) with SETTINGS_ENV when any of it is missing."""
    missing = {k: v for k, v in SETTINGS_ENV.items() if os.environ.get(k) != v}
    if os.environ.get(MALLOC_ENV) == MALLOC_DEFAULT:
        missing.pop("GLIBC_TUNABLES", None)
        if "GLIBC_TUNABLES" in os.environ:
            raise SystemExit(f"compare: {MALLOC_ENV}={MALLOC_DEFAULT} with GLIBC_TUNABLES set")
    if not missing:
        return
    if os.environ.get("BRISK_COMPARE_REEXEC"):  # guard against a loop if exec drops env
        raise SystemExit(f"compare: could not set {sorted(missing)} in the environment")
    os.environ.update(missing)
    os.environ["BRISK_COMPARE_REEXEC"] = "1"
    # GLIBC_TUNABLES is read by the dynamic loader at process start: only a new process
    # gets it.
    os.execv(sys.executable, [sys.executable, os.path.abspath(sys.argv[0])] + sys.argv[1:])


def inductor_mode():
    """max-autotune-no-cudagraphs (benchmarks GEMM/conv choices at compile time) unless
    BRISK_COMPARE_INDUCTOR_MODE says otherwise: --quick uses the default mode. An
    environment variable, so the memory processes inherit the parent's mode."""
    return os.environ.get("BRISK_COMPARE_INDUCTOR_MODE", "max-autotune-no-cudagraphs")
