#!/usr/bin/env python3
"""Summarizes `sandbox experiment` CSVs as a markdown table: per step size, the median and
quartiles of the per-step overlap for both models, failed/exploded runs, and PEG's cost
relative to the standard model (engine time per step, summed over the runs of that step size).
usage: scripts/peg_summary.py docs/peg_pour3d"""
import csv, sys
from collections import defaultdict

base = sys.argv[1]
ov = list(csv.DictReader(open(base + "_overlap.csv")))
runs = list(csv.DictReader(open(base + "_runs.csv")))
solve = defaultdict(float)
steps = defaultdict(int)
for r in runs:
    key = (r["model"], float(r["dt"]))
    solve[key] += float(r["solve_s"])
    steps[key] += int(r["steps"])
by = {(r["model"], float(r["dt"])): r for r in ov}
dts = sorted({float(r["dt"]) for r in ov})
print("| h (s) | standard median [q1, q3] | failed/exploded runs | PEG median [q1, q3] | failed/exploded runs | PEG/standard time per step |")
print("|---|---|---|---|---|---|")
tot = {"standard": [0.0, 0], "peg": [0.0, 0]}
for dt in dts:
    s, p = by.get(("standard", dt)), by.get(("peg", dt))
    def cell(r):
        return f"{float(r['median']):.2g} [{float(r['q1']):.2g}, {float(r['q3']):.2g}]" if r else "-"
    def fails(r):
        return f"{r['failed_runs']}/{r['exploded_runs']} of {r['runs']}" if r else "-"
    ratio = "-"
    ks, kp = ("standard", dt), ("peg", dt)
    if steps[ks] and steps[kp]:
        ratio = f"{(solve[kp] / steps[kp]) / (solve[ks] / steps[ks]):.2f}"
    for m, k in (("standard", ks), ("peg", kp)):
        tot[m][0] += solve[k]
        tot[m][1] += steps[k]
    print(f"| {dt:.4f} | {cell(s)} | {fails(s)} | {cell(p)} | {fails(p)} | {ratio} |")
if tot["standard"][1] and tot["peg"][1]:
    print(f"\nAll step sizes: PEG/standard engine time per step = "
          f"{(tot['peg'][0] / tot['peg'][1]) / (tot['standard'][0] / tot['standard'][1]):.2f}")
