"""brisk.lower: compile chosen regions of an ExportedProgram with AOTInductor and write one
PT2 archive in NativeRT's format, in which each region is a call into its compiled files
(torch.ops.higher_order.executorch_call_delegate) and every other node stays on brisk's
kernels.

    import brisk
    ep = torch.export.export(model, args)
    report = brisk.lower(ep, "model.pt2")                 # the measured default partitioner
    report = brisk.lower(ep, "model.pt2", partitioner=f)   # f(gm) tags nodes: node.meta["brisk_region"] = key
    m = brisk.load("model.pt2")                            # the aoti delegate runs the regions

The archive holds the original program ("model"), the partly delegated program
("model-aoti") and each region's files under data/aotinductor/model-aoti.<i>/; brisk runs
the delegated program by default (delegates/aoti/README.md), and the original with
pt2_program="model". Like NativeRT's own lowering, the regions are compiled at the example
inputs' shapes, and so is the delegated program.

The default partitioner measures rather than guesses: its candidates are the maximal
chains of at least two pointwise operators (each the only reader of the one before) and every recurrent layer (what
brisk's eager kernels run worst next to compiled code), and it keeps a candidate only
when brisk with the candidate compiled by AOTInductor runs it at most `keep_ratio` of the
time brisk's own kernels take (both timed here, on the example inputs). Then it times the
whole program three ways: on brisk's kernels alone, with the kept regions compiled, and
(`whole_program=True`, the default) compiled whole by NativeRT's own lowering, the
archive `package_nativert_with_aoti_delegate` writes; the archive is the fastest. Every
compile runs under the ambient `torch._inductor.config` (patch it to change what
AOTInductor generates).
"""
import collections
import os
import statistics
import tempfile
import time

import torch
from torch.export.pt2_archive._package import package_pt2
from torch.fx.passes.utils.fuser_utils import fuse_by_partitions, validate_partition
from torch.nativert.backends._lower_utils import (
    lower_exported_program, package_nativert_with_aoti_delegate)
from torch.nativert.backends._lowered_aoti_module import LoweredBackendModule

from brisk import WHOLE_PROGRAM

REGION_KEY = "brisk_region"
RECURRENT = {"aten.lstm.input", "aten.gru.input", "aten.rnn_tanh.input", "aten.rnn_relu.input"}

# brisk_us / aoti_us: the candidate alone on brisk's kernels / compiled (measured only);
# note: why a candidate that measured faster alone was not kept, else "".
Region = collections.namedtuple("Region", ["key", "nodes", "ops", "brisk_us", "aoti_us", "kept", "note"])


def _op_name(node):
    return str(node.target) if node.op == "call_function" else ""


def _pointwise(node):
    tags = getattr(node.target, "tags", ())
    return node.op == "call_function" and torch.Tag.pointwise in tags


def _recurrent(node):
    return node.op == "call_function" and _op_name(node) in RECURRENT


def _components(gm, member):
    """Maximal sets of `member` nodes joined by producer -> reader edges where the reader is
    the producer's only one: chains, which are always convex (a value read outside the
    chain too, such as a residual, would make a path that leaves the region and returns)."""
    parent = {}

    def find(n):
        while parent[n] is not n:
            parent[n] = parent[parent[n]]
            n = parent[n]
        return n

    nodes = [n for n in gm.graph.nodes if member(n)]
    for n in nodes:
        parent[n] = n
    for n in nodes:
        for a in n.all_input_nodes:
            if a in parent and len(a.users) == 1:
                parent[find(a)] = find(n)
    groups = collections.OrderedDict()
    for n in nodes:
        groups.setdefault(find(n), []).append(n)
    return list(groups.values())


def _with_attrs(gm, nodes):
    """`nodes` plus the get_attr nodes (weights) that only they read: the region then owns
    them, and AOTInductor compiles them in as its constants."""
    inside = set(nodes)
    for n in gm.graph.nodes:
        if n.op == "get_attr" and n.users and all(u in inside for u in n.users):
            inside.add(n)
    return [n for n in gm.graph.nodes if n in inside]


def _fuse(gm, groups):
    """Each group of gm's nodes becomes a call_module of a submodule `brisk_region_<i>`
    (its outputs always a tuple); returns the submodules, in the groups' order."""
    fuse_by_partitions(gm, [dict.fromkeys(g) for g in groups], prefix="brisk_region_", always_return_tuple=True)
    return [getattr(gm, f"brisk_region_{i}") for i in range(len(groups))]


def _capture_inputs(gm, subs, args, kwargs):
    seen = {}
    hooks = [s.register_forward_pre_hook(lambda mod, a, i=i: seen.setdefault(i, tuple(a)))
             for i, s in enumerate(subs)]
    try:
        with torch.no_grad():
            gm(*args, **kwargs)
    finally:
        for h in hooks:
            h.remove()
    return [seen[i] for i in range(len(subs))]


