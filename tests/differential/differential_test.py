"""Differential test: random TorchScript programs, brisk against the TorchScript interpreter.

Program i of a run is generate(BASE, i) (program_gen.py). Each is scripted, saved, run
three times by the interpreter (main inputs, the same again, inputs of other sizes) and
then, per option set in OPTION_SETS, loaded and run the same three times by brisk in a
forked child (sandbox.py). verdict.py compares outputs, printed text (fd 1), and the
inputs afterwards. One JUnit case per (program family, option set), plus one per family
checking the generator itself (every program compiles, runs, and is deterministic).

Environment (all optional):
  BRISK_DIFF_SEED     base seed (default 1)
  BRISK_DIFF_COUNT    programs per run (default 350: 50 per family)
  BRISK_DIFF_CASE     only these program indices: "17", "3,17,40-45"
  BRISK_DIFF_OPTIONS  only these option sets: "default,fallback_only"
  BRISK_DIFF_SHRINK   0: do not minimise failing programs (default: a time-capped greedy pass)

Run one case outside Bazel (after `bazel build //python:brisk`):
  BRISK_DIFF_SEED=1 BRISK_DIFF_CASE=17 PYTHONPATH=bazel-bin/python/site \
      /opt/brisk/venv/bin/python3 tests/differential/differential_test.py
"""
import os
import sys
import tempfile
import time
import unittest
import warnings

os.environ.setdefault("OMP_NUM_THREADS", "1")
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "python"))  # junit.py, outside Bazel

import torch  # noqa: E402

import junit  # noqa: E402
from program_gen import FAMILIES, generate  # noqa: E402
from sandbox import CompileError, compile_program, run_brisk_sets, run_reference  # noqa: E402
from shrink import shrink  # noqa: E402
from verdict import first_difference, judge  # noqa: E402

torch.set_num_threads(1)  # and no other threads: the test forks (sandbox.py)
warnings.filterwarnings("ignore", category=FutureWarning)  # torch.jit.script/save are "deprecated"

OPTION_SETS = {
    "default": {},
    "fallback_only": {"fallback_only": True},
    "no_native": {"use_native": False},
    "no_out_variants": {"use_out_variants": False},
    "parallel": {"max_parallel_ops": 2},
    "managed_outputs": {"manage_output_tensors": True},
}
SHRINK_TOTAL_S = 45.0  # over the whole run: shrinking one program takes a few seconds
SHRINK_EACH_S = 10.0
SOURCES_PER_CASE = 3  # full sources in a JUnit message (all are in the log)


def _indices(spec, count):
    if not spec:
        return list(range(count))
    out = []
    for part in spec.split(","):
        a, _, b = part.partition("-")
        out += list(range(int(a), int(b) + 1)) if b else [int(a)]
    return out


BASE = int(os.environ.get("BRISK_DIFF_SEED", "1"))
INDICES = _indices(os.environ.get("BRISK_DIFF_CASE", ""), int(os.environ.get("BRISK_DIFF_COUNT", "350")))
SELECTED = [s for s in os.environ.get("BRISK_DIFF_OPTIONS", ",".join(OPTION_SETS)).split(",") if s]
for _s in SELECTED:
    if _s not in OPTION_SETS:
        raise SystemExit(f"BRISK_DIFF_OPTIONS: unknown option set {_s!r} (have {', '.join(OPTION_SETS)})")
SHRINK = os.environ.get("BRISK_DIFF_SHRINK", "1") != "0"
WORKDIR = tempfile.mkdtemp(prefix="brisk_diff_", dir=os.environ.get("TEST_TMPDIR"))


class Case:
    """One program's results: generator problems, or an Outcome per option set."""

    def __init__(self, program):
        self.program = program
        self.generator_problem = None
        self.outcomes = {}


_cache = {}
_shrunk = {}
_shrink_spent = [0.0]


def family_cases(family):
    if family not in _cache:
        cases = []
        for i in INDICES:
            if FAMILIES[i % len(FAMILIES)] == family:
                cases.append(_run_one(generate(BASE, i)))
        _cache[family] = cases
    return _cache[family]


def _run_one(program):
    case = Case(program)
    try:
        sm, pt = compile_program(program, WORKDIR)
        ref = run_reference(sm, program)
    except CompileError as e:
        case.generator_problem = f"does not compile: {e}"
        return case
    except Exception as e:  # noqa: BLE001 -- the interpreter refused to run it
        case.generator_problem = f"interpreter raised {type(e).__name__}: {e}"
        return case
    d = first_difference(ref["again"]["out"], ref["main"]["out"])
    if d:
        case.generator_problem = f"not deterministic in the interpreter: {d}"
        return case
    if not program.mutates_inputs:
        for tag, r in ref.items():
            d = first_difference(r["inputs_after"], r["inputs_before"], "inputs")
            if d:
                case.generator_problem = f"mutates its inputs in the interpreter (run {tag!r}): {d}"
                return case
    events = run_brisk_sets(pt, program, [(name, OPTION_SETS[name]) for name in SELECTED])
    for name in SELECTED:
        case.outcomes[name] = judge(program, ref, events[name])
        out = case.outcomes[name]
        if out.status == "fail":
            _log_failure(case, name)
        elif out.status == "refused":
            print(f"[refused] seed {program.seed} family {program.family} options {name}: {out.detail}")
    return case


