"""brisk on the zoo's PT2 archives (default export IR and core ATen IR) against brisk on
the same models' TorchScript files (same weights): the benchmark behind "brisk(PT2)
within 5% of brisk(TorchScript)".

Per zoo model with a TorchScript twin (tools/zoo's pt2_manifest.json):
  - nodes, kernels by kind (fallback count) and nodes folded at load, per format;
  - latency: the three Modules in one process, Module.benchmark (brisk's C++ loop, no
    Python per call) in rotating order, ROUNDS rounds; each round's p50, then the
    median over rounds; the ratio to TorchScript is the median of per-round ratios;
  - peak RSS: one process per model and format (--memory-child): load, reset the peak
    (clear_refs), MEMORY_ITERS inferences, VmHWM - RSS before them.
One intra-op thread, MKL single-threaded, glibc malloc without mmap and trimming
(compare.py's settings, comparison/settings.py: the script re-executes itself with them
when they are missing).

    bazel run //tools/bench:pt2_vs_torchscript -- [--models a,b] [--rounds N] [--out DIR]

Writes <out>/pt2-vs-torchscript-<date>.{md,json} (default out: the workspace's results/).
"""
import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys

# This file's own directory, unresolved, first (as compare.py does): the runfiles' copy of
# the comparison package under `bazel run`.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# The fixed thread and allocator settings and the /proc helpers; neither imports torch, so
# the settings re-exec happens before torch is loaded.
# (`fixed`: main() has a `settings` of its own, the record's.)
from comparison import memory  # noqa: E402
from comparison import settings as fixed  # noqa: E402

FORMATS = {"torchscript": ".pt", "pt2": ".pt2", "core": ".core.pt2"}


def _inputs(zoo, name):
    import torch
    d = torch.load(os.path.join(zoo, f"{name}.inputs.pt"))
    return {"args": list(d["args"]), "kwargs": dict(d["kwargs"])}


def memory_child(path, inputs_path, iters):
    import torch
    import brisk
    torch.set_num_threads(1)
    d = torch.load(inputs_path)
    args, kwargs = list(d["args"]), dict(d["kwargs"])
    m = brisk.load(path, intra_op_threads=1)
    memory.reset_peak()  # VmHWM := current RSS
    before = memory.status_kib("VmRSS")  # the first runs' slab and outputs count: what inference costs
    for _ in range(iters):
        m(*args, **kwargs)
    print(json.dumps({"peak_increase_mib": (memory.status_kib("VmHWM") - before) / 1024.0}))


def peak_rss(path, inputs_path, iters):
    out = subprocess.run([sys.executable, __file__, "--memory-child", path, inputs_path, str(iters)],
                         capture_output=True, text=True, check=False)
    if out.returncode != 0:
        return {"error": (out.stderr.strip().splitlines() or ["failed"])[-1]}
    return json.loads(out.stdout.strip().splitlines()[-1])


