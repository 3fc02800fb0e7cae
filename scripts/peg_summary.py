#!/usr/bin/env python3
"""Summarizes `sandbox experiment` CSVs as a markdown table: per step size and model variant
(standard, hyperplane, peg: whichever the sweep ran), the median and quartiles of the per-step
overlap, failed/exploded runs, and PEG's cost relative to the standard model (engine time per
step, summed over the runs of that step size).
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
names = {"standard": "standard", "hyperplane": "standard, hyperplane faces", "peg": "PEG"}
models = [m for m in names if any(r["model"] == m for r in ov)]

def cell(r):
    return f"{float(r['median']):.2g} [{float(r['q1']):.2g}, {float(r['q3']):.2g}]" if r else "-"

def fails(r):
    return f"{r['failed_runs']}/{r['exploded_runs']} of {r['runs']}" if r else "-"

head = "| h (s) | " + " | ".join(f"{names[m]} median [q1, q3] | failed/exploded" for m in models)
ratio_wanted = "standard" in models and "peg" in models
print(head + (" | PEG/standard time per step |" if ratio_wanted else " |"))
print("|---" * (1 + 2 * len(models) + ratio_wanted) + "|")
tot = defaultdict(lambda: [0.0, 0])
for dt in dts:
    row = f"| {dt:.4f} | " + " | ".join(f"{cell(by.get((m, dt)))} | {fails(by.get((m, dt)))}" for m in models)
    for m in models:
        tot[m][0] += solve[(m, dt)]
        tot[m][1] += steps[(m, dt)]
    if ratio_wanted:
        ks, kp = ("standard", dt), ("peg", dt)
        ratio = f"{(solve[kp] / steps[kp]) / (solve[ks] / steps[ks]):.2f}" if steps[ks] and steps[kp] else "-"
        row += f" | {ratio}"
    print(row + " |")
print()
for m in models:
    r = [by[(m, dt)] for dt in dts if (m, dt) in by]
    print(f"{names[m]}: failed or exploded runs {sum(int(x['failed_runs']) for x in r)} of "
          f"{sum(int(x['runs']) for x in r)}, exploded {sum(int(x['exploded_runs']) for x in r)}")
if ratio_wanted and tot["standard"][1] and tot["peg"][1]:
    print(f"All step sizes: PEG/standard engine time per step = "
          f"{(tot['peg'][0] / tot['peg'][1]) / (tot['standard'][0] / tot['standard'][1]):.2f}")
if "hyperplane" in models and "peg" in models and tot["hyperplane"][1]:
    print(f"All step sizes: PEG/hyperplane engine time per step = "
          f"{(tot['peg'][0] / tot['peg'][1]) / (tot['hyperplane'][0] / tot['hyperplane'][1]):.2f}")
