#!/usr/bin/env python3
"""Row culling against every row on each library scene (issue 20; engine/contact/row_culling.h).

Runs `sandbox run SCENE --threads 1 --overlap-every 0 --cull-rows off|on --json` for every scene
of `sandbox list` (each for its own duration, or --steps N), back to back, and prints one table
row per scene: max penetration, final kinetic energy, top drift, final residual, CPU ms per step,
contacts left out and re-solves. Scenes on another contact model than the standard one are not
culled and must come out identical.

Usage: bench_cull.py BUILD_DIR [--steps N] [--scenes a,b,...]
Writes bench/results/<machine>/cull.csv (scripts/bench.py names the machine).
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_ab import FIELDS, cells, compare, library_scenes, parse_args, write_csv  # noqa: E402


def main():
    exe, steps, only = parse_args(sys.argv[1:])
    rows = compare(exe, library_scenes(exe), steps, only, "--cull-rows",
                   lambda off, on: {"cull_resolves": on["cull_resolves"]})
    path = write_csv(rows, "cull.csv")
    print(f"\n## Row culling off / on, every library scene, one thread -> {path}\n")
    print("| scene | model | steps | " + " | ".join(f"{label} off / on" for _, label in FIELDS) +
          " | failed steps off / on | re-solves |")
    print("|---|---|---:|" + "---:|" * (len(FIELDS) + 2))
    for r in rows:
        print(f"| {r['scene']} | {r['contact']} | {r['steps']} | {cells(r)} | {r['failed_steps_off']} / "
              f"{r['failed_steps_on']} | {r['cull_resolves']} |")


if __name__ == "__main__":
    main()
