#!/usr/bin/python3
"""Scaling of the CPU step with the box count (issue 20): square peer pyramids of unit 1000 kg boxes
with 1 mm side gaps (bench/scenes/peer_pyramid_55.json with its base changed), one thread, dt = 1/120 s,
with and without decoupled rows (engine/solver/decoupled_rows.h, scene setting "decouple_rows"); and
peer piles of 1,000 to 20,000 boxes (bench/scenes/peer_pile_1000.json widened to NX x NY columns of
10, the bin sized to the lattice, as bench/scenes/peer_pile_20000.json), default rows only.

Each pyramid point is the median CPU ms per step of `sandbox run` over a number of steps that shrinks
with the size (the runner's own figure; other processes on the machine do not inflate CPU time), with
the time per stage (wall means, World::profile). A pile falls for its first 20 steps (the bottom layer
is 0.125 m above the floor), so its point is the median CPU ms of the steps from 25 on (the trace's
cpu_ms): the layers landing on each other, not the settled pile. Writes docs/scaling.csv and .png.

Usage: /usr/bin/python3 scripts/bench_scaling.py [BUILD_DIR] [--bases 3,5,10,20] [--piles 10x10,40x50] [--out DIR]
"""
import csv
import json
import os
import subprocess
import sys
import tempfile

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STAGES = ["broad_phase", "narrow_phase", "contact_model", "solve", "integrate"]


def steps_for(boxes):
    return 120 if boxes <= 100 else 60 if boxes <= 400 else 15 if boxes <= 1500 else 4


# Pile steps: all of them, and the first one counted (after the fall; see above).
PILE_FIRST_COUNTED = 25


def pile_steps(boxes):
    return 120 if boxes <= 1000 else 60 if boxes <= 5000 else 45 if boxes <= 10000 else 40


def pile_scene(template, nx, ny):
    """peer_pile_1000 widened to nx x ny columns of 10 boxes, its bin fitted to the 1.25 m lattice."""
    scene = json.loads(json.dumps(template))
    scene["name"] = f"peer_pile_{nx * ny * 10}"
    hx, hy = nx * 1.25 / 2 + 0.25, ny * 1.25 / 2 + 0.25   # the bin's inside half widths
    walls = {"wall_east": ([0.25, hy + 0.25, 2.5], [hx + 0.25, 0, 2.5]),
             "wall_west": ([0.25, hy + 0.25, 2.5], [-hx - 0.25, 0, 2.5]),
             "wall_north": ([hx, 0.25, 2.5], [0, hy + 0.25, 2.5]),
             "wall_south": ([hx, 0.25, 2.5], [0, -hy - 0.25, 2.5])}
    for body in scene["bodies"]:
        if body.get("generator") == "ground":
            body["half_extents"] = [max(30, hx + 15), max(30, hy + 15), 0.5]
        elif body.get("name") in walls:
            body["shape"]["half_extents"], body["position"] = walls[body["name"]]
        elif body.get("generator") == "grid":
            body["counts"] = [nx, ny, 10]
            body["body"]["position"] = [-(nx - 1) * 0.625, -(ny - 1) * 0.625, 0.625]
    return scene


