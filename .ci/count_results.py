#!/usr/bin/env python3
"""count_results.py -- sums the JUnit XML files Bazel leaves under testlogs.

Prints "N passed, N failed": one per gtest case, one per script test (Bazel writes a
single-case XML for tests that write none). Skipped gtest cases count as neither.
"""
import os
import sys
import xml.etree.ElementTree as ET


def count(root_dir):
    passed = failed = 0
    for dirpath, _, files in os.walk(root_dir, followlinks=True):
        if "test.xml" not in files:
            continue
        try:
            tree = ET.parse(os.path.join(dirpath, "test.xml"))
        except ET.ParseError:
            failed += 1
            continue
        for case in tree.iter("testcase"):
            if case.find("failure") is not None or case.find("error") is not None:
                failed += 1
            elif case.find("skipped") is not None or case.get("status") == "notrun":
                continue
            else:
                passed += 1
    return passed, failed


if __name__ == "__main__":
    p, f = count(sys.argv[1] if len(sys.argv) > 1 else ".bazel/testlogs")
    print(f"{p} passed, {f} failed")
