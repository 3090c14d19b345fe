"""Typing stubs of brisk's C++ extension (python/brisk_module.cc and python/py_*.cc),
written by hand: keep them in step with the pybind11 definitions. Users import these
names from `brisk` (brisk/__init__.pyi)."""
import os
from typing import Any, Callable, Mapping, Optional, Sequence, Union

# What brisk.load's keywords accept (python/py_options.cc): bool, int, str, a list of str,
# or for plugin_options a {"plugin.name": bool | int | str} dict. The names are brisk's
# option table's (README "Options", brisk.load.__doc__).
OptionValue = Union[bool, int, str, Sequence[str], Mapping[str, Union[bool, int, str]]]

# A run's inputs for benchmark/profile: a tuple/list of positional arguments, a
# {"args": [...], "kwargs": {...}} dict (the zoo's <model>.inputs.pt) or a single value.
Inputs = Any

class Error(RuntimeError):
    """Every error brisk reports: brisk's one-line message, and where it happened."""

    message: str
    model: str
    node: str
    op: str

class Future:
    """The result of Module.run_async: wait() or value()."""

    def wait(self) -> Any:
        """Blocks (GIL released) until the run finished; returns its output or raises brisk.Error."""
    def value(self) -> Any:
        """The output of a finished run (raises brisk.Error for a failed or unfinished one)."""
    def done(self) -> bool: ...

class Module:
    """A loaded brisk model (TorchScript file or torch.export PT2 archive); call it like the
    module it was saved from. Made by brisk.load only."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any: ...
    def run(self, *args: Any, **kwargs: Any) -> Any:
        """Same as calling the module."""
    def run_async(self, *args: Any, launcher: Optional[Callable[[Callable[[], None]], None]] = ...,
                  **kwargs: Any) -> Future:
        """launcher receives each prim::fork task (a no-argument callable) and must run it once,
        on any thread; None: brisk's inter-op arena."""
    def stats(self) -> dict[str, Any]:
        """The CLI's stats line as a dict; kernel kinds under "kernels"."""
    def passes(self) -> list[dict[str, Any]]:
        """The load-time graph passes in order: name, provider, changed, skipped, us."""
    def weights(self) -> dict[str, tuple[list[int], str]]:
        """{name: (shape, dtype)} of the named weights swap_weights may replace."""
    def swap_weights(self, weights: Union[Mapping[str, Any], str, os.PathLike[str]]) -> None:
        """Replaces named weights (a dict name -> Tensor, or every weight of another file of
        the same model) for every later run."""
    @property
    def weights_version(self) -> int: ...
    def inspect(self) -> list[dict[str, Any]]:
        """Per node: index, node, op, kind, outputs, provider, detail, depth."""
    def benchmark(self, inputs: Inputs, warmup: int = 10, iters: int = 100) -> dict[str, Any]:
        """Timed in C++ without the GIL: warmup, iters, p50_us, p90_us, mean_us, min_us, max_us,
        samples_us."""
    def profile(self, inputs: Inputs, iters: int = 20, trace_path: Optional[str] = None) -> dict[str, Any]:
        """Per-node and per-op times (nodes, ops), kernel time per run, overhead per node, and a
        Chrome trace at trace_path."""
    @property
    def name(self) -> str: ...
    @property
    def signature(self) -> str: ...

def options_doc(plugin_dirs: Sequence[str]) -> str:
    """brisk.load's keyword options, one line each (from brisk's option table)."""

def load(path: str, options: Mapping[str, OptionValue], extra_plugin_dirs: Sequence[str]) -> Module: ...
