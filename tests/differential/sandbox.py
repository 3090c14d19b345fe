"""Compiles a generated program, runs it in the TorchScript interpreter, and runs it in
brisk inside a forked child, so that a crash (SIGSEGV, an assert's SIGABRT) or a hang
becomes a result with the program's seed rather than the end of the test process.

The parent never calls brisk itself: brisk starts threads (its inter-op arena), and a
process that forks must not have any.
"""
import importlib.util
import os
import pickle
import select
import signal
import struct
import sys
import time

import torch
import brisk  # imported here, used only in children: loading its libraries costs ~50 ms a fork

from program_gen import make_inputs
from stdout_capture import capture_stdout  # tests/python

RUNS = (("main", "main"), ("again", "main"), ("alt", "alt"))  # (run tag, input set)


def clone(v):
    if isinstance(v, torch.Tensor):
        return v.clone()
    if isinstance(v, list):
        return [clone(e) for e in v]
    if isinstance(v, tuple):
        items = [clone(e) for e in v]
        return type(v)(*items) if hasattr(v, "_fields") else tuple(items)  # namedtuples stay named
    if isinstance(v, dict):
        return {k: clone(e) for k, e in v.items()}
    return v


class CompileError(Exception):
    pass


def compile_program(program, workdir, tag=""):
    """torch.jit.script + torch.jit.save. Returns (scripted module, path of the .pt)."""
    name = f"prog_{program.seed[0]}_{program.seed[1]}{tag}"
    py = os.path.join(workdir, name + ".py")
    with open(py, "w") as f:
        f.write(program.source())
    try:
        spec = importlib.util.spec_from_file_location(name, py)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        sm = torch.jit.script(mod.Program())
    except Exception as e:  # the program is not valid TorchScript
        raise CompileError(f"{type(e).__name__}: {e}") from None
    pt = os.path.join(workdir, name + ".pt")
    torch.jit.save(sm, pt)
    return sm, pt


def run_reference(sm, program):
    """{run tag: {out, stdout, inputs_after, inputs_before}} from the interpreter."""
    res = {}
    for tag, which in RUNS:
        before = make_inputs(program, which)
        args = clone(before)
        with torch.no_grad():
            out, printed = capture_stdout(lambda: sm(*args))
        res[tag] = dict(out=out, stdout=printed, inputs_after=args, inputs_before=before)
    return res


# --- brisk in a child process -------------------------------------------------------

def _send(fd, msg):
    data = pickle.dumps(msg)
    os.write(fd, struct.pack("<Q", len(data)))
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


def _child(fd, pt_path, program, options):
    _send(fd, ("stage", "load"))
    try:
        m = brisk.load(pt_path, **options)
    except Exception as e:
        _send(fd, ("load_error", type(e).__module__ + "." + type(e).__name__, str(e),
                   isinstance(e, brisk.Error)))
        return
    held = []
    for tag, which in RUNS:
        _send(fd, ("stage", tag))
        args = clone(make_inputs(program, which))
        try:
            out, printed = capture_stdout(lambda: m(*args))
        except Exception as e:
            _send(fd, ("run_error", tag, type(e).__module__ + "." + type(e).__name__, str(e),
                       isinstance(e, brisk.Error)))
            continue
        _send(fd, ("run", tag, dict(out=out, stdout=printed, inputs_after=args)))
        held.append((tag, out))
    # The caller still holds every earlier run's outputs: later runs must not have
    # written into them (output arenas, memory plans, in-place reuse).
    for tag, out in held:
        _send(fd, ("held", tag, out))
    _send(fd, ("stage", "done"))


def run_brisk(pt_path, program, options, timeout=60.0):
    """Events of one brisk load + runs in a forked child (see run_brisk_sets)."""
    return run_brisk_sets(pt_path, program, [("only", options)], timeout)["only"]


def run_brisk_sets(pt_path, program, option_sets, timeout=60.0, child=None):
    """{name: events} for each (name, options) of option_sets: one brisk load + the runs,
    ending with ("exit", status), status ("ok",), ("signal", name, stage), ("exit",
    code, stage) or ("timeout", stage).

    The option sets share one forked child (a fork of this process costs ~20 ms and its
    exit as much again, several times a load). After a crash the rest go on in a new
    child, and a crash under any but the child's first option set is re-run alone, so a
    crash is blamed on the option set that crashes by itself.

    child(fd, pt_path, program, options) runs in the child and sends the events
    (default: _child, the TorchScript programs' three runs; pt2_differential_test.py
    passes its own).
    """
    results = {}
    todo = list(option_sets)
    while todo:
        events, crashed_at = _fork_and_run(pt_path, program, todo, timeout, child or _child)
        results.update(events)
        if crashed_at is None:
            break
        i = [n for n, _ in todo].index(crashed_at)
        if i > 0:  # it ran after others in the same process: confirm it alone
            alone, _ = _fork_and_run(pt_path, program, [todo[i]], timeout, child or _child)
            results.update(alone)
        todo = todo[i + 1:]
    return results


def _fork_and_run(pt_path, program, option_sets, timeout, child):
    """One child for option_sets in order. Returns ({name: events} for the sets that
    began, the name of the set the child died in or None)."""
    r, w = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:  # child: never returns into the test
        os.close(r)
        code = 0
        try:
            for name, options in option_sets:
                _send(w, ("begin", name))
                child(w, pt_path, program, options)
                _send(w, ("end", name))
        except BaseException as e:  # noqa: BLE001 -- reported to the parent, which decides
            try:
                _send(w, ("child_error", f"{type(e).__name__}: {e}"))
            except Exception:
                pass
            code = 3
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    os.close(w)
    buf, events, stage, current = b"", {}, "start", None
    deadline = time.monotonic() + timeout * len(option_sets)
    timed_out = False
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            timed_out = True
            break
        ready, _, _ = select.select([r], [], [], left)
        if not ready:
            continue
        chunk = os.read(r, 1 << 20)
        if not chunk:
            break
        buf += chunk
        while len(buf) >= 8:
            (n,) = struct.unpack("<Q", buf[:8])
            if len(buf) < 8 + n:
                break
            ev = pickle.loads(buf[8:8 + n])
            buf = buf[8 + n:]
            if ev[0] == "begin":
                current, stage = ev[1], "start"
                events[current] = []
            elif ev[0] == "end":
                events[current].append(("exit", ("ok",)))
                current = None
            elif ev[0] == "stage":
                stage = ev[1]
            elif current is not None:
                events[current].append(ev)
    os.close(r)
    if timed_out:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        status = ("timeout", stage)
    else:
        _, st = os.waitpid(pid, 0)
        if os.WIFSIGNALED(st):
            status = ("signal", signal.Signals(os.WTERMSIG(st)).name, stage)
        elif os.WEXITSTATUS(st) != 0:
            status = ("exit", os.WEXITSTATUS(st), stage)
        else:
            status = None
    if status is None:
        return events, None
    if current is None:  # died between option sets (or before the first began)
        current = next((n for n, _ in option_sets if n not in events), option_sets[-1][0])
        events.setdefault(current, [])
    events[current].append(("exit", status))
    return events, current
