"""The PNG: each executor's latency relative to the best other runtime per case (log axis,
brisk outlined), and below it each executor's peak memory under the fixed tunables.
Colours come from the registry, so every executor that can be shown has one."""
from .executors import COLORS, EXECUTORS, LABELS, shown_executors
from .settings import MALLOC_TUNED


def _headroom(ax):
    """Room above the tallest bar (log axis) for the legend, which would hide it."""
    lo, hi = ax.get_ylim()
    ax.set_ylim(lo, hi * (hi / lo) ** 0.45)


def chart(report, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    results = report["results"]
    labels = [f"{r['model']}\nb{r['batch']}" for r in results]
    shown = shown_executors(report["options"].get("executors", EXECUTORS))
    has_mem = any("memory" in r for r in results)
    fig, axes = plt.subplots(2 if has_mem else 1, 1, figsize=(max(9, 1.3 * len(results) + 2), 10 if has_mem else 5),
                             squeeze=False)
    width = 0.84 / len(shown)
    ax = axes[0][0]
    for i, n in enumerate(shown):
        xs, ys = [], []
        for j, r in enumerate(results):
            e = r["executors"].get(n, {"available": False})
            b = r.get("best_other")
            if e["available"] and b:
                xs.append(j - 0.42 + width * (i + 0.5))
                ys.append(e["p50_us"] / b["p50_us"])
        ax.bar(xs, ys, width, label=LABELS[n], color=COLORS[n],
               edgecolor="black" if n == "brisk" else None, linewidth=0.8 if n == "brisk" else 0)
    ax.axhline(1.0, color="black", linewidth=1.0, label="best other runtime = 1")
    ax.set_yscale("log")
    _headroom(ax)
    ax.set_xticks(range(len(results)))
    ax.set_xticklabels(labels, fontsize=8)
    ax.set_ylabel("latency / best other runtime's\n(log; brisk below 1 = brisk leads)")
    ax.set_title(f"Latency relative to the fastest runtime other than brisk — {report['machine']['cpu']}, 1 thread, "
                 f"{report['date']}", fontsize=10)
    ax.legend(fontsize=7, ncol=5)
    ax.grid(axis="y", alpha=0.3, which="both")
    if has_mem:
        ax = axes[1][0]
        built = [n for n in shown if n != "brisk_cpp"]
        width = 0.84 / len(built)
        for i, n in enumerate(built):
            xs, ys = [], []
            for j, r in enumerate(results):
                mm = r.get("memory", {}).get(MALLOC_TUNED, {}).get(n, {})
                if "peak_kib" in mm:
                    xs.append(j - 0.42 + width * (i + 0.5))
                    ys.append(max(mm["peak_kib"] / 1024, 0.05))  # log axis: show ~0 as a stub
            ax.bar(xs, ys, width, label=LABELS[n], color=COLORS[n])
        ax.set_yscale("log")
        _headroom(ax)
        ax.set_xticks(range(len(results)))
        ax.set_xticklabels(labels, fontsize=8)
        ax.set_ylabel("peak RSS increase over\nthe loaded model (MiB, log)")
        ax.set_title("Peak memory per executor (separate process each, fixed glibc tunables)", fontsize=10)
        ax.legend(fontsize=7, ncol=5)
        ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
