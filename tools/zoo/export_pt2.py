#!/usr/bin/env python3
"""Write the zoo's PT2 (torch.export) programs, beside the TorchScript ones of export.py.

Usage: /opt/brisk/venv/bin/python3 export_pt2.py --out DIR [--only NAME ...] [--verbose]
                                                 [--declared FILE ...]

For every program of models_pt2.PT2_MODELS (the zoo models, from the same nn.Module
instances and seeds as <name>.pt, plus mlp.dyn, resnet18.dyn, cond_model, while_model,
pytree_io, pt2e_convnet, and the PT2E int8 programs <name>.int8):
  <name>.pt2                      torch.export.export program (TRAINING IR), archive program "model"
  <name>.core.pt2                 ep.run_decompositions() (core ATen IR)
  <name>.pt2.expected.pt          ep.module() output on the inputs
  <name>.pt2.inputs2.expected.pt  ep.module() output on inputs2, where the program accepts them
  <name>.inputs.pt, .inputs2.pt   extra programs only (the zoo models' files come from export.py)
  <name>.pt                       an extra program's TorchScript twin, where it has one (while_model)
  <name>.float_state.pt           a PT2E program's fp32 model as state_dict entries that differ
                                  from the zoo model's <model>.pt, where any do (mobilenet_v2.int8)
and pt2_manifest.json: per program exported / reason / IRs / node counts / whether inputs2
are accepted (see README.md, "PT2 programs").

Checked here: ep.module() matches the eager module on each input set it accepts; both
archives, reloaded with load_pt2, reproduce the saved references; ep.module() rejects
inputs2 exactly when the manifest says so (static shapes or specialised ints); dynamic
programs accept their range's ends and reject one past the maximum; cond_model's two input
sets take different branches, while_model's run different trip counts; a PT2E-quantized
program stays within QUANTIZED_FLOAT_ERROR of its fp32 model. With --declared
(the genrule's $(OUTS)), the files written must be exactly the declared ones.
"""

import argparse
import collections
import contextlib
import io
import json
import logging
import os
import sys
import time
import warnings
import zipfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# export.py fixes PYTHONHASHSEED (re-executing this script), thread counts and the
# TorchScript deprecation warnings (the model builders script every model), and loads
# models.py by its cwd-relative path.
import export  # noqa: E402
import jit_pickle  # noqa: E402
import outputs_close  # noqa: E402  (tools/, put on sys.path by export.py)
import torch  # noqa: E402
from torch.export.pt2_archive._package import load_pt2, package_pt2  # noqa: E402

# nn.LSTM / nn.GRU re-assign their _flat_weights list during export ("The tensor attributes
# self.lstm._flat_weights[0], ... were assigned during export"); the weights are the
# registered parameters (export lifts them as such), so the warning says nothing here.
warnings.filterwarnings("ignore", message=r"The tensor attributes self\.\w+\._flat_weights",
                        category=UserWarning)

models_pt2 = export.import_relative("models_pt2")

# export.CLOSE: the module's own checks (ep.module(), the twin, the reloaded export IR).
# Core ATen decompositions (linear -> addmm, LSTM -> unrolled cells) round differently from
# the composite kernels the reference ran: compare with an atol scaled to the output
# (1e-6 * max(1, max|ref|)); containers of the same type, dict keys in the same order.
CORE_RTOL, CORE_ATOL_SCALE = 1e-5, 1e-6
CORE_CLOSE = outputs_close.Rules(rtol=CORE_RTOL, atol_scale=CORE_ATOL_SCALE, scale_floor=1.0, rtol_of="got",
                                 sequences="same", dict_order=True)
# A PT2E-quantized program against the fp32 model it was quantized from: its largest
# difference, as a share of the fp32 output's range, must stay below this. It catches a
# degenerate quantization (activations below one uint8 step: the program then outputs
# its bias, 100% off), not the ordinary int8 error (resnet18 and mlp ~1%, the random
# mobilenet_v2 12-17%: its 1000 logits lie close together, within int8 noise).
QUANTIZED_FLOAT_ERROR = 0.25