def run(exe, scene, steps, trace=None):
    out = subprocess.run([exe, "run", scene, "--steps", str(steps), "--threads", "1", "--overlap-every", "0",
                          "--no-progress", "--json"] + (["--trace", trace] if trace else []),
                         capture_output=True, text=True, timeout=3600)
    if out.returncode != 0:
        sys.exit(f"bench_scaling.py: sandbox run failed: {out.stderr.strip()}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    args = sys.argv[1:]
    build = args[0] if args and not args[0].startswith("--") else "build"
    bases = [int(b) for b in args[args.index("--bases") + 1].split(",")] if "--bases" in args else [3, 5, 7, 10, 14, 20]
    pile_arg = args[args.index("--piles") + 1] if "--piles" in args else "10x10,20x25,40x25,40x50"
    piles = [tuple(int(n) for n in p.split("x")) for p in pile_arg.split(",") if p]
    outdir = args[args.index("--out") + 1] if "--out" in args else os.path.join(ROOT, "docs")
    exe = os.path.join(build, "sandbox")
    template = json.load(open(os.path.join(ROOT, "bench", "scenes", "peer_pyramid_55.json")))
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for base in bases:
            boxes = base * (base + 1) * (2 * base + 1) // 6
            for decouple in (False, True):
                scene = json.loads(json.dumps(template))
                scene["name"] = f"pyramid_{boxes}"
                for body in scene["bodies"]:
                    if body.get("generator") == "pyramid":
                        body["base"] = base
                scene.setdefault("settings", {})["decouple_rows"] = decouple
                path = os.path.join(tmp, f"pyramid_{boxes}_{int(decouple)}.json")
                json.dump(scene, open(path, "w"))
                steps = steps_for(boxes)
                r = run(exe, path, steps)
                rows.append({"boxes": boxes, "decouple_rows": int(decouple), "steps": steps, "scene": "pyramid",
                             "contacts_mean": round(r["contacts"]["mean"], 1),
                             "cpu_ms_per_step_median": r["cpu_ms_per_step_median"],
                             **{f"{s}_ms": r["profile_ms"][s] for s in STAGES},
                             "newton_iters_mean": r["newton_iters_mean"], "linear_iters_mean": r["linear_iters_mean"],
                             "max_penetration_m": r["max_penetration_m"], "precision": r["precision"]})
                print(f"  {boxes:6d} boxes decouple={int(decouple)} {r['cpu_ms_per_step_median']:10.3f} CPU ms/step",
                      file=sys.stderr)
        pile_template = json.load(open(os.path.join(ROOT, "bench", "scenes", "peer_pile_1000.json")))
        for nx, ny in piles:
            boxes = nx * ny * 10
            path = os.path.join(tmp, f"pile_{boxes}.json")
            json.dump(pile_scene(pile_template, nx, ny), open(path, "w"))
            steps, trace = pile_steps(boxes), os.path.join(tmp, f"pile_{boxes}.csv")
            r = run(exe, path, steps, trace)
            counted = [x for x in csv.DictReader(open(trace)) if int(x["step"]) >= PILE_FIRST_COUNTED]
            cpu = sorted(float(x["cpu_ms"]) for x in counted)
            rows.append({"boxes": boxes, "decouple_rows": 0, "steps": f"{PILE_FIRST_COUNTED}-{steps}", "scene": "pile",
                         "contacts_mean": round(sum(int(x["contacts"]) for x in counted) / len(counted), 1),
                         "cpu_ms_per_step_median": cpu[len(cpu) // 2],
                         **{f"{s}_ms": r["profile_ms"][s] for s in STAGES},
                         "newton_iters_mean": sum(int(x["newton_iters"]) for x in counted) / len(counted),
                         "linear_iters_mean": sum(int(x["linear_iters"]) for x in counted) / len(counted),
                         "max_penetration_m": r["max_penetration_m"], "precision": r["precision"]})
            print(f"  {boxes:6d} boxes pile       {rows[-1]['cpu_ms_per_step_median']:10.3f} CPU ms/step", file=sys.stderr)
    os.makedirs(outdir, exist_ok=True)
    with open(os.path.join(outdir, "scaling.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows)
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    for scene, decouple, label in (("pyramid", 0, "pyramid, all rows in the linear solve (default)"),
                                   ("pyramid", 1, "pyramid, decoupled rows on the diagonal"),
                                   ("pile", 0, f"pile in a bin, steps {PILE_FIRST_COUNTED} on (landing)")):
        sel = [r for r in rows if r["scene"] == scene and r["decouple_rows"] == decouple]
        if sel:
            ax.loglog([r["boxes"] for r in sel], [r["cpu_ms_per_step_median"] for r in sel],
                      "s--" if scene == "pile" else "o-", label=label)
    ax.set_xlabel("boxes (square pyramids with 1 mm side gaps; piles of 10 layers)")
    ax.set_ylabel("CPU ms per step (median, 1 thread)")
    ax.set_title(f"Step time against size, PCR, {rows[0]['precision']}, dt = 1/120 s")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(os.path.join(outdir, "scaling.png"), dpi=110)
    print(f"wrote {outdir}/scaling.csv and scaling.png")


if __name__ == "__main__":
    main()
