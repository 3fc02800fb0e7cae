#!/usr/bin/env python3
"""Real time on one CPU core: every library scene's first 2 s against its step (issue 35).

    scripts/bench_realtime.py BUILD [--seconds S] [--before CSV] [--out CSV] [--scenes a,b,...]

Runs `sandbox run SCENE --seconds S --threads 1 --json` for each library scene and writes one row
per scene: CPU ms per step (median, p95), x real time (the step dt over the median CPU time per
step), Newton and linear iterations per step (means), the last step's residual, the deepest
penetration and the failed steps. With --before (an earlier CSV of this script) the earlier
median and x real time stand beside each row. Prints a Markdown table; --out (default
bench/results/<machine>/realtime.csv) keeps the figures. The command line is in the CSV.
"""
import argparse
import csv
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench import machine_name  # noqa: E402

FIELDS = ["scene", "dt_ms", "cpu_ms_median", "cpu_ms_p95", "x_real_time", "newton_per_step", "linear_per_step",
          "residual_final", "max_penetration_m", "failed_steps", "command"]


def measure(exe, scene, seconds):
    args = [exe, "run", scene, "--seconds", str(seconds), "--threads", "1", "--json"]
    out = subprocess.run(args, capture_output=True, text=True, timeout=3600)
    if out.returncode != 0:
        raise RuntimeError("{} failed: {}".format(" ".join(args), out.stderr.strip()))
    j = json.loads(out.stdout.strip().splitlines()[-1])
    dt_ms = 1000 * j["dt"]
    median = j["cpu_ms_per_step_median"]
    return {"scene": scene, "dt_ms": round(dt_ms, 4), "cpu_ms_median": round(median, 3),
            "cpu_ms_p95": round(j["cpu_ms_per_step_p95"], 3), "x_real_time": round(dt_ms / median, 3),
            "newton_per_step": round(j["newton_iters_mean"], 2), "linear_per_step": round(j["linear_iters_mean"], 1),
            "residual_final": "{:.2e}".format(j["residual_final"]["last"]),
            "max_penetration_m": "{:.2e}".format(j["max_penetration_m"]), "failed_steps": j["failed_steps"],
            "command": "sandbox run {} --seconds {} --threads 1 --json".format(scene, seconds)}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("build")
    ap.add_argument("--seconds", type=float, default=2.0)
    ap.add_argument("--before")
    ap.add_argument("--out")
    ap.add_argument("--scenes")
    a = ap.parse_args()
    exe = os.path.join(a.build, "sandbox")
    if a.scenes:
        scenes = a.scenes.split(",")
    else:
        listing = subprocess.run([exe, "list"], capture_output=True, text=True, check=True).stdout
        scenes = [line.split()[0] for line in listing.splitlines() if line.strip() and not line.startswith(" ")]
    before = {}
    if a.before:
        before = {r["scene"]: r for r in csv.DictReader(open(a.before))}
    rows = [measure(exe, s, a.seconds) for s in scenes]
    out = a.out or os.path.join("bench", "results", machine_name(), "realtime.csv")
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with open(out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS)
        w.writeheader()
        w.writerows(rows)
    head = "| scene | step ms | CPU ms median | p95 | x real time | Newton | linear | final residual | max pen. m | failed |"
    if before:
        head += " before: median, x real time |"
    print(head)
    print("|---" * (head.count("|") - 1) + "|")
    for r in rows:
        line = "| {scene} | {dt_ms:.2f} | {cpu_ms_median} | {cpu_ms_p95} | {x_real_time} | {newton_per_step} | " \
               "{linear_per_step} | {residual_final} | {max_penetration_m} | {failed_steps} |".format(**r)
        b = before.get(r["scene"])
        if before:
            line += " {}, {} |".format(b["cpu_ms_median"], b["x_real_time"]) if b else " - |"
        print(line)
    slow = [r["scene"] for r in rows if r["x_real_time"] < 1]
    print("\n{} of {} scenes at or above real time (median); below: {}".format(
        len(rows) - len(slow), len(rows), ", ".join(slow) or "none"))
    print("written: " + out)


if __name__ == "__main__":
    main()