_logged = set()


def _log_failure(case, optset):
    p, out = case.program, case.outcomes[optset]
    print(f"[FAIL] seed {p.seed} family {p.family} options {optset} ({out.category}): {out.detail}")
    if p.seed not in _logged:  # the full source once per program
        _logged.add(p.seed)
        print(f"--- source of seed {p.seed} ---\n{p.source()}--- end of seed {p.seed} ---")
    sys.stdout.flush()


def _shrunk_source(case, optset):
    """A minimised program failing with this outcome's signature: shrunk once per
    signature in the whole run (the first program found with it), within SHRINK_TOTAL_S."""
    out = case.outcomes[optset]
    sig = out.signature
    if sig not in _shrunk:
        left = SHRINK_TOTAL_S - _shrink_spent[0]
        if not SHRINK or left <= 1.0:
            return None
        t0 = time.monotonic()
        small = shrink(case.program, OPTION_SETS[optset], sig, WORKDIR, min(SHRINK_EACH_S, left))
        _shrink_spent[0] += time.monotonic() - t0
        _shrunk[sig] = (f"# shrunk from seed {case.program.seed} under options {optset}; fails with: {sig}\n"
                        + small.source())
        print(f"--- shrunk in {time.monotonic() - t0:.1f} s ---\n{_shrunk[sig]}--- end ---")
    return _shrunk[sig]


def _rerun_hint(seed, optset):
    return (f"rerun: bazel test //tests/differential:differential_test --test_env=BRISK_DIFF_SEED={seed[0]} "
            f"--test_env=BRISK_DIFF_CASE={seed[1]} --test_env=BRISK_DIFF_OPTIONS={optset} --test_output=all")


def _family_optset_test(family, optset):
    def test(self):
        cases = [c for c in family_cases(family) if optset in c.outcomes]
        if not cases:
            self.skipTest(f"no {family} programs ran under {optset}")
        # Every generated program runs in the interpreter, and each option set only
        # changes how brisk runs a node, so refusing one at load (even with a clear
        # brisk.Error) is a failure too.
        failed = [c for c in cases if c.outcomes[optset].status in ("fail", "refused")]
        if not failed:
            return
        lines = [f"{len(failed)} of {len(cases)} {family} programs fail under options {optset} "
                 f"{OPTION_SETS[optset]}; seeds (base, index): "
                 + ", ".join(f"{c.program.seed} [{c.outcomes[optset].category}]" for c in failed)]
        for c in failed:
            lines.append(f"  seed {c.program.seed}: {c.outcomes[optset].signature}: {c.outcomes[optset].detail}")
        shown = set()
        for c in failed:  # one example per kind of failure
            sig = c.outcomes[optset].signature
            if sig in shown or len(shown) >= SOURCES_PER_CASE:
                continue
            shown.add(sig)
            lines.append(f"\n=== seed {c.program.seed} ({sig}); {_rerun_hint(c.program.seed, optset)}\n"
                         + c.program.source())
            small = _shrunk_source(c, optset)
            if small:
                lines.append(f"--- shrunk ---\n{small}")
        self.fail("\n".join(lines))
    return test


def _generator_test(family):
    def test(self):
        cases = family_cases(family)
        if not cases:
            self.skipTest(f"no {family} programs selected")
        bad = [c for c in cases if c.generator_problem]
        self.assertFalse(bad, "the generator made invalid programs (a bug in program_gen.py):\n" + "\n".join(
            f"seed {c.program.seed}: {c.generator_problem}\n{c.program.source()}" for c in bad))
    return test


class Differential(unittest.TestCase):
    """test_<family>__<option set>: brisk equals the interpreter on that family's
    programs; test_<family>__generator: those programs are valid and deterministic."""


for _family in FAMILIES:
    setattr(Differential, f"test_{_family}__generator", _generator_test(_family))
    for _optset in OPTION_SETS:
        if _optset in SELECTED:
            setattr(Differential, f"test_{_family}__{_optset}", _family_optset_test(_family, _optset))


if __name__ == "__main__":
    print(f"brisk differential test: base seed {BASE}, {len(INDICES)} programs, option sets {SELECTED}")
    junit.main("differential_test")
