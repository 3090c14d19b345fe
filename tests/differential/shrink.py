"""Greedy minimisation of a failing program: delete return values and statements (at any
depth) one at a time while the program still compiles, still runs in the interpreter,
and brisk still fails it with the same signature (verdict.Outcome.signature); repeat until nothing can go."""
import time

from sandbox import compile_program, run_brisk, run_reference
from verdict import judge


def still_fails(program, options, signature, workdir, tag):
    try:
        sm, pt = compile_program(program, workdir, tag)
        ref = run_reference(sm, program)
    except Exception:  # noqa: BLE001 -- CompileError or the interpreter refusing to run it
        return False  # the deletion made the program invalid
    out = judge(program, ref, run_brisk(pt, program, options, timeout=30.0))
    return out.status == "fail" and out.signature == signature


def shrink(program, options, signature, workdir, budget_s=20.0):
    """The smallest program found within budget_s that fails like `program` did."""
    deadline = time.monotonic() + budget_s
    attempt = 0
    changed = True
    while changed and time.monotonic() < deadline:
        changed = False
        for i in reversed(range(len(program.returns))):
            if len(program.returns) == 1 or time.monotonic() > deadline:
                break
            cand = program.without_return(i)
            attempt += 1
            if still_fails(cand, options, signature, workdir, f"_s{attempt}"):
                program, changed = cand, True
        paths = program.statement_paths()
        k = 0
        while k < len(paths) and time.monotonic() < deadline:
            cand = program.without_statement(paths[k])
            attempt += 1
            if still_fails(cand, options, signature, workdir, f"_s{attempt}"):
                program, changed = cand, True
                paths = program.statement_paths()  # paths after the deleted one moved
            else:
                k += 1
    return program
