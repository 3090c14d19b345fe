"""PT2 differential test: random torch.export programs (pt2_gen.py), brisk against ep.module().

Program i of a run is pt2_gen.generate(BASE, i). Each is exported with its dynamic
shapes (shared dim b, derived b + 1, a second dim c, min/max ranges), in both IRs the zoo
ships (the export IR and run_decompositions()' core ATen IR), saved with
torch.export.save, and run by brisk in a forked child (sandbox.py) per option set:

  - main inputs, the same again, inputs at a second valid size, then the main inputs once
    more after the violations below: outputs equal ep.module()'s (pytree structure,
    namedtuple names and fields, dtypes, shapes; floats within a tolerance scaled to the
    reference's magnitude, verdict.first_difference), inputs left unchanged;
  - inputs that break one constraint (b above max / below min, a shared dim that differs,
    a derived dim that is not b + 1, a static dim): where ep.module() refuses them, brisk
    must raise a one-line brisk.Error (and go on working: the last run above).

A crash, hang, load error or wrong result is a failure that prints the seed, the IR, the
option set and the program's source. One JUnit case per (IR, option set) plus one
checking the generator (every program exports in both IRs and ep.module() runs it).

Environment (all optional):
  BRISK_PT2_DIFF_SEED   base seed (default 1)
  BRISK_PT2_DIFF_COUNT  programs per run (default 6; e.g. 200 for a long run by hand)
  BRISK_PT2_DIFF_CASE   only these program indices: "17", "3,17,40-45"

Run one program outside Bazel (after `bazel build //python:brisk`):
  BRISK_PT2_DIFF_CASE=5 PYTHONPATH=bazel-bin/python/site \\
      /opt/brisk/venv/bin/python3 tests/differential/pt2_differential_test.py
  python3 tests/differential/pt2_gen.py 1 5          # just print its source
"""
import importlib.util
import os
import sys
import tempfile
import unittest
import warnings

os.environ.setdefault("OMP_NUM_THREADS", "1")
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "python"))  # junit.py, outside Bazel

import torch  # noqa: E402

import brisk  # noqa: E402
import junit  # noqa: E402
from differential_test import _indices  # noqa: E402
from pt2_gen import generate, make_inputs, violations  # noqa: E402
from sandbox import _send, clone, run_brisk_sets  # noqa: E402
from verdict import first_difference, is_clear_message  # noqa: E402

torch.set_num_threads(1)  # and no other threads: the test forks (sandbox.py)
warnings.filterwarnings("ignore")  # export's deprecation and guard chatter

IRS = ("export", "core")
OPTION_SETS = {
    "default": {},
    "no_native": {"use_native": False},
    "parallel": {"max_parallel_ops": 2},
}
BASE = int(os.environ.get("BRISK_PT2_DIFF_SEED", "1"))
INDICES = _indices(os.environ.get("BRISK_PT2_DIFF_CASE", ""), int(os.environ.get("BRISK_PT2_DIFF_COUNT", "6")))
# Programs the generator makes that brisk gets wrong, left out of the fixed budget until
# the bug is fixed (the report of the change that added this test describes each):
# {(base, index): "what brisk does"}. Run one anyway with BRISK_PT2_DIFF_CASE.
KNOWN_BAD = {}
WORKDIR = tempfile.mkdtemp(prefix="brisk_pt2_diff_", dir=os.environ.get("TEST_TMPDIR"))

# Valid runs: (tag, which sizes); "after" runs the main inputs once the violations
# were refused (a refused call leaves the module usable).
VALID_RUNS = (("main", "main"), ("again", "main"), ("alt", "alt"))


def normalize(v):
    """Outputs in a form that pickles and compares: brisk builds its own namedtuple
    classes (same name and fields as torch's), so a namedtuple becomes a dict naming them."""
    if isinstance(v, tuple) and hasattr(v, "_fields"):
        return {"namedtuple": type(v).__name__, "fields": tuple(v._fields), "values": tuple(normalize(e) for e in v)}
    if isinstance(v, (list, tuple)):
        return type(v)(normalize(e) for e in v)
    if isinstance(v, dict):
        return {k: normalize(e) for k, e in v.items()}
    return v


