#!/usr/bin/python3
"""Scaling of the CPU step with the box count (issue 20): square peer pyramids of unit 1000 kg boxes
with 1 mm side gaps (bench/scenes/peer_pyramid_55.json with its base changed), one thread, dt = 1/120 s,
with and without decoupled rows (engine/solver/decoupled_rows.h, scene setting "decouple_rows").

Each point is the median CPU ms per step of `sandbox run` over a number of steps that shrinks with the
size (the runner's own figure; other processes on the machine do not inflate CPU time), with the time
per stage (wall means, World::profile). Writes docs/scaling.csv and docs/scaling.png.

Usage: /usr/bin/python3 scripts/bench_scaling.py [BUILD_DIR] [--bases 3,5,10,20] [--out DIR]
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


def run(exe, scene, steps):
    out = subprocess.run([exe, "run", scene, "--steps", str(steps), "--threads", "1", "--overlap-every", "0",
                          "--no-progress", "--json"], capture_output=True, text=True, timeout=3600)
    if out.returncode != 0:
        sys.exit(f"bench_scaling.py: sandbox run failed: {out.stderr.strip()}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    args = sys.argv[1:]
    build = args[0] if args and not args[0].startswith("--") else "build"
    bases = [int(b) for b in args[args.index("--bases") + 1].split(",")] if "--bases" in args else [3, 5, 7, 10, 14, 20]
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
                rows.append({"boxes": boxes, "decouple_rows": int(decouple), "steps": steps,
                             "contacts_mean": round(r["contacts"]["mean"], 1),
                             "cpu_ms_per_step_median": r["cpu_ms_per_step_median"],
                             **{f"{s}_ms": r["profile_ms"][s] for s in STAGES},
                             "newton_iters_mean": r["newton_iters_mean"], "linear_iters_mean": r["linear_iters_mean"],
                             "max_penetration_m": r["max_penetration_m"], "precision": r["precision"]})
                print(f"  {boxes:6d} boxes decouple={int(decouple)} {r['cpu_ms_per_step_median']:10.3f} CPU ms/step",
                      file=sys.stderr)
    os.makedirs(outdir, exist_ok=True)
    with open(os.path.join(outdir, "scaling.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows)
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    for decouple, label in ((0, "all rows in the linear solve (default)"), (1, "decoupled rows on the diagonal")):
        sel = [r for r in rows if r["decouple_rows"] == decouple]
        ax.loglog([r["boxes"] for r in sel], [r["cpu_ms_per_step_median"] for r in sel], "o-", label=label)
    ax.set_xlabel("boxes (square pyramid, 1 mm side gaps)")
    ax.set_ylabel("CPU ms per step (median, 1 thread)")
    ax.set_title(f"Step time against size, PCR, {rows[0]['precision']}, dt = 1/120 s")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(os.path.join(outdir, "scaling.png"), dpi=110)
    print(f"wrote {outdir}/scaling.csv and scaling.png")


if __name__ == "__main__":
    main()
