"""brisk-lower: compile regions of a torch.export archive with AOTInductor into one PT2
archive that brisk runs (brisk.lower; delegates/aoti/README.md).

    bazel run //tools:lower -- model.pt2 out.pt2                   # measured default partitioner
    bazel run //tools:lower -- model.pt2 out.pt2 --partitioner my_module:tag_nodes
    bazel run //tools:lower -- model.pt2 out.pt2 --inputs inputs.pt # example inputs other than the export's

`model.pt2` is a torch.export.save archive; `--inputs` a torch.save'd {"args": [...],
"kwargs": {...}} (brisk's inputs format). Prints one line per candidate region: its ops,
brisk's time and brisk + AOTInductor's (measured by the default partitioner) and whether
it was compiled. Exit status 2 with one line on bad input.
"""
import argparse
import importlib
import os
import sys


def _partitioner(spec):
    if spec is None:
        return None
    module, _, name = spec.partition(":")
    if not name:
        raise ValueError(f"--partitioner '{spec}': expected MODULE:FUNCTION")
    return getattr(importlib.import_module(module), name)


def main(argv=None):
    p = argparse.ArgumentParser(prog="brisk-lower", description=__doc__.splitlines()[0])
    p.add_argument("program", help="a torch.export.save archive")
    p.add_argument("out", help="the PT2 archive to write")
    p.add_argument("--partitioner", help="MODULE:FUNCTION that tags nodes (default: measured)")
    p.add_argument("--inputs", help="example inputs, {'args': [...], 'kwargs': {...}} (default: the export's)")
    p.add_argument("--keep-ratio", type=float, default=0.9,
                   help="the default partitioner keeps a region that brisk + AOTInductor runs in at most this "
                        "fraction of brisk's time (default 0.9)")
    p.add_argument("--iters", type=int, default=50, help="timed runs per measurement (default 50)")
    p.add_argument("--no-whole-program", dest="whole_program", action="store_false",
                   help="the default partitioner does not also try the program compiled whole")
    a = p.parse_args(argv)
    # Bazel runs the tool from its runfiles; paths are the caller's.
    cwd = os.environ.get("BUILD_WORKING_DIRECTORY", os.getcwd())
    program, out = os.path.join(cwd, a.program), os.path.join(cwd, a.out)
    try:
        import torch
        import brisk
        if not 0 < a.keep_ratio <= 10 or a.iters < 1:
            raise ValueError("--keep-ratio must be in (0, 10] and --iters >= 1")
        partitioner = _partitioner(a.partitioner)
        ep = torch.export.load(program)
        example = None
        if a.inputs:
            d = torch.load(os.path.join(cwd, a.inputs))
            example = (d["args"], d.get("kwargs", {}))
        report = brisk.lower(ep, out, partitioner, example_inputs=example, keep_ratio=a.keep_ratio, iters=a.iters,
                             whole_program=a.whole_program)
    except Exception as e:  # noqa: BLE001 - one line for any bad input, as the brisk CLI
        print(f"brisk-lower: error: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}", file=sys.stderr)
        return 2
    for r in report:
        timing = ("chosen by the partitioner" if r.brisk_us is None else
                  f"brisk {r.brisk_us:.1f} us" + (f", brisk + AOTInductor {r.aoti_us:.1f} us" if r.aoti_us else ""))
        ops = ", ".join(sorted(set(o.replace("aten.", "").replace(".default", "") for o in r.ops)))
        verdict = "compiled" if r.kept else "left to brisk" + (f" ({r.note})" if r.note else "")
        print(f"{r.key}: {len(r.nodes)} nodes ({ops}): {timing}: {verdict}")
    regions = [r for r in report if r.key != brisk.WHOLE_PROGRAM]
    if any(r.kept for r in report if r.key == brisk.WHOLE_PROGRAM):
        print(f"wrote {out}: the whole program compiled by AOTInductor")
    else:
        kept = sum(r.kept for r in regions)
        print(f"wrote {out}: {kept} of {len(regions)} candidate regions compiled by AOTInductor")
    return 0


if __name__ == "__main__":
    sys.exit(main())