class Exported:
    """One program: its module namespace, exported programs and saved archives per IR,
    ep.module()'s outputs per run and the violations ep.module() refuses."""

    def __init__(self, program):
        self.program = program
        self.problem = None   # a generator problem (does not export / run in ep.module())
        self.paths = {}
        self.ref = {}         # ir -> {tag: normalized output}
        self.refused = {}     # ir -> [violation names ep.module() refuses]
        self.outcomes = {}    # (ir, option set) -> list of failure strings
        self.torch_limit = None  # torch.export failed inside dynamo on a valid program
        try:
            self._export()
        except Exception as e:  # noqa: BLE001 -- reported as a generator problem with the source
            msg = f"{type(e).__name__}: {str(e)[:2000]}"
            if type(e).__name__ == "InternalTorchDynamoError":
                self.torch_limit = msg
            else:
                self.problem = msg

    def _export(self):
        p = self.program
        name = f"pt2_{p.seed[0]}_{p.seed[1]}"
        py = os.path.join(WORKDIR, name + ".py")
        with open(py, "w") as f:
            f.write(p.source())
        spec = importlib.util.spec_from_file_location(name, py)
        self.ns = importlib.util.module_from_spec(spec)
        sys.modules[name] = self.ns  # pickle (the child's results) finds classes by module name
        spec.loader.exec_module(self.ns)
        main = make_inputs(p, self.ns, p.sizes["main"], "main")
        ep = torch.export.export(self.ns.Program().eval(), main, dynamic_shapes=self.ns.dynamic_shapes())
        eps = {"export": ep, "core": ep.run_decompositions()}
        for ir, e in eps.items():
            path = os.path.join(WORKDIR, f"{name}.{ir}.pt2")
            torch.export.save(e, path)
            self.paths[ir] = path
            mod = e.module()
            self.ref[ir] = {tag: normalize(mod(*self.inputs(which, tag))) for tag, which in VALID_RUNS}
            self.ref[ir]["after"] = normalize(mod(*self.inputs("main", "after-violations")))
            self.refused[ir] = []
            for vname, sizes, override in violations(p):
                try:
                    mod(*make_inputs(p, self.ns, sizes, vname, override))
                except Exception:  # noqa: BLE001 -- any refusal by the reference's guards
                    self.refused[ir].append(vname)
            if "b above max" not in self.refused[ir]:
                raise AssertionError(f"{ir}: ep.module() accepts b = {p.b_range[1] + 1}, above the range")

    def inputs(self, which, tag):
        return make_inputs(self.program, self.ns, self.program.sizes[which], tag)

    def violation_inputs(self, ir):
        return [(v, make_inputs(self.program, self.ns, s, v, o)) for v, s, o in violations(self.program)
                if v in self.refused[ir]]


def _child(fd, path, case, options):
    """In the forked child: load, the valid runs, the refused violations, one more run."""
    ir = "core" if path.endswith(".core.pt2") else "export"
    try:
        m = brisk.load(path, **options)
    except Exception as e:  # noqa: BLE001 -- every kind is reported to the parent
        _send(fd, ("load_error", f"{type(e).__module__}.{type(e).__name__}: {e}"))
        return
    held = []
    runs = [(tag, case.inputs(which, tag)) for tag, which in VALID_RUNS]
    for tag, args in runs:
        before = clone(args)
        try:
            out = m(*args)
        except Exception as e:  # noqa: BLE001
            _send(fd, ("fail", f"run {tag!r} raised {type(e).__name__}: {e}"))
            continue
        _send(fd, ("run", tag, normalize(out)))
        held.append((tag, out, clone(normalize(out))))
        d = first_difference(args, before, "inputs")
        if d:
            _send(fd, ("fail", f"run {tag!r} changed its inputs: {d}"))
    for vname, args in case.violation_inputs(ir):
        try:
            out = m(*args)
            _send(fd, ("fail", f"violation '{vname}': ep.module() refuses it, brisk returned "
                               f"{str(normalize(out))[:200]}"))
        except brisk.Error as e:
            if not is_clear_message(str(e)):
                _send(fd, ("fail", f"violation '{vname}': brisk.Error is not one clear line: {str(e)!r}"))
        except Exception as e:  # noqa: BLE001
            _send(fd, ("fail", f"violation '{vname}': raised {type(e).__name__}, not brisk.Error: {e}"))
    try:
        _send(fd, ("run", "after", normalize(m(*case.inputs("main", "after-violations")))))
    except Exception as e:  # noqa: BLE001
        _send(fd, ("fail", f"run after the violations raised {type(e).__name__}: {e}"))
    for tag, out, copy in held:  # outputs the caller still holds are not overwritten
        d = first_difference(normalize(out), copy, f"held output of run {tag!r}")
        if d:
            _send(fd, ("fail", d))


def judge(case, ir, events):
    failures = []
    ref = case.ref[ir]
    for ev in events:
        if ev[0] == "load_error":
            failures.append(f"load: {ev[1]}")
        elif ev[0] == "fail":
            failures.append(ev[1])
        elif ev[0] == "run":
            tag, got = ev[1], ev[2]
            d = first_difference(got, ref[tag], f"run {tag!r}")
            if d:
                failures.append(d)
        elif ev[0] == "exit" and ev[1][0] != "ok":
            failures.append(f"brisk child ended with {ev[1]}")
    return failures


