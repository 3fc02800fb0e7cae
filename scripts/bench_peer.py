#!/usr/bin/env python3
"""Peer rows of make bench (issues 20, 38): the scenes run side by side with Bullet 3.24 and ODE 0.16.

One thread, the build's precision (double by default), dt = 1/120 s, 600 steps unless --steps N;
the heavy stack for 10 s (1200 steps), its top box's drift being the figure. Each row: median
ms per step (wall, and the process's CPU time, which other processes on the machine do not
inflate), the mean ms of each stage (World::profile, wall), Newton and linear iterations, the
final NCP residual, the deepest penetration and the top box's drift. Targets are the issue's.

Bullet (issue 38): where the build has BUILD_DIR/bullet_runner (bench/peers/bullet_runner.cpp,
built when libbullet-dev is installed), each scene is run by ours and then by Bullet 3.24 at its
defaults (10 sequential-impulse iterations, split impulse, float), back to back, and the row gets
Bullet's CPU ms per step, deepest overlap and top drift (measured as ours: the runner's comment) and
the ratio ours / Bullet; without it one line says so and those columns are empty. --bullet double
runs BUILD_DIR/bullet_runner_double (Debian's double-precision Bullet; built on request).

Usage: bench_peer.py BUILD_DIR [--steps N] [--scenes a,b,...] [--threads T] [--cull-rows on|off]
                     [--solver pcr|pcg|...] [--preconditioner diagonal|block] [--narrow-reuse on|off]
                     [--method newton|pgs|soft|M1,M2,...] [--pgs-iters N] [--no-bullet | --bullet double]
                     [--csv NAME]
Writes bench/results/<machine>/peer.csv (scripts/bench.py names the machine); with --cull-rows,
peer_cull_<on|off>.csv (row culling, engine/contact/row_culling.h, is on by default); with
--solver or --preconditioner, peer_<solver>_<preconditioner>.csv; with --narrow-reuse,
peer_reuse_<on|off>.csv (engine/collision/feature_cache.h); with --method, peer_<method>.csv (the soft
step and sequential impulses: docs/relaxation.md), with a list of methods peer_<m1>_<m2>.csv: each scene under
each method, then Bullet once, back to back; with --pgs-iters N, peer_pgs_<N>.csv; --csv NAME names the file
instead. pile_20000 (the scaling pile) runs only when --scenes names it.
"""
import csv
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench import machine_name, run  # noqa: E402

# name, scene, steps (None: --steps), target ms per step, what else the issue asks of it
PEER = [
    ("heavy_stack", "heavy_stack", 1200, None, "top drift < 1 mm in 10 s"),
    ("pyramid_55", "bench/scenes/peer_pyramid_55.json", None, None, ""),
    ("default (pyramid)", "pyramid", None, 4.0, ""),
    ("pyramid_385", "bench/scenes/peer_pyramid_385.json", None, 2.5, "max penetration < 1e-4 m"),
    ("pile_1000", "bench/scenes/peer_pile_1000.json", None, 8.0, "final residual < 1e-3 m/s"),
    ("pyramid_2870", "bench/scenes/peer_pyramid_2870.json", None, 30.0, ""),
    ("pile_20000", "bench/scenes/peer_pile_20000.json", None, 8.3, "real time (issue 38)"),
]
ON_REQUEST = {"pile_20000"}   # minutes per run: only when --scenes names it
STAGES = ["broad_phase", "narrow_phase", "contact_model", "solve", "integrate"]


