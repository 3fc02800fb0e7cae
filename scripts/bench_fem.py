#!/usr/bin/env python3
"""FEM rows of make bench (issue 18): ms per step against tet count.

A soft ball (r = 5 cm, Y = 0.1 MPa, nu = 0.45, stable neo-Hookean, Rayleigh damping 0.01 s) of
470, 2,440, 10,943 and 97,649 tets (TetGen at four resolutions), resting on the ground and
squeezed by a 2 kg plate on a prismatic joint (bench/scenes/fem_rest_*.json, fem_squeeze_*.json),
each at one thread and at every thread of the machine; dt = 1/120 s, the solver's defaults (8
Newton x 40 PCR iterations). Fewer steps for the bigger meshes (3 for the 98k-tet ball), so that it runs
within a few minutes (STEPS below; each row names its steps). Each row: median and mean wall ms
per step, the process's CPU ms per step, Newton and linear iterations per step, the final NCP
residual (the last step's, and the mean over the run), the deepest penetration and the kinetic
energy at the end. FEM runs on the step pipeline; GPU rows need a GPU (said in the output).

Usage: bench_fem.py BUILD_DIR [--quick] [--threads T]   (--quick: the two smallest meshes)
Writes bench/results/<machine>/fem.csv (scripts/bench.py names the machine).
"""
import csv
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench import machine_name, run  # noqa: E402

# tag, steps: 1 s for the smallest ball, fewer steps as the mesh grows, 3 steps (25 ms) for the 98k-tet
# one (about 40 s a step on the loaded 2-core machine, so each of its four runs takes about 2 minutes).
STEPS = [("470", 120), ("2k", 60), ("11k", 24), ("98k", 3)]
SETUPS = [("rest", "ball resting on the ground"), ("squeeze", "ball squeezed by a 2 kg plate")]


def main():
    args = sys.argv[1:]
    build = args[0] if args and not args[0].startswith("--") else "build"
    quick = "--quick" in args
    all_threads = int(args[args.index("--threads") + 1]) if "--threads" in args else (os.cpu_count() or 1)
    exe = os.path.join(build, "sandbox")
    thread_counts = [1] if all_threads <= 1 else [1, all_threads]
    rows = []
    for tag, steps in STEPS[:2] if quick else STEPS:
        for setup, what in SETUPS:
            scene = f"bench/scenes/fem_{setup}_{tag}.json"
            for threads in thread_counts:
                r = run(exe, [scene, "--steps", str(steps), "--threads", str(threads), "--overlap-every", "0"])
                rows.append({
                    "setup": setup, "tets": r["fem_tets"], "nodes": r["fem_nodes"], "threads": r["threads"],
                    "steps": r["steps"], "dt": r["dt"], "precision": r["precision"], "solver": r["solver"],
                    "ms_per_step_median": r["wall_ms_per_step"]["median"], "ms_per_step_mean": r["wall_ms_per_step"]["mean"],
                    "cpu_ms_per_step_median": r["cpu_ms_per_step_median"], "newton_iters_mean": r["newton_iters_mean"],
                    "linear_iters_mean": r["linear_iters_mean"], "residual_final_last": r["residual_final"]["last"],
                    "residual_final_mean": r["residual_final"]["mean"], "contacts_mean": r["contacts"]["mean"],
                    "max_penetration_m": r["max_penetration_m"], "kinetic_energy_final_j": r["kinetic_energy_final_j"],
                    "failed_steps": r.get("failed_steps", 0), "nan": r["nan"],
                })
                print(f"  fem {setup:7s} {r['fem_tets']:6d} tets, {threads} thread(s): "
                      f"{rows[-1]['ms_per_step_median']:9.2f} ms/step", file=sys.stderr)
    outdir = os.path.join("bench", "results", machine_name())
    os.makedirs(outdir, exist_ok=True)
    path = os.path.join(outdir, "fem.csv")
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows)
    print(f"\n## FEM: ms per step against tet count ({rows[0]['precision']}, {rows[0]['solver']}, "
          f"dt {rows[0]['dt']:.4g} s) -> {path}\n")
    print("| setup | tets | nodes | threads | steps | ms/step (median) | mean | CPU ms | Newton | linear | "
          "residual (last) | residual (mean) | contacts | max pen. (m) | KE end (J) |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['setup']} | {r['tets']} | {r['nodes']} | {r['threads']} | {r['steps']} | "
              f"{r['ms_per_step_median']:.2f} | {r['ms_per_step_mean']:.2f} | {r['cpu_ms_per_step_median']:.2f} | "
              f"{r['newton_iters_mean']:.2f} | {r['linear_iters_mean']:.1f} | {r['residual_final_last']:.2e} | "
              f"{r['residual_final_mean']:.2e} | {r['contacts_mean']:.0f} | {r['max_penetration_m']:.2e} | "
              f"{r['kinetic_energy_final_j']:.2e} |")
    print("\nGPU: not measured here (FEM runs on the step pipeline, tests/test_fem_exec_parity.cpp; no GPU on this machine).")


if __name__ == "__main__":
    main()