_cache = {}


def cases():
    if "all" not in _cache:
        out = []
        for i in INDICES:
            if (BASE, i) in KNOWN_BAD and not os.environ.get("BRISK_PT2_DIFF_CASE"):
                print(f"[skipped] seed {(BASE, i)}: known brisk bug: {KNOWN_BAD[(BASE, i)]}")
                continue
            case = Exported(generate(BASE, i))
            out.append(case)
            if case.problem:
                print(f"[generator] seed {case.program.seed}: {case.problem}")
                continue
            if case.torch_limit:
                print(f"[torch.export] seed {case.program.seed}: not exported, skipped: {case.torch_limit[:300]}")
                continue
            for ir in IRS:
                events = run_brisk_sets(case.paths[ir], case, list(OPTION_SETS.items()), child=_child)
                for opt, evs in events.items():
                    f = judge(case, ir, evs)
                    case.outcomes[(ir, opt)] = f
                    if f:
                        print(f"[FAIL] seed {case.program.seed} ir {ir} options {opt}: " + "; ".join(f))
                        print(f"--- source of seed {case.program.seed} ---\n{case.program.source()}--- end ---")
                        sys.stdout.flush()
        _cache["all"] = out
    return _cache["all"]


def _rerun_hint(seed):
    return (f"rerun: bazel test //tests/differential:pt2_differential_test --test_output=all "
            f"--test_env=BRISK_PT2_DIFF_SEED={seed[0]} --test_env=BRISK_PT2_DIFF_CASE={seed[1]}")


class Pt2Differential(unittest.TestCase):
    """test_<ir>__<option set>: brisk equals ep.module() and refuses what it refuses;
    test_generator: every program exports in both IRs and runs in ep.module()."""

    def test_generator(self):
        bad = [c for c in cases() if c.problem]
        self.assertFalse(bad, "the generator made programs torch.export or ep.module() reject (a bug in "
                         "pt2_gen.py):\n" + "\n".join(f"seed {c.program.seed}: {c.problem}\n{c.program.source()}"
                                                     for c in bad))

    def test_most_programs_export(self):
        # torch.export's own internal errors on some valid combinations (a torch.cond after
        # two while_loops over shared dims, seed (1, 30)) skip a program; a generator that
        # drifts into them would test nothing.
        skipped = [c for c in cases() if c.torch_limit]
        self.assertLessEqual(len(skipped), len(cases()) // 4, "torch.export failed inside dynamo on: " + "\n".join(
            f"seed {c.program.seed}: {c.torch_limit[:300]}\n{c.program.source()}" for c in skipped))

    def test_constraints_are_exercised(self):
        # Every program's range and static-dim violations reach brisk, and over the
        # fixed budget (6 programs and more) the shared and derived dims do too:
        # otherwise the refusal checks test nothing.
        ran = [c for c in cases() if not c.problem and not c.torch_limit]
        if not ran:
            self.skipTest("no programs exported")
        kinds = {v.split(":")[0] for c in ran for v in c.refused["export"]}
        wanted = ["b above max", "static dim"]
        if len(INDICES) >= 6 and not os.environ.get("BRISK_PT2_DIFF_CASE"):
            wanted += ["b below min", "shared dim b", "derived dim b + 1"]
        for k in wanted:
            self.assertIn(k, kinds, f"no program had its '{k}' violation refused by ep.module()")


def _case_test(ir, optset):
    def test(self):
        failed = [c for c in cases() if c.outcomes.get((ir, optset))]
        ran = [c for c in cases() if (ir, optset) in c.outcomes]
        if not ran:
            self.skipTest("no programs ran")
        self.assertFalse(failed, f"{len(failed)} of {len(ran)} programs fail in IR {ir} under options "
                         f"{OPTION_SETS[optset]}:\n" + "\n".join(
                             f"=== seed {c.program.seed}: " + "; ".join(c.outcomes[(ir, optset)])
                             + f"\n{_rerun_hint(c.program.seed)}\n{c.program.source()}" for c in failed))
    return test


for _ir in IRS:
    for _opt in OPTION_SETS:
        setattr(Pt2Differential, f"test_{_ir}__{_opt}", _case_test(_ir, _opt))


if __name__ == "__main__":
    print(f"brisk PT2 differential test: base seed {BASE}, {len(INDICES)} programs, IRs {IRS}, "
          f"option sets {list(OPTION_SETS)}")
    junit.main("pt2_differential_test")
