"""Builders of brisk's rows: the binding on the TorchScript file (default options, without
delegates, without elementwise fusion), on the shared PT2 archive (fp32 and the opt-in
reduced-precision modes), on AOTInductor-compiled NativeRT archives (the whole program,
or what brisk.lower's partitioner keeps), and on the zoo's PT2E int8 program."""
import os

import torch

from . import cases
from .runtimes_torch import aoti_configs


def brisk_module(use_delegates=True, disabled_passes=(), precision=()):
    """A builder: brisk.load of the job's file (the .pt, or the PT2 archive for the PT2
    rows) with these options."""
    def build(e, job):
        import brisk
        m = brisk.load(job.path, use_delegates=use_delegates, disabled_passes=list(disabled_passes),
                       precision=list(precision))
        e.keep.append(m)
        e.fn = lambda: m(*job.args, **job.kwargs)
    return build


def build_brisk_aoti(e, job, partial):
    """brisk on a NativeRT archive with AOTInductor-compiled code: the whole program
    (PyTorch's own lowering, under the aotinductor row's inductor configs, so the two rows
    run the same generated code), or what brisk.lower's measured default partitioner
    writes under the same configs (kept regions, the whole program, or neither). Compile
    time is recorded as load time, as for aotinductor."""
    import brisk
    from torch.nativert.backends._lower_utils import lower_exported_program, package_nativert_with_aoti_delegate
    case = job.case
    module, _ = cases.load_eager(job.zoo, case)
    path = os.path.join(job.workdir, f"{case.model}.b{case.batch}.{'partial' if partial else 'whole'}.aoti.pt2")
    configs = aoti_configs()
    chosen = ""
    with torch.no_grad():
        program = torch.export.export(module, tuple(job.args), job.kwargs)
        if os.path.exists(path):  # the memory process reuses the timing process's archive
            chosen = "; archive of the timing run"
        elif partial:
            # Under the aotinductor row's configs, as the whole-graph row: every region, and
            # the whole-program candidate, is then the code that row runs.
            with torch._inductor.config.patch(configs):
                report = brisk.lower(program, path)
            kept = [r for r in report if r.kept]
            chosen = (f"; {len(kept)} of {len(report)} candidates compiled" +
                      "".join(f", {r.key} ({len(r.nodes)} nodes, {r.brisk_us:.1f} -> {r.aoti_us:.1f} us)"
                              for r in kept) +
                      "".join(f"; {n}" for n in {r.note for r in report if r.note}) if report
                      else "; no candidate regions")
        else:
            with torch._inductor.config.patch(configs):
                delegate, files = lower_exported_program(program, "model", "aoti")
            package_nativert_with_aoti_delegate(path, "model", "aoti", program, delegate, files)
    m = brisk.load(path)
    e.keep.append(m)
    e.fn = lambda: m(*job.args, **job.kwargs)
    e.note = ("brisk.lower (measured default partitioner)" + chosen if partial else
              f"lower_exported_program under inductor_configs={configs} + package_nativert_with_aoti_delegate")


def build_brisk_int8_static(e, job):
    """The zoo's PT2E program is quantized already: no option needed."""
    import brisk
    path = cases.int8_program(job.zoo, job.case)
    m = brisk.load(path)
    e.keep.append(m)
    e.fn = lambda: m(*job.args, **job.kwargs)
    e.note = f"brisk.load({os.path.basename(path)}), default options"
