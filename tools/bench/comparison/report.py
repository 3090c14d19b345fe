"""The report: the Markdown (method, executors, the latency table with its footnotes,
build times, peak memory) and the files written: compare-<date>[-quick].{md,json,png},
and for full runs latest.* too. The JSON is the run's record (results, machine,
settings, options); the Markdown and the chart are made from it alone."""
import collections
import json
import os
import shutil

from . import chart
from .executors import DESCRIPTIONS, EXECUTORS, LABELS, shown_executors
from .outputs import ATOL, RTOL
from .settings import MALLOC_DEFAULT, MALLOC_TUNED, SETTINGS_ENV


def fmt_s(x):
    return f"{x:.2f}" if x < 10 else f"{x:.0f}"


def fmt_us(x):
    return "—" if x is None else (f"{x:.0f}" if x >= 100 else f"{x:.1f}")


def _footnotes():
    """Numbers footnotes in order of first use; the same text keeps its number."""
    notes = collections.OrderedDict()

    def mark(text):
        if text not in notes:
            notes[text] = len(notes) + 1
        return f"[{notes[text]}]"
    return notes, mark


def _latency_cell(e, mark):
    if not e["available"]:
        return "n/a" + (mark(f"{e['label']}: {e['error']}") if e.get("error") else "")
    ratio = e.get("ratio")
    cell = f"{fmt_us(e['p50_us'])} ({ratio:.2f})" if ratio is not None else fmt_us(e["p50_us"])
    return cell + "".join(mark(f"{e['label']}: {c}") for c in e.get("caveats", []))


def _agreement(r):
    bad = []
    for n in EXECUTORS:
        e = r["executors"].get(n)
        if e is None or not e["available"]:
            continue
        if not e["agrees"]:
            bad.append(f"{n} differs (max {e['max_abs_diff']:.3g})" if e["max_abs_diff"] is not None
                       else f"{n} differs (structure)")
    return "yes" if not bad else "; ".join(bad)


def _best_cells(r):
    b = r.get("best_other")
    if not b:
        return ["—", "—"]
    ratio = f"{b['brisk_ratio']:.2f}" if "brisk_ratio" in b else "—"
    return [f"{LABELS[b['name']]} ({fmt_us(b['p50_us'])})", ratio]


def _pt2_cell(r):
    p = r.get("pt2_ratio")
    return f"{p['ratio']:.2f}" if p else "—"


def _table(head):
    return ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]


def markdown(report):
    m, s, o = report["machine"], report["settings"], report["options"]
    shown = shown_executors(o.get("executors", EXECUTORS))
    lines = [f"# brisk vs PyTorch and other CPU runtimes — {report['date']}{' (quick)' if o['quick'] else ''}", ""]
    lines.append(f"Command: `bazel run //tools/bench:compare{' -- ' + ' '.join(o['argv']) if o['argv'] else ''}` "
                 f"(brisk at git {report['git']}).")
    lines.append("")
    lines.append(f"Machine: {m['cpu']} ({', '.join(m['cpu_flags'])}), {m['nproc']} CPUs (nproc), "
                 f"{m.get('memory_gib', '?')} GiB RAM; {m['os']}, Linux {m['kernel']}; "
                 f"PyTorch {m['torch']} from PyPI ({', '.join(f'{k} {v}' for k, v in m.get('kernels', {}).items())}), "
                 f"Python {m['python']}.")
    lines.append("")
    if report.get("versions"):
        lines.append("Runtimes: " + ", ".join(f"{k} {v}" for k, v in report["versions"].items()) + ".")
        lines.append("")
    lines.append("Settings: " + ", ".join(f"{k}={v}" for k, v in s.items()) + ".")
    lines.append("")
    lines.append(f"Load average (1/5/15 min) at start: {report.get('loadavg_start', '?')}, "
                 f"at end: {report.get('loadavg_end', '?')}.")
    lines.append("")
    lines.append(f"Method: {o['rounds']} rounds; each round times a ~{o['seconds'] * 1e3:.0f} ms block per executor "
                 "(at least "
                 f"{o['min_iters']} inferences) in an order that rotates every round, after warm-up; all executors "
                 "run in one process, on one thread each, and are called from Python on the same input tensors. "
                 "Outputs are checked against eager PyTorch's "
                 f"(allclose rtol={RTOL:g}, atol={ATOL:g}) before timing. Random weights.")
    lines.append("")
    mode = o.get("inductor_mode", "max-autotune-no-cudagraphs")
    lines.append("Executors:")
    lines.append("")
    for n in shown:
        if n in DESCRIPTIONS:
            text = DESCRIPTIONS[n].replace("MODE", repr(mode)).replace(
                "MAX", str(mode == "max-autotune-no-cudagraphs"))
            lines.append(f"- *{LABELS[n]}*: {text}.")
    lines.append("")
    lines += _latency_section(report, shown)
    lines += _build_time_section(report, shown)
    if any("memory" in r for r in report["results"]):
        lines += _memory_section(report, shown)
    if report.get("chart"):
        lines += ["", f"![latency relative to the best other runtime, and memory]({report['chart']})"]
    lines.append("")
    return "\n".join(lines)


