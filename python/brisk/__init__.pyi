"""Typing stubs of the `brisk` package (brisk/__init__.py; the extension's types are in
brisk/_brisk.pyi). Written by hand: keep them in step with __init__.py and
python/brisk_module.cc."""
import os
from typing import Any, Callable, Optional, Sequence, Tuple, Union

import torch.export

from brisk._brisk import Error as Error
from brisk._brisk import Future as Future
from brisk._brisk import Module as Module
from brisk._brisk import OptionValue
from brisk._lower import Region

__version__: str
__all__: list[str]

WHOLE_PROGRAM: str

def load(path: Union[str, os.PathLike[str]], **options: OptionValue) -> Module:
    """Loads a TorchScript file or a PT2 archive into a brisk Module; keyword options are
    brisk::Options fields (README "Options"); raises brisk.Error."""

def lower(
    ep: torch.export.ExportedProgram,
    path: Union[str, os.PathLike[str]],
    partitioner: Optional[Callable[[torch.fx.GraphModule], None]] = None,
    *,
    example_inputs: Optional[Tuple[Sequence[Any], dict[str, Any]]] = ...,
    model_name: str = ...,
    backend_id: str = ...,
    keep_ratio: float = ...,
    iters: int = ...,
    whole_program: bool = ...,
) -> list[Region]:
    """Compiles regions of an ExportedProgram with AOTInductor into one PT2 archive at path;
    returns one Region record (key, nodes, ops, brisk_us, aoti_us, kept, note) per region."""
