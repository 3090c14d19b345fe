"""Builders of PyTorch's own executors: eager, the TorchScript interpreter (frozen, and
after optimize_for_inference), Static Runtime, NativeRT and ep.module() on a PT2 archive,
Inductor and AOTInductor. Each builder(e, job) makes e.fn run one inference on the job's
inputs (executors.Job: zoo, case, args, kwargs, workdir, path) and says how in e.note;
compile time counts as build time. Nothing of another runtime's graph is edited by hand."""
import os
import time

import torch

from . import cases, settings


def build_eager(e, job):
    module, e.note = cases.load_eager(job.zoo, job.case)
    e.grad_ctx = torch.inference_mode
    e.fn = lambda: module(*job.args, **job.kwargs)


def build_interpreter(e, job):
    module = torch.jit.freeze(torch.jit.load(job.path).eval())
    e.fn = lambda: module(*job.args, **job.kwargs)


def build_interpreter_ofi(e, job):
    module = torch.jit.optimize_for_inference(torch.jit.load(job.path).eval())
    e.fn = lambda: module(*job.args, **job.kwargs)


def sr_shim():
    """tools/bench/_sr_shim.so (built by //tools/bench:compare), or None."""
    try:
        import _sr_shim
        return _sr_shim
    except ImportError:
        return None


def build_static_runtime(e, job):
    args, kwargs = job.args, job.kwargs
    frozen = torch.jit.freeze(torch.jit.load(job.path).eval())
    sm = torch._C._jit_to_static_module(frozen._c)
    e.keep.append(frozen)
    shim = sr_shim()
    if shim is not None:
        e.fn = lambda: shim.call(sm, *args, **kwargs)
        e.note = "called through tools/bench/sr_shim.cc (GIL released while it runs)"
    elif "prim::fork" in str(frozen.graph):
        # Its own __call__ keeps the GIL and deadlocks here sooner or later.
        raise RuntimeError("tools/bench/_sr_shim.so not found: Static Runtime's own __call__ can "
                           "deadlock on prim::fork (see sr_shim.cc)")
    else:
        e.fn = lambda: sm(*args, **kwargs)
        e.note = "StaticModule.__call__ (keeps the GIL)"


def build_ep_module(e, job):
    module = torch.export.load(job.path).module()
    e.fn = lambda: module(*job.args, **job.kwargs)


def build_nativert(e, job):
    runner = torch._C._nativert.PyModelRunner(job.path, "model")
    e.keep.append(runner)
    e.fn = lambda: runner.run(*job.args, **job.kwargs)


_PT2_EXPORT_S = {}


def pt2_archive(zoo, case, args, kwargs, workdir):
    """(path, seconds the export took): the eager module exported with torch.export and
    packaged as NativeRT reads it (package_pt2, one program named "model"). Built once
    per case and work directory, so NativeRT, ep.module(), brisk (PT2) and their memory
    processes all run the same archive."""
    path = os.path.join(workdir, f"{case.model}.b{case.batch}.export.pt2")
    if not os.path.exists(path):
        from torch.export.pt2_archive._package import package_pt2
        t0 = time.perf_counter()
        module, _ = cases.load_eager(zoo, case)
        with torch.no_grad():
            program = torch.export.export(module, tuple(args), kwargs)
        package_pt2(path, exported_programs={"model": program})
        _PT2_EXPORT_S[path] = time.perf_counter() - t0
    return path, _PT2_EXPORT_S.get(path, 0.0)


def build_inductor(e, job):
    import torch._inductor.config as inductor_config
    module, _ = cases.load_eager(job.zoo, job.case)
    # Freezing folds the weights into the graph as constants (and lets Inductor
    # prepack them for oneDNN/MKL), as torch's own CPU inference advice says.
    inductor_config.freezing = True
    mode = settings.inductor_mode()
    compiled = torch.compile(module, mode=None if mode == "default" else mode)
    e.fn = lambda: compiled(*job.args, **job.kwargs)
    from torch._dynamo.utils import counters
    counters.clear()
    with torch.no_grad():
        e.fn()  # compiles: part of the build time a user pays
    e.keep += [module, compiled]
    e.note = f"torch.compile(mode={mode!r}), torch._inductor.config.freezing=True; run under torch.no_grad()"
    e.caveats += _dynamo_caveats(module, counters)


