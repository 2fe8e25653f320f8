#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Compare critest's ginkgo JSON reports of the psrun and runc handlers.

  compare.py KNOWN-FAILURES MODE PSRUN.json RUNC.json

Every spec psrun fails must be listed in KNOWN-FAILURES ("SPEC -- REASON"
a line, the spec's full name as ginkgo prints it); a listed spec that
passes with psrun, or one the run did not reach in MODE full, fails too
(a fixed entry must go). Prints "ok/not ok/skip - critest: SPEC" lines,
then "counts PASSED FAILED SKIPPED". Known failures count as skipped, with
their reason, and say whether runc failed the spec as well.
"""
import json
import sys


def results(path):
    with open(path) as f:
        suites = json.load(f)
    out = {}
    for suite in suites:
        for spec in suite.get("SpecReports") or []:
            if spec.get("LeafNodeType") != "It":
                continue
            name = " ".join([*(spec.get("ContainerHierarchyTexts") or []), spec.get("LeafNodeText", "")])
            out[name] = spec.get("State", "")
    return out


def main(argv):
    if len(argv) != 5:
        sys.stderr.write(__doc__)
        return 2
    known = {}
    with open(argv[1]) as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            if " -- " not in line:
                print(f"not ok - known-failures.txt:{n}: no ' -- REASON' after the spec name")
                print("counts 0 1 0")
                return 1
            spec, reason = line.split(" -- ", 1)
            known[spec.strip()] = reason.strip()
    mode = argv[2]
    ours, theirs = results(argv[3]), results(argv[4])
    passed = failed = skipped = 0
    for name in sorted(ours):
        state, runc = ours[name], theirs.get(name, "not run")
        if state in ("skipped", "pending"):
            continue
        if state == "passed":
            if name in known:
                print(f"not ok - critest: {name}: passes with psrun but is listed as a known failure ({known[name]})")
                failed += 1
            else:
                print(f"ok - critest: {name}" + ("" if runc == "passed" else f" (runc: {runc})"))
                passed += 1
        elif name in known:
            print(f"skip - critest: {name}: known failure (runc: {runc}): {known[name]}")
            skipped += 1
        else:
            print(f"not ok - critest: {name}: {state} with psrun (runc: {runc}), not a known failure")
            failed += 1
    if mode == "full":
        for name in sorted(set(known) - set(ours)):
            print(f"not ok - critest: {name}: listed as a known failure but not in this run (stale entry)")
            failed += 1
    print(f"counts {passed} {failed} {skipped}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
