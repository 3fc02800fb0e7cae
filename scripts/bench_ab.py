"""Off / on runs of one engine setting over a list of scenes (issue 20's A/B benches).

Each scene runs `sandbox run SCENE --threads 1 --overlap-every 0 FLAG off|on --json` back to back
(its own duration, or --steps N); a row holds FIELDS for both runs and the failed steps. Used by
bench_cull.py (row culling) and bench_reuse.py (narrow-phase reuse).
"""
import csv
import os
import subprocess
import sys

from bench import machine_name, run

FIELDS = [("max_penetration_m", "max pen. (m)"), ("kinetic_energy_final_j", "final KE (J)"),
          ("top_drift_m", "top drift (m)"), ("residual_last", "final residual (m/s)"),
          ("cpu_ms_per_step_median", "CPU ms/step")]


def parse_args(argv):
    """BUILD_DIR [--steps N] [--scenes a,b,...] -> (sandbox path, steps or None, scene filter or None)."""
    build = argv[0] if argv and not argv[0].startswith("--") else "build"
    steps = int(argv[argv.index("--steps") + 1]) if "--steps" in argv else None
    only = argv[argv.index("--scenes") + 1].split(",") if "--scenes" in argv else None
    return os.path.join(build, "sandbox"), steps, only


def library_scenes(exe):
    listing = subprocess.run([exe, "list"], capture_output=True, text=True, check=True).stdout
    return [line.split()[0] for line in listing.splitlines() if line.strip()]


def measure(exe, scene, steps, flag, value):
    args = [scene, "--threads", "1", "--overlap-every", "0", "--no-progress", flag, value]
    if steps:
        args += ["--steps", str(steps)]
    r = run(exe, args)
    r["residual_last"] = r["residual_final"]["last"]
    return r


def compare(exe, scenes, steps, only, flag, extra=None):
    """One row per selected scene; extra(off, on) adds columns taken from the two runs."""
    rows = []
    for scene in scenes:
        if only and scene not in only:
            continue
        off, on = measure(exe, scene, steps, flag, "off"), measure(exe, scene, steps, flag, "on")
        row = {"scene": scene, "contact": off["contact"], "steps": off["steps"]}
        for key, _ in FIELDS:
            row[key + "_off"], row[key + "_on"] = off[key], on[key]
        row["failed_steps_off"], row["failed_steps_on"] = off["failed_steps"], on["failed_steps"]
        if extra:
            row.update(extra(off, on))
        rows.append(row)
        print(f"  {scene:18s} {off['cpu_ms_per_step_median']:8.3f} / {on['cpu_ms_per_step_median']:8.3f} CPU ms/step",
              file=sys.stderr)
    if not rows:
        sys.exit(f"{os.path.basename(sys.argv[0])}: no scene selected")
    return rows


def write_csv(rows, name):
    outdir = os.path.join("bench", "results", machine_name())
    os.makedirs(outdir, exist_ok=True)
    path = os.path.join(outdir, name)
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows)
    return path


def cells(row):
    """The FIELDS columns of a markdown row, "off / on" each."""
    return " | ".join(f"{row[k + '_off']:.3g} / {row[k + '_on']:.3g}" for k, _ in FIELDS)
