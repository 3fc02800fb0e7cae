#!/usr/bin/env python3
"""make bench: the scene library under each linear solver, the FEM rows of issue 18 (bench_fem.py),
the pour3d step-size sweep, the GPU rows, the peer scenes of issue 20 beside Bullet (bench_peer.py), every library
scene against real time on one core (bench_realtime.py) and the app's frame time while the
20,000-box pile steps (bench_gui_frames.sh).

Runs `sandbox run SCENE --solver S --json` for every library scene and solver, prints a table and
writes CSV under bench/results/<machine>/ (one folder per machine, as Box2D keeps its benchmark
results). Figures are whole-run means from the runner's own JSON; precision is in every row.

Usage: bench.py BUILD_DIR [--quick]
"""
import csv
import json
import os
import platform
import subprocess
import sys

SOLVERS = ["jacobi", "gs", "pcg", "pcr"]
PEER_METHODS = ["newton", "soft"]   # the solve methods of the peer rows (sandbox run --method)
GRASP_SCENES = ["grasp_box", "fetch_tomato", "hand_ball", "grasp_mesh"]   # scenes with a grasp script
# Simulated seconds per scene: long enough to settle, short enough for 2 cores.
SECONDS = {"pour3d": 6.0, "heavy_stack": 4.0, "arch": 4.0, "card_house": 3.0, "table_pile": 4.0}
POUR_DTS = [0.001, 0.002, 0.003, 0.004, 0.005, 0.0075, 0.01, 0.0125, 0.015, 0.0175, 0.02, 0.025, 0.03,
            0.035, 0.04, 0.05]