def _dynamo_caveats(module, counters):
    """What TorchDynamo left to eager: a user's torch.compile gives exactly this."""
    import torch._dynamo.config as dynamo_config
    out = []
    rnn = [type(m).__name__ for m in module.modules() if isinstance(m, torch.nn.RNNBase)]
    if rnn and not getattr(dynamo_config, "allow_rnn", True):
        out.append(f"TorchDynamo does not trace {rnn[0]} (torch._dynamo.config.allow_rnn=False): "
                   "it runs in eager between compiled graphs")
    graphs = counters["stats"].get("unique_graphs", 0)
    breaks = sum(counters["graph_break"].values())
    if graphs == 0:
        out.append("TorchDynamo compiled no graph: the model runs in eager")
    elif breaks:
        reason = " ".join(str(next(iter(counters["graph_break"]))).split())[:160]
        out.append(f"{breaks} graph break{'s' if breaks > 1 else ''}, {graphs} compiled graph"
                   f"{'s' if graphs > 1 else ''} (first break: {reason})")
    return out


def aoti_configs():
    """The inductor configs of every AOTInductor-compiled row (aotinductor, brisk_aoti,
    brisk_aoti_partial, aotinductor_int8_static): the rows then run the same code."""
    return {"freezing": True, "max_autotune": settings.inductor_mode() == "max-autotune-no-cudagraphs"}


def build_aotinductor(e, job):
    module, _ = cases.load_eager(job.zoo, job.case)
    path = os.path.join(job.workdir, f"{job.case.model}.b{job.case.batch}.pt2")
    configs = aoti_configs()
    if not os.path.exists(path):
        with torch.no_grad():
            program = torch.export.export(module, tuple(job.args), job.kwargs)
            torch._inductor.aoti_compile_and_package(program, package_path=path, inductor_configs=configs)
    runner = torch._inductor.aoti_load_package(path)
    e.keep.append(runner)
    e.fn = lambda: runner(*job.args, **job.kwargs)
    e.note = (f"torch.export.export, then torch._inductor.aoti_compile_and_package(inductor_configs={configs}), "
              "loaded with aoti_load_package")


def quantized_ops_registered():
    # torch.ops.quantized_decomposed (the PT2E programs' quantize / dequantize ops) is
    # defined in Python: loading a program needs it registered first.
    import torch.ao.quantization.fx._decomposed  # noqa: F401


def build_aotinductor_int8_static(e, job):
    """AOTInductor on the PT2E program, re-exported at the case's static shapes (as the
    fp32 row exports at them). Inductor lowers the dequantize -> conv / linear ->
    quantize patterns to oneDNN's int8 kernels (onednn.qconv_pointwise, qlinear_pointwise)
    with freezing on, by passes that torchao registers when its x86 quantizer module is
    imported (torch 2.14 no longer has them): without the import it computes the same
    program in fp32, dequantizing the weights on every call."""
    quantized_ops_registered()
    import torchao.quantization.pt2e.quantizer.x86_inductor_quantizer  # noqa: F401  the lowering passes
    case = job.case
    program_path = cases.int8_program(job.zoo, case)
    path = os.path.join(job.workdir, f"{case.model}.b{case.batch}.int8.aoti.pt2")
    configs = aoti_configs()
    if not os.path.exists(path):
        with torch.no_grad():
            program = torch.export.export(torch.export.load(program_path).module(), tuple(job.args), job.kwargs)
            torch._inductor.aoti_compile_and_package(program, package_path=path, inductor_configs=configs)
    runner = torch._inductor.aoti_load_package(path)
    e.keep.append(runner)
    e.fn = lambda: runner(*job.args, **job.kwargs)
    e.note = (f"torch.export.load({os.path.basename(program_path)}), re-exported at batch {case.batch}, "
              f"torch._inductor.aoti_compile_and_package(inductor_configs={configs}), loaded with aoti_load_package")