def run_bullet(exe, scene, steps):
    """Bullet's row for one scene (bench/peers/bullet_runner.cpp), or None when it refuses the scene."""
    out = subprocess.run([exe, scene, "--steps", str(steps)], capture_output=True, text=True, timeout=3600)
    if out.returncode != 0:
        print(f"  bullet: {scene}: {out.stderr.strip()}", file=sys.stderr)
        return None
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    args = sys.argv[1:]
    build = args[0] if args and not args[0].startswith("--") else "build"
    steps = int(args[args.index("--steps") + 1]) if "--steps" in args else 600
    threads = args[args.index("--threads") + 1] if "--threads" in args else "1"
    only = args[args.index("--scenes") + 1].split(",") if "--scenes" in args else None
    cull = args[args.index("--cull-rows") + 1] if "--cull-rows" in args else None
    solver = args[args.index("--solver") + 1] if "--solver" in args else None
    pc = args[args.index("--preconditioner") + 1] if "--preconditioner" in args else None
    reuse = args[args.index("--narrow-reuse") + 1] if "--narrow-reuse" in args else None
    methods = args[args.index("--method") + 1].split(",") if "--method" in args else [None]
    method = "_".join(methods) if methods != [None] else None
    pgs_iters = args[args.index("--pgs-iters") + 1] if "--pgs-iters" in args else None
    exe = os.path.join(build, "sandbox")
    bullet = os.path.join(build, "bullet_runner_double" if "--bullet" in args and
                          args[args.index("--bullet") + 1] == "double" else "bullet_runner")
    if "--no-bullet" in args:
        bullet = None
    elif not os.access(bullet, os.X_OK):
        print(f"bench_peer.py: no Bullet peer runner ({bullet}; install libbullet-dev, reconfigure): Bullet columns empty")
        bullet = None
    rows = []
    for name, scene, fixed, target, other in PEER:
        if (only and name not in only) or (not only and name in ON_REQUEST):
            continue
        n = fixed or steps
        group = []
        for m in methods:
            extra = (["--cull-rows", cull] if cull else []) + (["--solver", solver] if solver else []) + \
                (["--preconditioner", pc] if pc else []) + \
                (["--narrow-reuse", reuse] if reuse else []) + (["--method", m] if m else []) + \
                (["--pgs-iters", pgs_iters] if pgs_iters else [])
            r = run(exe, [scene, "--steps", str(n), "--threads", threads, "--overlap-every", "0", "--no-progress"] + extra)
            group.append(row_of(name, r, target, other))
            print(f"  {name:18s} {r['method']:7s} {group[-1]['cpu_ms_per_step_median']:9.3f} CPU ms/step", file=sys.stderr)
        b = run_bullet(bullet, scene, n) if bullet else None
        if b:
            print(f"  {name:18s} bullet  {b['cpu_ms_per_step_median']:9.3f} CPU ms/step", file=sys.stderr)
        for row in group:
            row["bullet_cpu_ms_per_step_median"] = b["cpu_ms_per_step_median"] if b else ""
            row["bullet_max_penetration_m"] = b["max_penetration_m"] if b else ""
            row["bullet_top_drift_m"] = b["top_drift_m"] if b else ""
            row["bullet_contacts_mean"] = round(b["contacts"]["mean"], 1) if b else ""
            row["cpu_ratio_ours_to_bullet"] = \
                round(row["cpu_ms_per_step_median"] / b["cpu_ms_per_step_median"], 3) if b else ""
        rows += group
    if not rows:
        sys.exit("bench_peer.py: no scene selected")
    csvname = args[args.index("--csv") + 1] if "--csv" in args else None
    write(rows, threads, cull, solver, pc, reuse, method, csvname, pgs_iters)


def row_of(name, r, target, other):
    p = r["profile_ms"]
    return {
        "scene": name, "method": r["method"], "precision": r["precision"], "threads": r["threads"],
        "thread_wait": r["thread_wait"],
        "bodies": r["bodies"], "steps": r["steps"], "contacts_mean": round(r["contacts"]["mean"], 1),
        "ms_per_step_median": r["wall_ms_per_step"]["median"], "cpu_ms_per_step_median": r["cpu_ms_per_step_median"],
        **{f"{s}_ms": p[s] for s in STAGES},
        "newton_iters_mean": r["newton_iters_mean"], "linear_iters_mean": r["linear_iters_mean"],
        "residual_final_last": r["residual_final"]["last"], "max_penetration_m": r["max_penetration_m"],
        "top_drift_m": r["top_drift_m"], "target_ms": target if target else "", "target_other": other,
    }


def write(rows, threads, cull, solver, pc, reuse, method, csvname=None, pgs_iters=None):
    outdir = os.path.join("bench", "results", machine_name())
    os.makedirs(outdir, exist_ok=True)
    name = f"peer_reuse_{reuse}.csv" if reuse else f"peer_cull_{cull}.csv" if cull else "peer.csv"
    if solver or pc:
        name = f"peer_{solver or 'pcr'}_{pc or 'diagonal'}.csv"
    if method:
        name = f"peer_{method}.csv"
    if pgs_iters:
        name = f"peer_pgs_{pgs_iters}.csv"
    if csvname:
        name = csvname
    path = os.path.join(outdir, name)
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows)
    print(f"\n## Peer scenes ({rows[0]['precision']}, {threads} thread(s), dt = 1/120 s) -> {path}\n")
    print("| scene | method | bodies | steps | contacts | ms/step wall (median) | CPU ms/step (median) | target | broad | "
          "narrow | contact model | solve | integrate | Newton | linear | final residual (m/s) | max pen. (m) | "
          "top drift (m) | Bullet CPU ms/step | ours / Bullet | Bullet max pen. (m) | Bullet top drift (m) |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    g = lambda v, f: format(v, f) if v != "" else "-"
    for r in rows:
        stages = " | ".join(f"{r[s + '_ms']:.3f}" for s in STAGES)
        print(f"| {r['scene']} | {r['method']} | {r['bodies']} | {r['steps']} | {r['contacts_mean']} | "
              f"{r['ms_per_step_median']:.3f} | {r['cpu_ms_per_step_median']:.3f} | {r['target_ms']} | {stages} | "
              f"{r['newton_iters_mean']:.2f} | {r['linear_iters_mean']:.1f} | {r['residual_final_last']:.2e} | "
              f"{r['max_penetration_m']:.2e} | {r['top_drift_m']:.2e} | {g(r['bullet_cpu_ms_per_step_median'], '.3f')} | "
              f"{g(r['cpu_ratio_ours_to_bullet'], '.2f')} | {g(r['bullet_max_penetration_m'], '.2e')} | "
              f"{g(r['bullet_top_drift_m'], '.2e')} |")


if __name__ == "__main__":
    main()