def run(exe, args):
    out = subprocess.run([exe, "run"] + args + ["--json"], capture_output=True, text=True, timeout=1800)
    if out.returncode != 0:
        raise RuntimeError(f"sandbox run {' '.join(args)} failed: {out.stderr.strip()}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def machine_name():
    cpu = "cpu"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    slug = "".join(c if c.isalnum() else "-" for c in cpu).strip("-").lower()
    while "--" in slug:
        slug = slug.replace("--", "-")
    return f"{platform.machine()}-{slug}-{os.cpu_count()}c"


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else "build"
    quick = "--quick" in sys.argv
    exe = os.path.join(build, "sandbox")
    listing = subprocess.run([exe, "list"], capture_output=True, text=True, check=True).stdout
    scenes = [line.split()[0] for line in listing.splitlines() if line.strip() and not line.startswith(" ")]
    outdir = os.path.join("bench", "results", machine_name())
    os.makedirs(outdir, exist_ok=True)

    # ---- 1. every scene under every solver --------------------------------------------------
    rows = []
    for scene in scenes:
        for solver in SOLVERS:
            secs = 1.0 if quick else SECONDS.get(scene, 2.0)
            r = run(exe, [scene, "--solver", solver, "--seconds", str(secs), "--threads", "1"])
            rows.append({
                "scene": scene, "solver": solver, "precision": r["precision"], "bodies": r["bodies"],
                "dt": r["dt"], "steps": r["steps"], "contacts_mean": r["contacts"]["mean"],
                "ms_per_step_median": r["wall_ms_per_step"]["median"],
                "ms_per_step_mean": r["wall_ms_per_step"]["mean"],
                "newton_iters_mean": r["newton_iters_mean"], "linear_iters_mean": r["linear_iters_mean"],
                "residual_final_mean": r["residual_final"]["mean"], "residual_final_max": r["residual_final"]["max"],
                "max_penetration_m": r["max_penetration_m"], "overlap_volume_final_m3": r["overlap_volume_m3"]["final"],
                "overlap_volume_max_m3": r["overlap_volume_m3"]["max"], "kinetic_energy_final_j": r["kinetic_energy_final_j"],
                "failed_steps": r.get("failed_steps", 0), "nan": r["nan"],
            })
            print(f"  {scene:12s} {solver:6s} {rows[-1]['ms_per_step_median']:8.3f} ms/step", file=sys.stderr)
    path = os.path.join(outdir, "solvers.csv")
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows)
    print(f"\n## Scene library x linear solver ({rows[0]['precision']}, 1 thread) -> {path}\n")
    print("| scene | solver | bodies | contacts | ms/step (median) | Newton | linear | residual (mean) | max pen. (m) | overlap (m^3, max) |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['scene']} | {r['solver']} | {r['bodies']} | {r['contacts_mean']:.1f} | {r['ms_per_step_median']:.3f} | "
              f"{r['newton_iters_mean']:.2f} | {r['linear_iters_mean']:.1f} | {r['residual_final_mean']:.3e} | "
              f"{r['max_penetration_m']:.2e} | {r['overlap_volume_max_m3']:.2e} |")

    # ---- 1b. the grasp scripts (issue 19): each grasp scene's script under every solver ------
    # Real time for the gripper means a step within 8.33 ms (120 Hz) on one core.
    grasp = []
    for scene in [s for s in scenes if s in GRASP_SCENES]:
        for solver in ["scene"] + SOLVERS:   # "scene": the scene's own settings (its default solver and NCP)
            chosen = [] if solver == "scene" else ["--solver", solver]
            r = run(exe, [scene, "--script", *chosen, "--threads", "1", "--overlap-every", "0"])
            g = r["grasp"]
            grasp.append({"scene": scene, "solver": solver, "precision": r["precision"], "steps": r["steps"],
                          "ms_per_step_mean": r["wall_ms_per_step"]["mean"],
                          "ms_per_step_median": r["wall_ms_per_step"]["median"],
                          "ms_per_step_p95": r["wall_ms_per_step"]["p95"], "grip_force_n": g["grip_force_n"],
                          "hold_s": g["hold_s"], "hold_slip_m": g["hold_slip_m"], "hold_rise_m": g["hold_rise_m"],
                          "pad_penetration_max_m": g["pad_penetration_max_m"], "scale_kg": g["scale_kg"],
                          "failed_steps": r.get("failed_steps", 0)})
            print(f"  {scene:12s} {solver:6s} --script {grasp[-1]['ms_per_step_mean']:8.3f} ms/step", file=sys.stderr)
    if grasp:
        path = os.path.join(outdir, "grasp.csv")
        with open(path, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(grasp[0].keys()))
            w.writeheader()
            w.writerows(grasp)
        print(f"\n## Grasp scripts (sandbox run SCENE --script, 1 thread; real time: 8.33 ms/step) -> {path}\n")
        print("| scene | solver | ms/step mean | median | p95 | hold slip (mm) | rise (m) | pad overlap (mm) | scale (kg) |")
        print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
        for r in grasp:
            print(f"| {r['scene']} | {r['solver']} | {r['ms_per_step_mean']:.3f} | {r['ms_per_step_median']:.3f} | "
                  f"{r['ms_per_step_p95']:.3f} | {1e3 * r['hold_slip_m']:.3g} | {r['hold_rise_m']:.4f} | "
                  f"{1e3 * r['pad_penetration_max_m']:.3g} | {r['scale_kg']:.4f} |")

    # ---- 1c. deformable bodies (issue 18): ms per step against tet count (scripts/bench_fem.py) --
    fem = [sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)), "bench_fem.py"), build]
    out = subprocess.run(fem + (["--quick"] if quick else []), capture_output=True, text=True, timeout=3600)
    print(out.stdout.strip() or out.stderr.strip())

    # ---- 2. pour3d under the standard model at 16 step sizes (the PEG baseline) -------------
    seeds = [1] if quick else [1, 2, 3]
    dts = POUR_DTS[::4] if quick else POUR_DTS
    sweep = []
    for dt in dts:
        for seed in seeds:
            r = run(exe, ["pour3d", "--contact", "standard", "--dt", str(dt), "--seconds", "6", "--seed", str(seed),
                          "--threads", "1", "--overlap-every", "1"])
            sweep.append({"contact": "standard", "dt": dt, "seed": seed, "precision": r["precision"],
                          "overlap_final_m3": r["overlap_volume_m3"]["final"], "overlap_max_m3": r["overlap_volume_m3"]["max"],
                          "max_penetration_m": r["max_penetration_m"], "failed_steps": r.get("failed_steps", 0),
                          "nan": r["nan"], "ms_per_step_median": r["wall_ms_per_step"]["median"]})
            print(f"  pour3d dt={dt} seed={seed}", file=sys.stderr)
    path = os.path.join(outdir, "pour3d_standard.csv")
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(sweep[0].keys()))
        w.writeheader()
        w.writerows(sweep)
    print(f"\n## pour3d, standard model, step-size sweep ({len(seeds)} seeds) -> {path}\n")
    print("| dt (s) | overlap final (m^3, median) | overlap max (m^3, median) | max pen. (m, median) | failed steps |")
    print("|---:|---:|---:|---:|---:|")
    for dt in dts:
        sel = [s for s in sweep if s["dt"] == dt]
        med = lambda k: sorted(s[k] for s in sel)[len(sel) // 2]
        print(f"| {dt} | {med('overlap_final_m3'):.3e} | {med('overlap_max_m3'):.3e} | {med('max_penetration_m'):.3e} | "
              f"{sum(s['failed_steps'] for s in sel)} |")

    # ---- 3. the GPU rows: CPU, the device pipeline on the host, and CUDA in the same run -------
    # ms per step by stage (sandbox bench-gpu prints the table); double or float is the build's
    # (configure with -DCS_REAL_FLOAT=ON for the float rows). Targets of issue 17: 100 bodies at
    # 0.3 ms, the 5,050-box pyramid at 1 ms, the 20,000-box pile at 4 ms with 4 Newton x 20 linear.
    sizes = "100,1000" if quick else "100,5050,20000"
    for deterministic in (False, True):
        path = os.path.join(outdir, "gpu%s.csv" % ("_deterministic" if deterministic else ""))
        args = [exe, "bench-gpu", "--bodies", sizes, "--newton", "4", "--iters", "20", "--cpu-max", "5050",
                "--csv", path] + (["--deterministic"] if deterministic else [])
        out = subprocess.run(args, capture_output=True, text=True, timeout=3600)
        print(f"\n## GPU rows ({'deterministic' if deterministic else 'fast'} mode) -> {path}\n")
        print(out.stdout.strip() or out.stderr.strip())

    # ---- 4. the peer scenes of issue 20 (scripts/bench_peer.py): each under every solve method,
    # then Bullet 3.24 (bench/peers/bullet_runner.cpp, when libbullet-dev is installed), back to back
    peer = [sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)), "bench_peer.py"), build,
            "--method", ",".join(PEER_METHODS)]
    if quick:
        peer += ["--steps", "60", "--scenes", "heavy_stack,pyramid_55,pyramid_385"]
    out = subprocess.run(peer, capture_output=True, text=True, timeout=7200)
    print(out.stdout.strip() or out.stderr.strip())

    # ---- 5. real time on one core: every library scene's first 2 s (scripts/bench_realtime.py) --
    realtime = [sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)), "bench_realtime.py"), build]
    if quick:
        realtime += ["--seconds", "0.5"]
    out = subprocess.run(realtime, capture_output=True, text=True, timeout=3600)
    print("\n## Real time on one core\n\n" + (out.stdout.strip() or out.stderr.strip()))

    # ---- 6. the app's frame time while the 20,000-box pile steps (scripts/bench_gui_frames.sh) --
    frames = [os.path.join(os.path.dirname(os.path.abspath(__file__)), "bench_gui_frames.sh"),
              os.path.join(build, "sandbox"), "120" if quick else "300"]
    out = subprocess.run(frames, capture_output=True, text=True, timeout=1800)
    print("\n" + (out.stdout.strip() or out.stderr.strip()))


if __name__ == "__main__":
    main()
