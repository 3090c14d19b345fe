#!/usr/bin/env python3
"""Write the brisk model zoo: <name>.pt, <name>.inputs.pt, <name>.inputs2.pt, <name>.expected.pt
(and <name>.b<N>.inputs.pt for the models in models.BATCH_INPUTS).

Usage: /opt/brisk/venv/bin/python3 export.py --out DIR [--only NAME ...] [--verbose]

Every model is saved with torch.jit.save, reloaded with torch.jit.load and checked
against the eager module on both input sets (tools/outputs_close.py: rtol=1e-5, atol=1e-6
plus 1e-5 of the reference's largest |value|); the reloaded
module must also survive torch.jit.freeze and run. See README.md for the file format.
"""

import argparse
import os
import sys
import time

# Python's hash randomization changes the order in which TorchScript prints module
# __constants__ (a set), so the saved archives differ run to run without a fixed seed.
if os.environ.get("PYTHONHASHSEED") != "0":
    os.environ["PYTHONHASHSEED"] = "0"
    os.execv(sys.executable, [sys.executable] + sys.argv)

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

import warnings  # noqa: E402

# TorchScript is deprecated (torch >= 2.11): torch.jit.script / save / load / freeze /
# fork / wait each warn "`torch.jit.<fn>` is deprecated. Please switch to `torch.compile`
# or `torch.export`." (or "Please use `torch.compile` instead.") as a FutureWarning from
# torch.jit's own modules. TorchScript is exactly what brisk runs, so silence those and
# nothing else.
warnings.filterwarnings("ignore", message=r"`torch\.jit\.\w+` is deprecated\. Please ",
                        category=FutureWarning, module=r"torch\.jit\.")

import torch  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import jit_pickle  # noqa: E402

# Load models.py through a cwd-relative path when possible: TorchScript stores the
# source file name in the archives' debug info, and a relative name ("tools/zoo/models.py"
# from the workspace root or Bazel's execroot) keeps the output independent of the
# sandbox directory.
sys.dont_write_bytecode = True


def import_relative(module_name):
    """Imports tools/zoo/<module_name>.py under its cwd-relative path (see above); also
    used by export_pt2.py, whose PT2 programs record source paths in their stack traces."""
    import types
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), module_name + ".py")
    rel = os.path.relpath(path)
    name = path if rel.startswith("..") else rel
    with open(path) as f:
        code = compile(f.read(), name, "exec")
    mod = types.ModuleType(module_name)
    mod.__file__ = name
    sys.modules[module_name] = mod
    exec(code, mod.__dict__)
    return mod


models = import_relative("models")

# tools/outputs_close.py (the one output comparator), one directory up: beside tools/zoo in
# the genrules' execroot as in the source tree. Appended, so nothing in tools/ (cli/, bench/)
# shadows a module found elsewhere.
sys.path.append(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import outputs_close  # noqa: E402

RTOL = 1e-5
ATOL = 1e-6
# The reloaded / frozen module against the eager one (outputs_close.check(got, ref, CLOSE)).
# Freezing folds batch norm into the conv weights, which rounds differently with each CPU's
# oneDNN kernels: the absolute tolerance also scales with the reference's largest |value|.
# rtol applies to the module under test's values (torch.allclose(ref, got), as always
# here); lists and tuples alike, dict keys in any order.
CLOSE = outputs_close.Rules(rtol=RTOL, atol=ATOL, atol_scale=RTOL, rtol_of="got", sequences="any")


def _run(m, inputs):
    args, kwargs = inputs
    with torch.no_grad():
        return m(*args, **kwargs)


def _node_kinds(block, kinds=None):
    """Node kinds in a graph or block, including those in nested blocks (prim::If, Loop)."""
    kinds = set() if kinds is None else kinds
    for n in block.nodes():
        kinds.add(n.kind())
        for b in n.blocks():
            _node_kinds(b, kinds)
    return kinds


def export_one(name, out_dir, verbose=False):
    t0 = time.time()
    z = models.MODELS[name]()
    path = os.path.join(out_dir, name + ".pt")
    torch.jit.save(z.scripted, path)

    loaded = torch.jit.load(path).eval()
    frozen = torch.jit.freeze(torch.jit.load(path).eval())
    expected = None
    for tag, inputs in (("inputs", z.inputs), ("inputs2", z.inputs2)):
        ref = _run(z.eager, inputs)
        got = _run(loaded, inputs)
        outputs_close.check(got, ref, CLOSE, f"{name}/{tag}/loaded")
        outputs_close.check(_run(frozen, inputs), ref, CLOSE, f"{name}/{tag}/frozen")
        args, kwargs = inputs
        jit_pickle.save({"args": list(args), "kwargs": dict(kwargs)},
                        os.path.join(out_dir, f"{name}.{tag}.pt"))
        if expected is None:
            expected = got
    jit_pickle.save(expected, os.path.join(out_dir, name + ".expected.pt"))
    for batch, make in models.BATCH_INPUTS.get(name, {}).items():
        inputs = make()
        # Checked like the other sets, against the frozen module only (eager and the
        # loaded module already agreed above; this keeps export time low).
        outputs_close.check(_run(frozen, inputs), _run(z.eager, inputs), CLOSE, f"{name}/b{batch}/frozen")
        args, kwargs = inputs
        jit_pickle.save({"args": list(args), "kwargs": dict(kwargs)},
                        os.path.join(out_dir, f"{name}.b{batch}.inputs.pt"))

    n_nodes = len(list(frozen.graph.nodes()))
    if verbose:
        kinds = sorted(_node_kinds(frozen.graph))
        print(f"{name}: frozen nodes={n_nodes} ({time.time() - t0:.1f}s) kinds={kinds}")
    else:
        print(f"{name}: ok, frozen nodes={n_nodes} ({time.time() - t0:.1f}s)")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--out", required=True)
    p.add_argument("--only", nargs="+", choices=list(models.MODELS), default=None)
    p.add_argument("--verbose", action="store_true")
    a = p.parse_args(argv)
    torch.set_num_threads(1)
    os.makedirs(a.out, exist_ok=True)
    for name in a.only or list(models.MODELS):
        export_one(name, a.out, a.verbose)


if __name__ == "__main__":
    main()
