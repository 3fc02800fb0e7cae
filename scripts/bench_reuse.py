#!/usr/bin/env python3
"""Narrow-phase reuse off / on on each library scene and the peer scenes (issue 20;
engine/collision/feature_cache.h).

Runs `sandbox run SCENE --threads 1 --overlap-every 0 --narrow-reuse off|on --json` for every scene
of `sandbox list` and bench/scenes/peer_pyramid_385.json, peer_pile_1000.json (each for its own
duration, or --steps N), back to back, and prints one table row per scene: max penetration, final
kinetic energy, top drift, final residual, CPU ms per step (median). The reuse gives the full
search's contacts bit for bit, so every column but the time must come out identical.

Usage: bench_reuse.py BUILD_DIR [--steps N] [--scenes a,b,...]
Writes bench/results/<machine>/reuse.csv (scripts/bench.py names the machine).
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_ab import FIELDS, cells, compare, library_scenes, parse_args, write_csv  # noqa: E402


def main():
    exe, steps, only = parse_args(sys.argv[1:])
    scenes = library_scenes(exe) + [os.path.join("bench", "scenes", n + ".json")
                                    for n in ("peer_pyramid_385", "peer_pile_1000")]
    rows = compare(exe, scenes, steps, only, "--narrow-reuse")
    path = write_csv(rows, "reuse.csv")
    print(f"\n## Narrow-phase reuse off / on, one thread -> {path}\n")
    print("| scene | model | steps | " + " | ".join(f"{label} off / on" for _, label in FIELDS) +
          " | on / off time | failed steps off / on |")
    print("|---|---|---:|" + "---:|" * (len(FIELDS) + 2))
    for r in rows:
        ratio = r["cpu_ms_per_step_median_on"] / max(r["cpu_ms_per_step_median_off"], 1e-9)
        print(f"| {os.path.basename(r['scene'])} | {r['contact']} | {r['steps']} | {cells(r)} | {ratio:.2f} | "
              f"{r['failed_steps_off']} / {r['failed_steps_on']} |")


if __name__ == "__main__":
    main()
