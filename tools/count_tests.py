"""Counts test results of one `bazel test` run and prints "N passed, N failed".

Per target, the status line of this run decides; for targets that ran, the gtest
cases in their test.xml files are counted (one target with 20 cases counts 20).
Targets that failed to build or have no status count as one failure each.
"""
import glob
import os
import re
import sys
import xml.etree.ElementTree as ET

STATUS = re.compile(r"^(//\S+)\s+(PASSED|FAILED|FLAKY|TIMEOUT|NO STATUS|FAILED TO BUILD|SKIPPED)\b")


def count_xml(testlogs, target):
    pkg, name = target[2:].split(":")
    base = os.path.join(testlogs, pkg, name)
    passed = failed = 0
    files = glob.glob(os.path.join(base, "test.xml")) + glob.glob(os.path.join(base, "shard_*", "test.xml"))
    for f in files:
        try:
            root = ET.parse(f).getroot()
        except ET.ParseError:
            failed += 1
            continue
        for case in root.iter("testcase"):
            bad = case.find("failure") is not None or case.find("error") is not None
            if case.get("status") == "notrun":
                continue
            if bad:
                failed += 1
            else:
                passed += 1
    return passed, failed


def main():
    log, testlogs = sys.argv[1], sys.argv[2]
    statuses = {}
    with open(log, errors="replace") as f:
        for line in f:
            m = STATUS.match(line.strip())
            if m:
                statuses[m.group(1)] = m.group(2)
    passed = failed = 0
    for target, status in sorted(statuses.items()):
        if status in ("PASSED", "FAILED", "FLAKY", "TIMEOUT"):
            p, fl = count_xml(testlogs, target)
            if status != "PASSED" and fl == 0:
                fl = 1  # crashed or timed out before writing a failure
            if p + fl == 0:
                p, fl = (1, 0) if status == "PASSED" else (0, 1)
            passed += p
            failed += fl
        elif status != "SKIPPED":
            failed += 1
    if not statuses:
        failed += 1  # nothing ran: the build itself failed
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
