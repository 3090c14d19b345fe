"""torch.save for files that C++ torch::jit::pickle_load reads (core/frontend/model_inputs.cc).

What that reader (libtorch 2.14) requires: torch.save's zipfile format (not
_use_new_zipfile_serialization=False) and pickle protocol 2 ("Only Pickle protocol 2 is
supported"); values limited to what the JIT unpickler builds (tensors, ints, floats, bools,
strings, None, and lists / tuples / plain dicts of them; no other Python classes, not even
collections.OrderedDict). save() pins protocol 2 rather than relying on torch.save's
default.

The pickler also always writes the batched opcodes (MARK ... APPENDS / SETITEMS) instead
of the single-item APPEND / SETITEM that Python's pickler emits for one-element lists and
dicts. An older libtorch JIT unpickler did not accept the single-item forms; libtorch 2.14's
pickle_load does (checked: plain torch.save output of every zoo and fork inputs file
loads to the same values), so this is kept only so the files keep their exact bytes.
Both Python's and the JIT unpickler read the batched forms.
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