def measure(zoo, name, rounds, iters):
    import brisk
    inputs = _inputs(zoo, name)
    mods, row = {}, {}
    for fmt, suffix in FORMATS.items():
        m = brisk.load(os.path.join(zoo, name + suffix), intra_op_threads=1)
        s = m.stats()
        mods[fmt] = m
        row[fmt] = {"nodes": s["nodes"], "kernels": s["kernels"], "folded_nodes": s["folded_nodes"],
                    "round_p50_us": []}
    order = list(FORMATS)
    for r in range(rounds):
        for fmt in order[r % 3:] + order[:r % 3]:
            res = mods[fmt].benchmark(inputs, warmup=max(10, iters // 10), iters=iters)
            row[fmt]["round_p50_us"].append(statistics.median(res["samples_us"]))
    ts = row["torchscript"]["round_p50_us"]
    for fmt in FORMATS:
        r = row[fmt]
        r["p50_us"] = statistics.median(r["round_p50_us"])
        r["ratio_to_torchscript"] = statistics.median(x / y for x, y in zip(r["round_p50_us"], ts))
    return row


def _fmt_us(x):
    return f"{x:.0f}" if x >= 100 else f"{x:.1f}"


def markdown(results, settings):
    lines = [f"# brisk on PT2 archives vs brisk on TorchScript, {settings['date']}", "",
             f"{settings['cpu']}, torch {settings['torch']}. {settings['method']}", "",
             "| model | nodes TS/PT2/core | fallback TS/PT2/core | folded PT2/core | brisk TS p50 µs | "
             "PT2 (ratio to TS) | core ATen (ratio to TS) | peak RSS MiB TS/PT2/core |",
             "|---|---|---|---|---|---|---|---|"]
    for name, row in results.items():
        def cell(fmt):
            return f"{_fmt_us(row[fmt]['p50_us'])} ({row[fmt]['ratio_to_torchscript']:.2f})"

        def rss(fmt):
            m = row[fmt].get("memory", {})
            return f"{m['peak_increase_mib']:+.1f}" if "peak_increase_mib" in m else "n/a"
        lines.append(
            f"| {name} | {'/'.join(str(row[f]['nodes']) for f in FORMATS)} | "
            f"{'/'.join(str(row[f]['kernels']['fallback']) for f in FORMATS)} | "
            f"{row['pt2']['folded_nodes']}/{row['core']['folded_nodes']} | {_fmt_us(row['torchscript']['p50_us'])} | "
            f"{cell('pt2')} | {cell('core')} | {'/'.join(rss(f) for f in FORMATS)} |")
    return "\n".join(lines) + "\n"


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--memory-child":
        memory_child(sys.argv[2], sys.argv[3], int(sys.argv[4]))
        return
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--zoo", default=None, help="directory with the zoo's files (default: from runfiles)")
    p.add_argument("--models", default="", help="comma-separated zoo models (default: all with a twin)")
    p.add_argument("--rounds", type=int, default=6)
    p.add_argument("--iters", type=int, default=200, help="inferences per round and format")
    p.add_argument("--memory-iters", type=int, default=5)
    p.add_argument("--no-memory", action="store_true")
    p.add_argument("--out", default=os.path.join(os.environ.get("BUILD_WORKSPACE_DIRECTORY", "."), "results"))
    a = p.parse_args()
    if a.rounds < 1 or a.iters < 1:
        raise SystemExit("pt2_vs_torchscript: --rounds and --iters must be >= 1")
    fixed.ensure_settings()
    from comparison.cases import default_zoo  # imports torch: after the re-exec
    a.zoo = os.path.abspath(a.zoo) if a.zoo else default_zoo()
    import torch
    torch.set_num_threads(1)
    with open(os.path.join(a.zoo, "pt2_manifest.json")) as f:
        manifest = json.load(f)
    names = [n for n, e in manifest.items() if e.get("exported") and e.get("torchscript") == n + ".pt"]
    if a.models:
        want = a.models.split(",")
        unknown = sorted(set(want) - set(names))
        if unknown:
            raise SystemExit(f"pt2_vs_torchscript: no PT2 export with a TorchScript twin for {', '.join(unknown)} "
                             f"(known: {', '.join(names)})")
        names = [n for n in names if n in want]
    results = {}
    for name in names:
        row = measure(a.zoo, name, a.rounds, a.iters)
        if not a.no_memory:
            for fmt, suffix in FORMATS.items():
                row[fmt]["memory"] = peak_rss(os.path.join(a.zoo, name + suffix),
                                              os.path.join(a.zoo, f"{name}.inputs.pt"), a.memory_iters)
        results[name] = row
        print(f"{name}: " + "  ".join(f"{f} {_fmt_us(row[f]['p50_us'])} us ({row[f]['ratio_to_torchscript']:.2f}) "
                                      f"fallback={row[f]['kernels']['fallback']}" for f in FORMATS), flush=True)
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    settings = {
        "date": datetime.date.today().isoformat(), "cpu": f"{cpu}, {os.cpu_count()} CPUs", "torch": torch.__version__,
        "env": dict(fixed.SETTINGS_ENV), "rounds": a.rounds, "iters": a.iters,
        "method": f"Module.benchmark in rotating order, {a.rounds} rounds x {a.iters} inferences, 1 thread, "
                  f"glibc tunables; peak RSS: one process per model and format, {a.memory_iters} inferences.",
    }
    os.makedirs(a.out, exist_ok=True)
    stem = os.path.join(a.out, f"pt2-vs-torchscript-{settings['date']}")
    with open(stem + ".json", "w") as f:
        json.dump({"settings": settings, "results": results}, f, indent=1)
    with open(stem + ".md", "w") as f:
        f.write(markdown(results, settings))
    print(f"wrote {stem}.md and .json")


if __name__ == "__main__":
    main()
