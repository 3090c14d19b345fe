"""One case, start to end: build every selected executor on the case's inputs, check each
output against the reference, add brisk's C++ loop, time them all in rotating rounds, and
summarise the case as the JSON record's `results` entry (the keys the report, the chart
and tests/python/compare_smoke_test.py read)."""
import collections
import gc
import statistics

from . import cases, executors, outputs, timing
from .errors import one_line
from .executors import LABELS, OTHER_RUNTIMES, OUTPUT_REFERENCE, REDUCED_EXECUTORS, REFERENCE


def run_case(case, zoo, opts, log, workdir):
    args, kwargs = cases.load_inputs(zoo, case)
    execs = []
    for n in opts.executor_list:
        execs.append(executors.make_executor(n, zoo, case, args, kwargs, workdir))
        if execs[-1].fn is not None and n in OTHER_RUNTIMES:
            log(f"  {n}: built in {execs[-1].load_s:.1f} s")
    by_name = {e.name: e for e in execs}
    ref = by_name[REFERENCE]
    if ref.fn is None:
        raise SystemExit(f"compare: the interpreter cannot load {case.model}: {ref.error}")
    out_ref = by_name[OUTPUT_REFERENCE] if by_name[OUTPUT_REFERENCE].fn is not None else ref
    with out_ref.grad_ctx():
        expected = out_ref.fn()
    live = []
    for e in execs:
        if e.fn is None:
            log(f"  {e.name}: not available ({e.error})")
            continue
        try:
            kind = REDUCED_EXECUTORS.get(e.name)
            want, what = expected, "eager fp32"
            if kind == "int8_static":
                want = cases.int8_static_reference(zoo, case, args, kwargs)
                what = "the fp32 model it was quantized from"
            outputs.judge(e, want, what, kind)
        except Exception as ex:  # noqa: BLE001
            e.error = one_line(ex)
            log(f"  {e.name}: fails on the inputs ({e.error})")
            continue
        live.append(e)
    if "brisk" in by_name and by_name["brisk"] in live:
        cpp = executors.cpp_executor(by_name["brisk"], args, kwargs)
        execs.append(cpp)
        live.append(cpp)

    timing.time_rounds(live, opts)

    result = collections.OrderedDict()
    result["model"] = case.model
    result["batch"] = case.batch
    result["inputs"] = f"{case.model}.{case.inputs}.pt"
    result["executors"] = collections.OrderedDict()
    for e in execs:
        result["executors"][e.name] = _executor_record(e, e in live, ref if ref in live else None)
    result["output_reference"] = out_ref.name
    result["best_other"] = timing.best_other(result["executors"])
    result["pt2_ratio"] = timing.pt2_ratio(result["executors"])
    if "brisk" in by_name and by_name["brisk"] in live:
        result["brisk_stats"] = by_name["brisk"].keep[0].stats()
    del execs, live, by_name, ref
    gc.collect()
    return result


def _executor_record(e, live, ref):
    """An executor's entry in the case's record; timing keys only for one that ran, ratios
    to the interpreter `ref` round by round (empty when the interpreter did not run)."""
    d = collections.OrderedDict(label=LABELS[e.name], available=live, error=e.error, load_s=round(e.load_s, 3))
    if e.note:
        d["source"] = e.note
    if e.caveats:
        d["caveats"] = e.caveats
    if live:
        ratios = [p / q for p, q in zip(e.round_p50, ref.round_p50)] if ref is not None else []
        d.update(
            iters=len(e.samples),
            p50_us=statistics.median(e.samples),
            p90_us=timing.percentile(e.samples, 90),
            mean_us=statistics.fmean(e.samples),
            min_us=min(e.samples),
            round_p50_us=e.round_p50,
            ratio_rounds=ratios,
            ratio=statistics.median(ratios) if ratios else None,
            agrees=e.agrees,
            max_abs_diff=e.max_abs_diff,
        )
    return d
