#!/usr/bin/env python3
"""Times every case of the engine's doctest binary and writes the slowest ones as a table.

    scripts/test_durations.py BUILD [--csv OUT.csv] [--before BEFORE.csv] [--doc docs/testing.md]
    scripts/test_durations.py --console LOG --csv OUT.csv     (a `cs_tests --duration=true` log)

Runs BUILD/cs_tests once, serially, in one process (both tiers: the fast one and doctest's test
suite "validate"), with OMP_WAIT_POLICY=PASSIVE as ctest sets it, and reads each case's file,
tier and seconds from doctest's XML reporter. --csv keeps the figures; --before adds an earlier
CSV's seconds beside them (matched by case name); --doc rewrites the table between the markers
in that Markdown file. Prints the table and the total per tier.
"""
import argparse
import csv
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET

TOP = 20
BEGIN, END = "<!-- slowest-cases:begin -->", "<!-- slowest-cases:end -->"


def run_binary(build):
    exe = os.path.join(build, "cs_tests")
    env = dict(os.environ, OMP_WAIT_POLICY="PASSIVE")
    out = subprocess.run([exe, "--reporters=xml", "--duration=true"], env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True).stdout
    root = ET.fromstring(out)
    rows = []
    for suite in root.iter("TestSuite"):
        tier = "validate" if suite.get("name") == "validate" else "fast"
        for case in suite.findall("TestCase"):
            if case.get("skipped") == "true":
                continue
            result = case.find("OverallResultsAsserts")
            rows.append({"case": case.get("name"), "file": os.path.basename(case.get("filename")),
                         "tier": tier, "seconds": float(result.get("duration")),
                         "passed": result.get("test_case_success")})
    return rows


def read_console(path):
    """Cases of a console log: 'FILE:LINE:' / 'TEST CASE:  NAME' ... 'SECONDS s: NAME'."""
    rows, file = [], ""
    for line in open(path, errors="replace"):
        m = re.match(r"^(\S+\.cpp):\d+:$", line.strip())
        if m:
            file = os.path.basename(m.group(1))
        m = re.match(r"^([0-9.e+-]+) s: (.*)$", line.rstrip("\n"))
        if m:
            rows.append({"case": m.group(2), "file": file, "tier": "fast", "seconds": float(m.group(1)),
                         "passed": ""})
    return rows


def row(case, file, tier, seconds, other):
    fmt = lambda x: "{:.1f}".format(x) if x is not None else "-"
    return "| {} | {} | {} | {} | {} |".format(case.replace("|", "/"), file, tier, fmt(seconds), fmt(other))


def table(rows, before):
    lines = ["Now, the slowest {} (before: the same case's seconds in the earlier run, - when it had another name):".format(TOP),
             "", "| case | file | tier | s | before, s |", "|---|---|---|---:|---:|"]
    for r in sorted(rows, key=lambda r: -r["seconds"])[:TOP]:
        b = before.get(r["case"])
        lines.append(row(r["case"], r["file"], r["tier"], r["seconds"], b["seconds"] if b else None))
    if before:
        now = {r["case"]: r for r in rows}
        lines += ["", "Before, the slowest {} (now: - when the case was split or renamed):".format(TOP), "",
                  "| case | file | tier now | before, s | now, s |", "|---|---|---|---:|---:|"]
        for b in sorted(before.values(), key=lambda r: -r["seconds"])[:TOP]:
            n = now.get(b["case"])
            lines.append(row(b["case"], b["file"], n["tier"] if n else "-", b["seconds"], n["seconds"] if n else None))
    for tier in ("fast", "validate"):
        t = [r["seconds"] for r in rows if r["tier"] == tier]
        lines += ["", "{}: {} cases, {:.0f} s in one process".format(tier, len(t), sum(t))]
    if before:
        lines += ["", "before: {} cases, {:.0f} s in one process".format(len(before), sum(b["seconds"] for b in before.values()))]
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("build", nargs="?")
    ap.add_argument("--console")
    ap.add_argument("--csv")
    ap.add_argument("--before")
    ap.add_argument("--doc")
    a = ap.parse_args()
    if not a.build and not a.console:
        ap.error("give BUILD or --console LOG")
    rows = read_console(a.console) if a.console else run_binary(a.build)
    if a.csv:
        with open(a.csv, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=["case", "file", "tier", "seconds", "passed"])
            w.writeheader()
            w.writerows(rows)
    before = {}
    if a.before:
        for r in csv.DictReader(open(a.before)):
            before[r["case"]] = dict(r, seconds=float(r["seconds"]))
    text = table(rows, before)
    print(text)
    if a.doc:
        doc = open(a.doc).read()
        if BEGIN not in doc or END not in doc:
            sys.exit("test_durations: {} has no {} ... {} markers".format(a.doc, BEGIN, END))
        head, rest = doc.split(BEGIN, 1)
        tail = rest.split(END, 1)[1]
        open(a.doc, "w").write(head + BEGIN + "\n" + text + "\n" + END + tail)
    failed = [r["case"] for r in rows if r["passed"] == "false"]
    if failed:
        print("failed: " + "; ".join(failed), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
