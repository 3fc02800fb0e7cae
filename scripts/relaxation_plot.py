#!/usr/bin/python3
"""Newton, sequential impulses and the soft step at matched CPU time, from `sandbox experiment relaxation`.

Usage: /usr/bin/python3 scripts/relaxation_plot.py [DIR]
(reads DIR/relaxation.csv and DIR/relaxation_summary.csv, writes DIR/relaxation.png)
Needs matplotlib (Debian: python3-matplotlib).
"""
import csv
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

COLOURS = {"newton": "tab:blue", "pgs": "tab:red", "soft": "tab:green"}
FLOOR = 1e-9  # log axes: zeros drawn at this floor


def main():
    folder = sys.argv[1] if len(sys.argv) > 1 else "docs"
    series = {}
    with open(os.path.join(folder, "relaxation.csv")) as f:
        for r in csv.DictReader(f):
            s = series.setdefault((r["scene"], r["method"]), {"knob": r["knob"], "t": [], "pen": [], "drift": [], "res": []})
            s["t"].append(float(r["time_s"]))
            s["pen"].append(max(FLOOR, float(r["max_penetration_m"])))
            s["drift"].append(max(FLOOR, float(r["drift_m"])))
            s["res"].append(max(FLOOR, float(r["residual_m_s"])))
    summary = {}
    with open(os.path.join(folder, "relaxation_summary.csv")) as f:
        for r in csv.DictReader(f):
            summary[(r["scene"], r["method"])] = r
    scenes = []
    for scene, _ in series:
        if scene not in scenes:
            scenes.append(scene)
    fig, axes = plt.subplots(len(scenes), 3, figsize=(13, 2.9 * len(scenes)), squeeze=False)
    for row, scene in enumerate(scenes):
        drift_kind = "drift (m)"
        for (sc, method), s in series.items():
            if sc != scene:
                continue
            info = summary.get((sc, method), {})
            if info.get("drift_kind", "").startswith("largest joint"):
                drift_kind = "joint anchor gap (m)"
            else:
                drift_kind = "top body displacement (m)"
            knob = "" if method == "newton" else (" it " if method == "pgs" else " sub ") + s["knob"]
            label = "%s%s, %.2f ms" % (method, knob, float(info.get("cpu_ms_per_step_mean", "nan")))
            for col, key in enumerate(("pen", "drift", "res")):
                axes[row][col].semilogy(s["t"], s[key], color=COLOURS.get(method, "k"), lw=1, label=label)
        axes[row][0].set_ylabel(scene + "\nmax penetration (m)")
        axes[row][1].set_ylabel(drift_kind)
        axes[row][2].set_ylabel("residual (m/s)")
        axes[row][0].legend(fontsize=7)
        for col in range(3):
            axes[row][col].grid(True, which="major", alpha=0.3)
    for col in range(3):
        axes[-1][col].set_xlabel("time (s)")
    fig.suptitle("Newton vs sequential impulses (pgs) vs soft step at matched CPU time per step (one thread)", fontsize=10)
    fig.tight_layout()
    path = os.path.join(folder, "relaxation.png")
    fig.savefig(path, dpi=110)
    print("wrote", path)


if __name__ == "__main__":
    main()