def _tensors(v):
    if isinstance(v, torch.Tensor):
        yield v
    elif isinstance(v, (list, tuple)):
        for x in v:
            yield from _tensors(x)
    elif isinstance(v, dict):
        for x in v.values():
            yield from _tensors(x)


def _run(m, inputs):
    args, kwargs = inputs
    with torch.no_grad():
        return m(*args, **kwargs)


def _first_line(e):
    lines = str(e).strip().splitlines()
    return f"{type(e).__name__}: {lines[0] if lines else ''}"


def _json_nodes(path):
    """Node count of the archive's program as a C++ reader sees it: the nodes of
    models/model.json, recursively through torch.cond / while_loop subgraphs (FX getitem
    nodes are never serialized). Also the per-target counts and the verifiers."""
    with zipfile.ZipFile(path) as z:
        root = z.namelist()[0].split("/")[0]
        prog = json.loads(z.read(f"{root}/models/model.json"))
    ops = collections.Counter()

    def walk(graph):
        n = 0
        for node in graph["nodes"]:
            n += 1
            ops[node["target"].replace("torch.ops.", "")] += 1
            for a in node["inputs"]:
                if "as_graph" in a["arg"]:
                    n += walk(a["arg"]["as_graph"]["graph"])
        return n

    return walk(prog["graph_module"]["graph"]), dict(sorted(ops.items())), prog["verifiers"]


def _drop_provenance(ep):
    """Removes the nodes' "from_node" metadata (which pass created a node from which): it
    records graph ids, Python id()s of graph objects, so the archives would differ run to
    run. Nothing reads it to run a program."""
    for gm in ep.graph_module.modules():
        if isinstance(gm, torch.fx.GraphModule):
            for node in gm.graph.nodes:
                node.meta.pop("from_node", None)
    return ep


def _save(obj, path, written):
    jit_pickle.save(obj, path)
    written.append(os.path.basename(path))


def _input_dim_symbols(ep):
    """The symbols of the user inputs' dims: the dynamic batch. range_constraints also
    holds unbacked symbols (u0, which while_loop introduces), which no input size has."""
    user = {s.arg.name for s in ep.graph_signature.input_specs
            if s.kind == torch.export.graph_signature.InputKind.USER_INPUT}
    symbols = set()
    for node in ep.graph.nodes:
        if node.op == "placeholder" and node.name in user and isinstance(node.meta.get("val"), torch.Tensor):
            for d in node.meta["val"].shape:
                if isinstance(d, torch.SymInt):
                    symbols |= d.node.expr.free_symbols
    return symbols


def _output_step(ep):
    """The step (scale) of the program's last quantize_per_tensor: the last quantized
    activation before the output (the classifier's input). Tests state their tolerance
    for quantized programs in these steps."""
    qpt = torch.ops.quantized_decomposed.quantize_per_tensor.default
    scales = [n.args[1] for n in ep.graph.nodes if n.op == "call_function" and n.target == qpt]
    if not scales or not isinstance(scales[-1], float):
        raise AssertionError("a quantized program without a constant-scale quantize_per_tensor")
    return scales[-1]


def _check_quantized(name, ep, spec, refs, entry):
    """A PT2E program (spec.float_model set): its difference from the fp32 model on each
    input set it accepts, as a share of that output's range, below QUANTIZED_FLOAT_ERROR;
    recorded with its output step in the manifest's `quantized`."""
    error = 0.0
    for tag, (inputs, got) in refs.items():
        want = _run(spec.float_model, inputs)
        error = max(error, ((got - want).abs().max() / (want.max() - want.min())).item())
    if error > QUANTIZED_FLOAT_ERROR:
        raise AssertionError(f"{name}: differs from its fp32 model by {error:.0%} of the output's range")
    entry["quantized"] = collections.OrderedDict(output_step=_output_step(ep), float_error=round(error, 4))


