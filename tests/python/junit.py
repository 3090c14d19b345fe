"""Runs unittest tests and writes JUnit XML where Bazel asks for it ($XML_OUTPUT_FILE).

tools/count_tests.py counts the <testcase> elements of each target's test.xml; without
this file Bazel writes one case per target, so every Python test would count as one.
"""
import os
import sys
import time
import unittest
from xml.sax.saxutils import quoteattr, escape


class _Result(unittest.TextTestResult):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.cases = []  # (class, name, seconds, kind or None, text)
        self._t0 = 0.0

    def startTest(self, test):
        self._t0 = time.monotonic()
        super().startTest(test)

    def _add(self, test, kind, text=""):
        cls = type(test).__module__ + "." + type(test).__name__
        name = getattr(test, "_testMethodName", str(test))
        self.cases.append((cls, name, time.monotonic() - self._t0, kind, text))

    def addSuccess(self, test):
        super().addSuccess(test)
        self._add(test, None)

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self._add(test, "failure", self._exc_info_to_string(err, test))

    def addError(self, test, err):
        super().addError(test, err)
        self._add(test, "error", self._exc_info_to_string(err, test))

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        self._add(test, "skipped", reason)


def _write_xml(path, suite_name, cases):
    failures = sum(1 for c in cases if c[3] == "failure")
    errors = sum(1 for c in cases if c[3] == "error")
    lines = ['<?xml version="1.0" encoding="UTF-8"?>',
             f'<testsuites><testsuite name={quoteattr(suite_name)} tests="{len(cases)}" '
             f'failures="{failures}" errors="{errors}">']
    for cls, name, secs, kind, text in cases:
        status = ' status="notrun"' if kind == "skipped" else ""
        lines.append(f'<testcase classname={quoteattr(cls)} name={quoteattr(name)} time="{secs:.3f}"{status}>')
        if kind in ("failure", "error"):
            lines.append(f'<{kind} message={quoteattr(text.strip().splitlines()[-1] if text.strip() else kind)}>'
                         f'{escape(text)}</{kind}>')
        lines.append("</testcase>")
    lines.append("</testsuite></testsuites>")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def main(suite_name):
    """unittest.main() for the calling module, plus JUnit XML for Bazel."""
    module = sys.modules["__main__"]
    suite = unittest.defaultTestLoader.loadTestsFromModule(module)
    if len(sys.argv) > 1:  # test names to run, as with unittest's own main
        suite = unittest.defaultTestLoader.loadTestsFromNames(sys.argv[1:], module)
    runner = unittest.TextTestRunner(verbosity=2, resultclass=_Result)
    result = runner.run(suite)
    out = os.environ.get("XML_OUTPUT_FILE")
    if out:
        _write_xml(out, suite_name, result.cases)
    # Exit without Python's and libtorch's teardown: after the TorchScript interpreter has
    # run prim::fork tasks (the reference runs of the fork models), torch 2.14 sometimes
    # aborts while destroying its inter-op thread pool at exit ("terminate called without
    # an active exception"), which would turn a passing suite into a failed target. The
    # results are written and flushed by then.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0 if result.wasSuccessful() else 1)