def _median_us(module, args, kwargs, iters):
    """Median µs of `module` on the inputs: timed in C++ (Module.benchmark) for positional
    inputs, from Python for keyword ones (Module.benchmark takes positional inputs only)."""
    warmup = max(3, iters // 10)
    if not kwargs:
        return module.benchmark(list(args), warmup=warmup, iters=iters)["p50_us"]
    for _ in range(warmup):
        module(*args, **kwargs)
    times = []
    for _ in range(iters):
        t = time.perf_counter_ns()
        module(*args, **kwargs)
        times.append((time.perf_counter_ns() - t) / 1e3)
    return statistics.median(times)


def _measure(sub_ep, inputs, iters, brisk_module):
    """(brisk's kernels, brisk + AOTInductor) medians in µs for one candidate, and the
    AOTInductor files, reused if the candidate is kept."""
    delegate_ep, files = lower_exported_program(sub_ep, "model", "aoti")
    with tempfile.TemporaryDirectory(prefix="brisk_lower.") as d:
        path = os.path.join(d, "candidate.pt2")
        package_nativert_with_aoti_delegate(path, "model", "aoti", sub_ep, delegate_ep, files)
        own = _median_us(brisk_module.load(path, pt2_program="model"), inputs, {}, iters)
        compiled = _median_us(brisk_module.load(path), inputs, {}, iters)
    return own, compiled, files


def default_partitioner(gm):
    """Tags the candidates (see the module docstring); brisk.lower measures and keeps."""
    groups = [g for g in _components(gm, _pointwise) if len(g) >= 2]
    groups += [[n] for n in gm.graph.nodes if _recurrent(n)]
    for i, g in enumerate(groups):
        for n in g:
            n.meta[REGION_KEY] = f"candidate{i}"


def lower(ep, path, partitioner=None, *, example_inputs=None, model_name="model", backend_id="aoti",
          keep_ratio=0.9, iters=50, whole_program=True):
    """Writes the archive at `path`; returns one Region per candidate (its nodes, ops, the
    two timings when measured, and whether it was compiled). `partitioner(gm)` tags nodes
    of gm = ep.module() with node.meta["brisk_region"] = key: each key's nodes become one
    region, all compiled (no measurement). None: the measured default partitioner, which
    with `whole_program` also times the program compiled whole (the last Region, key
    "whole_program") and writes that archive when it is the fastest of the three."""
    import brisk  # noqa: PLC0415 - the package that imports this module
    if not isinstance(ep, torch.export.ExportedProgram):
        raise brisk.Error(f"brisk.lower: expected a torch.export.ExportedProgram, got {type(ep).__name__}")
    args, kwargs = example_inputs if example_inputs is not None else ep.example_inputs
    args, kwargs = tuple(args), dict(kwargs or {})
    measured = partitioner is None
    gm = ep.module()
    (partitioner or default_partitioner)(gm)
    groups = collections.OrderedDict()
    for n in gm.graph.nodes:
        key = n.meta.get(REGION_KEY)
        if key is not None:
            if n.op != "call_function":
                raise brisk.Error(f"brisk.lower: node '{n.name}' ({n.op}) is tagged, but only operator calls can be")
            groups.setdefault(key, []).append(n)
    # A region must be convex (no path leaves it and comes back) to become one call.
    for key in list(groups):
        if not validate_partition(_with_attrs(gm, groups[key])):
            if not measured:
                raise brisk.Error(f"brisk.lower: region '{key}' is not convex (a path leaves it and comes back)")
            del groups[key]
    keys = list(groups)
    names = {key: [n.name for n in g] for key, g in groups.items()}
    ops = {key: [_op_name(n) for n in g] for key, g in groups.items()}
    subs = _fuse(gm, [_with_attrs(gm, g) for g in groups.values()])
    inputs = _capture_inputs(gm, subs, args, kwargs)

    report, chosen = [], []
    for key, sub, sub_in in zip(keys, subs, inputs):
        sub_ep = torch.export.export(sub, sub_in)
        own = compiled = None
        if measured:
            own, compiled, files = _measure(sub_ep, sub_in, iters, brisk)
            keep = compiled <= keep_ratio * own
        else:
            files = lower_exported_program(sub_ep, model_name, backend_id)[1]
            keep = True
        report.append(Region(key, names[key], ops[key], own, compiled, keep, ""))
        if keep:
            chosen.append((key, sub_ep, files))

    # The delegated program, from a fresh copy of the program in which only the kept
    # regions are fused: each one's call_module becomes a call into its files.
    delegated = ep.module()
    regions = {}
    for key, g in groups.items():
        if any(k == key for k, _, _ in chosen):
            regions[key] = [n for n in delegated.graph.nodes if n.name in set(names[key])]
    _fuse(delegated, [_with_attrs(delegated, g) for g in regions.values()])
    aoti_files = {}
    for i, (key, sub_ep, files) in enumerate(chosen):
        region = f"{backend_id}.{i}"
        flat = torch.nativert.backends._lower_utils.get_new_ep_with_flat_inputs_outputs(sub_ep)
        lowered = LoweredBackendModule(flat, region, module_name=model_name)
        # torch.export's verifier takes a lowered module whose backend id is not "aoti"
        # when it carries these two (an ExecuTorch-style delegate); the serializer names
        # the call "<module_name>-<backend_id>", the region's folder in the archive.
        lowered.processed_bytes, lowered.compile_specs = b"", []
        setattr(delegated, f"brisk_lowered_{i}", lowered)
        call = next(n for n in delegated.graph.nodes if n.op == "call_module" and n.target == f"brisk_region_{i}")
        with delegated.graph.inserting_before(call):
            attr = delegated.graph.get_attr(f"brisk_lowered_{i}")
            hop = delegated.graph.call_function(torch._higher_order_ops.executorch_call_delegate,
                                                (attr, *call.args))
        call.replace_all_uses_with(hop)
        delegated.graph.erase_node(call)
        delattr(delegated, f"brisk_region_{i}")  # its weights are the region's constants now
        aoti_files[f"{model_name}-{region}"] = files
    programs = {model_name: ep}
    if chosen:  # nothing kept: the archive is the original program alone
        delegated.graph.lint()
        delegated.recompile()
        programs[f"{model_name}-{backend_id}"] = torch.export.export(delegated, args, kwargs)
    package_pt2(path, exported_programs=programs, aoti_files=aoti_files or None)
    if measured:
        report = _pick_in_context(ep, path, report, args, kwargs, iters, whole_program, model_name, backend_id)
    return report


def _pick_in_context(ep, path, report, args, kwargs, iters, whole_program, model_name, backend_id):
    """The measured partitioner's last step: the whole program on brisk's kernels alone,
    with the kept regions compiled (the archive at `path`), and, with `whole_program`,
    compiled whole as NativeRT's own lowering does; the archive becomes the fastest.

    A region faster alone can still cost the whole program more, by taking nodes that
    brisk fuses with their neighbours (a residual add and relu joined to a convolution's
    oneDNN post-ops); and a program of many small regions can run faster as one compiled
    region than as any mix of compiled regions and brisk's kernels."""
    import brisk  # noqa: PLC0415
    own = _median_us(brisk.load(path, pt2_program=model_name), args, kwargs, iters)
    times = {"brisk": own}
    if any(r.kept for r in report):
        times["regions"] = _median_us(brisk.load(path), args, kwargs, iters)
    whole, failed = None, ""
    if whole_program:
        fd, whole = tempfile.mkstemp(prefix="brisk_lower.", suffix=".pt2", dir=os.path.dirname(path) or ".")
        os.close(fd)
        try:
            delegate_ep, files = lower_exported_program(ep, model_name, backend_id)
            package_nativert_with_aoti_delegate(whole, model_name, backend_id, ep, delegate_ep, files)
            times["whole"] = _median_us(brisk.load(whole), args, kwargs, iters)
        except Exception as e:  # noqa: BLE001 - a program AOTInductor cannot compile whole keeps the other choices
            first = (str(e).splitlines() or [""])[0]
            failed = f"AOTInductor could not compile the whole program: {type(e).__name__}: {first}"
    best = min(times, key=times.get)
    try:
        if best == "whole":
            os.replace(whole, path)
        elif best == "brisk" and "regions" in times:
            package_pt2(path, exported_programs={model_name: ep})
    finally:
        if whole and os.path.exists(whole):
            os.unlink(whole)
    spelled = {"brisk": "on brisk's kernels alone", "regions": "with the kept regions compiled",
               "whole": "compiled whole"}
    why = ", ".join(f"{times[k]:.{0 if times[k] >= 100 else 2}f} us {spelled[k]}" for k in times)
    if best != "regions":
        report = [r._replace(kept=False, note=f"the whole program ran {why}") if r.kept else r for r in report]
    if whole_program:
        calls = [n for n in ep.graph_module.graph.nodes if n.op == "call_function"]
        note = failed or ("" if best == "whole" else f"the whole program ran {why}")
        report.append(Region(WHOLE_PROGRAM, [n.name for n in calls], [_op_name(n) for n in calls], own,
                             times.get("whole"), best == "whole", note))
    return report