def _latency_section(report, shown):
    lines = ["## Latency", ""]
    lines.append("Median µs per inference; in parentheses, the median of per-round ratios to the interpreter's "
                 "latency (below 1 = faster than the interpreter). *brisk, C++ loop*: the same brisk Module timed by "
                 "`Module.benchmark` in the same rotation (no Python call per inference). *best other runtime*: the "
                 "fastest executor other than brisk whose outputs agree; *brisk / best other*: the median of "
                 "per-round ratios of brisk's (Python-called) latency to it (below 1 = brisk leads); *brisk (PT2) / "
                 "ep.module()*: the same for brisk and ep.module() on the same PT2 archive. [n]: notes below "
                 "the table.")
    lines.append("")
    notes, mark = _footnotes()
    pt2_col = "brisk_pt2" in shown and "ep_module" in shown
    head = ["model", "batch"] + [LABELS[n] for n in shown] + ["best other runtime (µs)", "brisk / best other"] + (
        ["brisk (PT2) / ep.module()"] if pt2_col else []) + ["outputs agree"]
    lines += _table(head)
    for r in report["results"]:
        row = [r["model"], str(r["batch"])]
        for n in shown:
            row.append(_latency_cell(r["executors"].get(n, {"available": False, "label": LABELS[n]}), mark))
        row += _best_cells(r) + ([_pt2_cell(r)] if pt2_col else []) + [_agreement(r)]
        lines.append("| " + " | ".join(row) + " |")
    if notes:
        lines += [""] + [f"[{k}] {text}" + ("" if text.endswith(".") else ".") + "  " for text, k in notes.items()]
    return lines


def _build_time_section(report, shown):
    lines = ["", "## Build time", ""]
    lines.append("Seconds from the .pt (or the model's source) to a callable, in the timing process: loading, "
                 "freezing, exporting, converting, compiling, and for Inductor its first call (where it compiles); "
                 "Inductor's cache starts empty.")
    lines.append("")
    built = [n for n in shown if n != "brisk_cpp"]
    lines += _table(["model", "batch"] + [LABELS[n] for n in built])
    for r in report["results"]:
        row = [r["model"], str(r["batch"])]
        for n in built:
            e = r["executors"].get(n)
            row.append("—" if e is None else fmt_s(e["load_s"]) + ("" if e["available"] else " (failed)"))
        lines.append("| " + " | ".join(row) + " |")
    return lines


def _memory_section(report, shown):
    o = report["options"]
    lines = ["", "## Peak memory", ""]
    lines.append(f"Peak RSS increase over the loaded model, MiB: one process per executor loads (and builds) the "
                 f"model and inputs, resets the peak (`echo 5 > /proc/self/clear_refs`), runs {o['memory_iters']} "
                 "inferences and reads VmHWM. Measured twice: with the timing's fixed glibc tunables, and with "
                 "glibc's default malloc (other runtimes' arenas behave differently from PyTorch's allocator "
                 "under the tunables). The processes reuse the timing process's ONNX files, AOTInductor packages "
                 "and Inductor cache.")
    built = [n for n in shown if n != "brisk_cpp"]
    for malloc, title in ((MALLOC_TUNED, f"GLIBC_TUNABLES={SETTINGS_ENV['GLIBC_TUNABLES']}"),
                          (MALLOC_DEFAULT, "glibc's default malloc (GLIBC_TUNABLES unset)")):
        lines += ["", f"### {title}", ""]
        lines += _table(["model", "batch"] + [LABELS[n] for n in built])
        for r in report["results"]:
            per = r.get("memory", {}).get(malloc)
            if per is None:
                continue
            row = [r["model"], str(r["batch"])]
            for n in built:
                mm = per.get(n, {})
                row.append(f"+{mm['peak_kib'] / 1024:.1f}" if "peak_kib" in mm else "n/a")
            lines.append("| " + " | ".join(row) + " |")
    return lines


def write(report, out, quick, log):
    """Writes the chart, JSON and Markdown under `out`; returns (stem path, Markdown).
    --quick writes compare-<date>-quick.* and leaves latest.* alone."""
    os.makedirs(out, exist_ok=True)
    stem = f"compare-{report['date']}{'-quick' if quick else ''}"
    png = os.path.join(out, stem + ".png")
    try:
        chart.chart(report, png)
        report["chart"] = os.path.basename(png)
    except Exception as ex:  # noqa: BLE001 - the table is still worth writing
        log(f"chart: not written ({type(ex).__name__}: {ex})")
    with open(os.path.join(out, stem + ".json"), "w") as f:
        json.dump(report, f, indent=1)
        f.write("\n")
    md = markdown(report)
    with open(os.path.join(out, stem + ".md"), "w") as f:
        f.write(md)
    if not quick:
        for ext in (".md", ".json", ".png"):
            if os.path.exists(os.path.join(out, stem + ext)):
                shutil.copyfile(os.path.join(out, stem + ext), os.path.join(out, "latest" + ext))
        # latest.md shows the chart under its own name.
        with open(os.path.join(out, "latest.md"), "w") as f:
            f.write(md.replace(f"]({stem}.png)", "](latest.png)"))
    return os.path.join(out, stem), md
