#!/usr/bin/env python3
"""Counts, per model and step size, the steps whose overlap exceeds a threshold, from the
per-step overlaps `sandbox experiment` writes (peg_<scene>_steps.csv; not committed: large).
Usage: scripts/peg_step_counts.py STEPS.csv [THRESHOLD (default 1e-10)]"""
import collections
import csv
import sys

csv.field_size_limit(1 << 30)
path = sys.argv[1]
threshold = float(sys.argv[2]) if len(sys.argv) > 2 else 1e-10
over = collections.Counter()
total = collections.Counter()
for row in csv.DictReader(open(path)):
    key = (float(row["dt"]), row["model"])
    values = [float(x) for x in row["overlap_per_step"].split()]
    total[key] += len(values)
    over[key] += sum(1 for x in values if x > threshold)
models = sorted({m for _, m in total})
print("| h (s) | " + " | ".join(f"{m}: steps > {threshold:g}" for m in models) + " |")
print("|---|" + "---|" * len(models))
for dt in sorted({d for d, _ in total}):
    print(f"| {dt:.4f} | " + " | ".join(f"{over[(dt, m)]} of {total[(dt, m)]}" for m in models) + " |")
