"""Compiles a generated program, runs it in the TorchScript interpreter, and runs it in
brisk inside a forked child, so that a crash (SIGSEGV, an assert's SIGABRT) or a hang
becomes a result with the program's seed rather than the end of the test process.

The parent never calls brisk itself: brisk starts threads (its inter-op arena), and a
process that forks must not have any.
"""
import ctypes
import importlib.util
import os
import pickle
import select
import signal
import struct
import sys
import tempfile
import time

import torch

from program_gen import make_inputs

_libc = ctypes.CDLL(None)
RUNS = (("main", "main"), ("again", "main"), ("alt", "alt"))  # (run tag, input set)


def capture_stdout(fn):
    """fn() with file descriptor 1 redirected to a temporary file: catches what Python's
    print, C stdio and std::cout write (TorchScript's print goes through Python's
    sys.stdout when called from Python; a native kernel may write to fd 1 directly)."""
    sys.stdout.flush()
    _libc.fflush(None)
    saved = os.dup(1)
    with tempfile.TemporaryFile() as f:
        os.dup2(f.fileno(), 1)
        try:
            result = fn()
        finally:
            sys.stdout.flush()
            _libc.fflush(None)
            os.dup2(saved, 1)
            os.close(saved)
        f.seek(0)
        text = f.read().decode(errors="replace")
    return result, text


def clone(v):
    if isinstance(v, torch.Tensor):
        return v.clone()
    if isinstance(v, list):
        return [clone(e) for e in v]
    if isinstance(v, tuple):
        return tuple(clone(e) for e in v)
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
    import brisk
    _send(fd, ("stage", "load"))
    try:
        m = brisk.load(pt_path, **options)
    except Exception as e:
        _send(fd, ("load_error", type(e).__module__ + "." + type(e).__name__, str(e),
                   isinstance(e, brisk.Error)))
        return
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
    _send(fd, ("stage", "done"))


def run_brisk(pt_path, program, options, timeout=60.0):
    """Events of one brisk load + runs in a forked child, then ("exit", status) where
    status is ("ok",), ("signal", name, stage), ("exit", code, stage) or ("timeout", stage)."""
    r, w = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:  # child: never returns into the test
        os.close(r)
        code = 0
        try:
            _child(w, pt_path, program, options)
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
    buf, events, stage = b"", [], "start"
    deadline = time.monotonic() + timeout
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
            if ev[0] == "stage":
                stage = ev[1]
            else:
                events.append(ev)
    os.close(r)
    if timed_out:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        events.append(("exit", ("timeout", stage)))
        return events
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        events.append(("exit", ("signal", signal.Signals(os.WTERMSIG(status)).name, stage)))
    elif os.WEXITSTATUS(status) != 0:
        events.append(("exit", ("exit", os.WEXITSTATUS(status), stage)))
    else:
        events.append(("exit", ("ok",)))
    return events
