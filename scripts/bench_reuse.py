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
import csv
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench import machine_name, run  # noqa: E402

FIELDS = [("max_penetration_m", "max pen. (m)"), ("kinetic_energy_final_j", "final KE (J)"),
          ("top_drift_m", "top drift (m)"), ("residual_last", "final residual (m/s)"),
          ("cpu_ms_per_step_median", "CPU ms/step")]


def measure(exe, scene, steps, reuse):
    args = [scene, "--threads", "1", "--overlap-every", "0", "--no-progress", "--narrow-reuse", reuse]
    if steps:
        args += ["--steps", str(steps)]
    r = run(exe, args)
    r["residual_last"] = r["residual_final"]["last"]
    return r


def main():
    args = sys.argv[1:]
    build = args[0] if args and not args[0].startswith("--") else "build"
    steps = int(args[args.index("--steps") + 1]) if "--steps" in args else None
    only = args[args.index("--scenes") + 1].split(",") if "--scenes" in args else None
    exe = os.path.join(build, "sandbox")
    listing = subprocess.run([exe, "list"], capture_output=True, text=True, check=True).stdout
    scenes = [line.split()[0] for line in listing.splitlines() if line.strip()]
    scenes += [os.path.join("bench", "scenes", n + ".json") for n in ("peer_pyramid_385", "peer_pile_1000")]
    rows = []
    for scene in scenes:
        if only and scene not in only:
            continue
        off, on = measure(exe, scene, steps, "off"), measure(exe, scene, steps, "on")
        row = {"scene": scene, "contact": off["contact"], "steps": off["steps"]}
        for key, _ in FIELDS:
            row[key + "_off"], row[key + "_on"] = off[key], on[key]
        row["failed_steps_off"], row["failed_steps_on"] = off["failed_steps"], on["failed_steps"]
        rows.append(row)
        print(f"  {scene:18s} {off['cpu_ms_per_step_median']:8.3f} / {on['cpu_ms_per_step_median']:8.3f} CPU ms/step",
              file=sys.stderr)
    if not rows:
        sys.exit("bench_reuse.py: no scene selected")
    outdir = os.path.join("bench", "results", machine_name())
    os.makedirs(outdir, exist_ok=True)
    path = os.path.join(outdir, "reuse.csv")
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows)
    print(f"\n## Narrow-phase reuse off / on, one thread -> {path}\n")
    print("| scene | model | steps | " + " | ".join(f"{label} off / on" for _, label in FIELDS) +
          " | on / off time | failed steps off / on |")
    print("|---|---|---:|" + "---:|" * (len(FIELDS) + 2))
    for r in rows:
        cells = " | ".join(f"{r[k + '_off']:.3g} / {r[k + '_on']:.3g}" for k, _ in FIELDS)
        ratio = r["cpu_ms_per_step_median_on"] / max(r["cpu_ms_per_step_median_off"], 1e-9)
        print(f"| {os.path.basename(r['scene'])} | {r['contact']} | {r['steps']} | {cells} | {ratio:.2f} | "
              f"{r['failed_steps_off']} / {r['failed_steps_on']} |")


if __name__ == "__main__":
    main()
