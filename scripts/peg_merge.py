#!/usr/bin/env python3
"""Merges `sandbox experiment` outputs of a sweep split over seeds (--seed-first, one directory
per seed) into one set of CSVs, recomputing the per-step-size quartiles from the per-step overlaps
(<base>_steps.csv) exactly as app/experiment.cpp does (linear interpolation between order
statistics).
usage: scripts/peg_merge.py OUT_BASE DIR1 [DIR2 ...]     e.g. docs/peg_pour2d /tmp/sweep/seed1 ...
reads  DIRk/peg_<scene>_{runs,steps,traps}.csv (scene = the last part of OUT_BASE after 'peg_')
writes OUT_BASE_{runs,overlap,traps}.csv (traps: the first directory that has one)"""
import csv, os, sys
from collections import defaultdict

out, dirs = sys.argv[1], sys.argv[2:]
name = os.path.basename(out)


def quantile(v, q):
    if not v:
        return 0.0
    v = sorted(v)
    pos = q * (len(v) - 1)
    i = int(pos)
    f = pos - i
    return v[i] * (1 - f) + v[i + 1] * f if i + 1 < len(v) else v[i]


runs, steps = [], defaultdict(list)
traps = None
for d in dirs:
    runs += list(csv.DictReader(open(os.path.join(d, name + "_runs.csv"))))
    for r in csv.DictReader(open(os.path.join(d, name + "_steps.csv"))):
        vals = r["overlap_per_step"].split()
        steps[(r["model"], float(r["dt"]))] += [float(x) for x in vals]
    t = os.path.join(d, name + "_traps.csv")
    if traps is None and os.path.exists(t):
        traps = open(t).read()
with open(out + "_runs.csv", "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=list(runs[0].keys()))
    w.writeheader()
    w.writerows(runs)
models = []
for r in runs:
    if r["model"] not in models:
        models.append(r["model"])
dts = sorted({float(r["dt"]) for r in runs})
with open(out + "_overlap.csv", "w") as f:
    f.write("model,dt,runs,steps,q1,median,q3,max,failed_runs,failed_steps,unconverged_steps,exploded_runs,"
            "wall_s_per_step\n")
    for m in models:
        for dt in dts:
            rs = [r for r in runs if r["model"] == m and float(r["dt"]) == dt]
            if not rs:
                continue
            v = steps[(m, dt)]
            n_steps = sum(int(r["steps"]) for r in rs)
            wall = sum(float(r["wall_s"]) for r in rs)
            failed_runs = sum(1 for r in rs if int(r["failed_steps"]) > 0 or int(r["exploded"]))
            f.write(f"{m},{dt:.6g},{len(rs)},{n_steps},{quantile(v, .25):.6g},{quantile(v, .5):.6g},"
                    f"{quantile(v, .75):.6g},{max(v) if v else 0:.6g},{failed_runs},"
                    f"{sum(int(r['failed_steps']) for r in rs)},{sum(int(r['unconverged_steps']) for r in rs)},"
                    f"{sum(int(r['exploded']) for r in rs)},{wall / n_steps if n_steps else 0:.6g}\n")
if traps:
    open(out + "_traps.csv", "w").write(traps)
print("merged", len(dirs), "directories,", len(runs), "runs ->", out + "_{runs,overlap,traps}.csv")
