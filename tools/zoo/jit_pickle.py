"""torch.save that C++ torch::jit::pickle_load (libtorch 1.13) can read.

The JIT unpickler implements APPENDS/SETITEMS but not the single-item APPEND/SETITEM
opcodes that Python's pickler emits for one-element lists and dicts. This pickler
always writes the batched forms (MARK ... APPENDS / SETITEMS), which both unpicklers read.
"""
import pickle
import types

import torch


class _BatchedPickler(pickle._Pickler):  # pure-Python pickler: its batching is overridable
    def _batch_appends(self, items):
        items = list(items)
        if not items:
            return
        self.write(pickle.MARK)
        for x in items:
            self.save(x)
        self.write(pickle.APPENDS)

    def _batch_setitems(self, items):
        items = list(items)
        if not items:
            return
        self.write(pickle.MARK)
        for k, v in items:
            self.save(k)
            self.save(v)
        self.write(pickle.SETITEMS)


_module = types.ModuleType("jit_compatible_pickle")
_module.__dict__.update({k: getattr(pickle, k) for k in dir(pickle) if not k.startswith("__")})
_module.Pickler = _BatchedPickler


def save(obj, path):
    torch.save(obj, path, pickle_module=_module, pickle_protocol=2)
