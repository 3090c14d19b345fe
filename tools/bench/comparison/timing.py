"""Timing: blocks of ~--seconds per executor, in an order that rotates every round (so no
executor always runs right after the same neighbour, or first), after a warm-up; then
per-round ratios, which cancel the machine's drift over a run better than ratios of
medians would."""
import collections
import gc
import statistics
import time

from .executors import OTHERS


def time_block(e, seconds, min_iters):
    """At least min_iters inferences and ~seconds of them: their latencies in µs."""
    if e.block is not None:
        return e.block(seconds, min_iters)
    samples = []
    gc_was = gc.isenabled()
    gc.disable()  # a collection inside a block would be charged to whoever runs then
    try:
        with e.grad_ctx():
            start = time.perf_counter()
            while len(samples) < min_iters or time.perf_counter() - start < seconds:
                t0 = time.perf_counter_ns()
                e.fn()
                samples.append((time.perf_counter_ns() - t0) / 1e3)
    finally:
        if gc_was:
            gc.enable()
    return samples


def time_rounds(live, opts):
    """Warm-up, then opts.rounds rotating rounds: fills each executor's samples and
    round_p50."""
    for e in live:  # warm-up: profiling executors optimise after a few runs
        time_block(e, opts.warmup_seconds, opts.warmup_iters)
    for r in range(opts.rounds):
        k = r % len(live)
        for e in live[k:] + live[:k]:
            block = time_block(e, opts.seconds, opts.min_iters)
            e.samples.extend(block)
            e.round_p50.append(statistics.median(block))


def percentile(xs, q):
    xs = sorted(xs)
    if not xs:
        return float("nan")
    pos = q / 100 * (len(xs) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def best_other(executors):
    """The fastest executor other than brisk whose outputs agree (a runtime that computes
    something else is not an alternative), and brisk's latency ratio to it: the median of
    per-round ratios, like the ratios to the interpreter."""
    cands = [(d["p50_us"], n) for n, d in executors.items()
             if n in OTHERS and d["available"] and d.get("agrees")]
    if not cands:
        return None
    p50, name = min(cands)
    out = collections.OrderedDict(name=name, p50_us=p50)
    b = executors.get("brisk", {})
    if b.get("available"):
        rounds = [x / y for x, y in zip(b["round_p50_us"], executors[name]["round_p50_us"])]
        out["brisk_ratio_rounds"] = rounds
        out["brisk_ratio"] = statistics.median(rounds)
    return out


def pt2_ratio(executors):
    """brisk (PT2) against ep.module() on the same archive: the median of per-round
    latency ratios (below 1 = brisk faster), or None unless both ran."""
    b, m = executors.get("brisk_pt2", {}), executors.get("ep_module", {})
    if not (b.get("available") and m.get("available")):
        return None
    rounds = [x / y for x, y in zip(b["round_p50_us"], m["round_p50_us"])]
    return collections.OrderedDict(ratio=statistics.median(rounds), ratio_rounds=rounds)