def _check_dynamic(name, ep, spec, entry):
    """The range of the dynamic batch dim (dim 0 of the first input), from the program;
    ep.module() must take both ends and reject max + 1 (what the test expects from brisk
    too)."""
    dims = _input_dim_symbols(ep)
    ranges = [(int(r.lower), int(r.upper)) for s, r in ep.range_constraints.items() if s in dims]
    if len(ranges) != 1:
        raise AssertionError(f"{name}: expected one dynamic dim, got {ep.range_constraints}")
    lo, hi = ranges[0]
    (x, *rest), kwargs = spec.inputs
    mod = ep.module()
    for b in (lo, hi):
        _run(mod, ([torch.randn(b, *x.shape[1:]), *rest], kwargs))
    try:
        _run(mod, ([torch.randn(hi + 1, *x.shape[1:]), *rest], kwargs))
    except Exception:  # the guard's error type is torch's business; any rejection will do
        pass
    else:
        raise AssertionError(f"{name}: batch {hi + 1} was accepted")
    entry["batch_range"] = [lo, hi]


def export_one(name, out_dir, verbose=False):
    """Exports one program; returns (manifest entry, files written)."""
    t0 = time.time()
    spec = models_pt2.PT2_MODELS[name]()
    written = []
    entry = collections.OrderedDict(exported=False, reason="", ir=[], nodes={}, verifiers={},
                                    torchscript=(spec.torchscript + ".pt") if spec.torchscript else None,
                                    dynamic=spec.dynamic is not None)
    example = spec.example or spec.inputs
    if spec.original is not None:
        # The unmodified module first: the rewrite is only there because this fails. On
        # the way, the shape-guard logger warns and torch prints the partial graph to
        # stderr; the error is recorded instead.
        log = logging.getLogger("torch.fx.experimental.symbolic_shapes")
        level = log.level
        log.setLevel(logging.ERROR)
        try:
            with contextlib.redirect_stderr(io.StringIO()):
                torch.export.export(spec.original, tuple(example[0]), dict(example[1]))
        except Exception as e:
            entry["original_error"] = _first_line(e)
        else:
            raise AssertionError(f"{name}: the original module exports now; drop the rewrite")
        finally:
            log.setLevel(level)
    try:
        ep = torch.export.export(spec.module, tuple(example[0]), dict(example[1]),
                                 dynamic_shapes=spec.dynamic)
    except Exception as e:
        entry["reason"] = _first_line(e)
        return entry, written
    entry["exported"] = True
    entry["reason"] = spec.note
    core = ep.run_decompositions()

    if spec.own_inputs:
        for tag, inputs in (("inputs", spec.inputs), ("inputs2", spec.inputs2)):
            args, kwargs = inputs
            _save({"args": list(args), "kwargs": dict(kwargs)}, os.path.join(out_dir, f"{name}.{tag}.pt"),
                  written)
    if name == "cond_model":
        if models_pt2.cond_branch(spec.module, spec.inputs) == models_pt2.cond_branch(spec.module, spec.inputs2):
            raise AssertionError("cond_model: inputs and inputs2 take the same branch")
    if spec.twin is not None:
        # The TorchScript twin (same parameters): saved as <name>.pt and recorded as the
        # program's `torchscript`, after it matches the module on both input sets.
        twin_path = os.path.join(out_dir, name + ".pt")
        torch.jit.save(torch.jit.script(spec.twin), twin_path)
        written.append(os.path.basename(twin_path))
        twin = torch.jit.load(twin_path).eval()
        for tag, inputs in (("inputs", spec.inputs), ("inputs2", spec.inputs2)):
            outputs_close.check(_run(twin, inputs), _run(spec.module, inputs), export.CLOSE, f"{name}/{tag}/twin")
        entry["torchscript"] = name + ".pt"
    if name == "while_model" and models_pt2.trip_count(spec.inputs) == models_pt2.trip_count(spec.inputs2):
        raise AssertionError("while_model: inputs and inputs2 run the same number of trips")

    refs = {}
    mod = ep.module()
    for tag, inputs, fname in (("inputs", spec.inputs, f"{name}.pt2.expected.pt"),
                               ("inputs2", spec.inputs2, f"{name}.pt2.inputs2.expected.pt")):
        try:
            got = _run(mod, inputs)
        except Exception as e:
            if tag == "inputs":
                raise
            entry["inputs2"] = "rejected: " + _first_line(e)
            continue
        outputs_close.check(got, _run(spec.module, inputs), export.CLOSE, f"{name}/{tag}/ep.module")
        if any(t.requires_grad for t in _tensors(got)):
            raise AssertionError(f"{name}/{tag}: reference requires grad")
        _save(got, os.path.join(out_dir, fname), written)
        refs[tag] = (inputs, got)
        if tag == "inputs2":
            entry["inputs2"] = "accepted"
    if spec.float_model is not None:
        _check_quantized(name, ep, spec, refs, entry)
        # How to rebuild the fp32 model: a zoo TorchScript file, plus the entries of its
        # state_dict that differ (mobilenet_v2's re-estimated BatchNorm statistics; 187 kB
        # against 14 MB for the model itself).
        torchscript, state = spec.float_origin
        entry["quantized"]["float_model"] = torchscript
        entry["quantized"]["float_state"] = None
        if state:
            entry["quantized"]["float_state"] = f"{name}.float_state.pt"
            _save(dict(state), os.path.join(out_dir, f"{name}.float_state.pt"), written)
    if spec.dynamic is not None:
        if "inputs2" not in refs:
            raise AssertionError(f"{name}: dynamic program rejected inputs2")
        _check_dynamic(name, ep, spec, entry)

    for ir, prog, suffix in (("export", ep, ".pt2"), ("core", core, ".core.pt2")):
        path = os.path.join(out_dir, name + suffix)
        package_pt2(path, exported_programs={"model": _drop_provenance(prog)})
        written.append(os.path.basename(path))
        loaded = load_pt2(path).exported_programs["model"].module()
        for tag, (inputs, ref) in refs.items():
            got = _run(loaded, inputs)
            rules = export.CLOSE if ir == "export" else CORE_CLOSE
            outputs_close.check(got, ref, rules, f"{name}/{tag}/{ir}/load_pt2")
        if "inputs2" not in refs:
            # The reloaded program must reject inputs2 as the original did.
            try:
                _run(loaded, spec.inputs2)
            except Exception:
                pass
            else:
                raise AssertionError(f"{name}/{ir}: reloaded program accepts inputs2")
        n, ops, verifiers = _json_nodes(path)
        entry["ir"].append(ir)
        entry["nodes"][ir] = n
        entry["verifiers"][ir] = verifiers
        entry.setdefault("ops", {})[ir] = ops
    entry["files"] = sorted(written)
    secs = time.time() - t0
    msg = f"{name}: ok, nodes export={entry['nodes']['export']} core={entry['nodes']['core']} ({secs:.1f}s)"
    if verbose:
        msg += f" inputs2={entry.get('inputs2')} ops={entry['ops']}"
    print(msg)
    return entry, written


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", required=True)
    p.add_argument("--only", nargs="+", choices=list(models_pt2.PT2_MODELS), default=None)
    p.add_argument("--verbose", action="store_true")
    p.add_argument("--declared", nargs="+", default=None,
                   help="the files the build declares (Bazel's $(OUTS)): must equal what is written")
    a = p.parse_args(argv)
    torch.set_num_threads(1)
    os.makedirs(a.out, exist_ok=True)
    t0 = time.time()
    manifest = collections.OrderedDict()
    written = ["pt2_manifest.json"]
    for name, reason in models_pt2.NOT_EXPORTED.items():
        manifest[name] = {"exported": False, "reason": reason, "ir": [], "nodes": {}}
    for name in a.only or list(models_pt2.PT2_MODELS):
        entry, files = export_one(name, a.out, a.verbose)
        manifest[name] = entry
        written += files
        if not entry["exported"]:
            print(f"{name}: NOT exported: {entry['reason']}")
    with open(os.path.join(a.out, "pt2_manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
        f.write("\n")
    if a.declared is not None:
        declared = sorted(os.path.basename(d) for d in a.declared)
        if declared != sorted(written):
            raise SystemExit("export_pt2.py: written files differ from the declared outputs: "
                             f"undeclared {sorted(set(written) - set(declared))}, "
                             f"not written {sorted(set(declared) - set(written))}")
    print(f"total {time.time() - t0:.1f}s")


if __name__ == "__main__":
    main()
