#!/usr/bin/python3
"""Figures of the PLUS reproductions from the CSV of `sandbox experiment plus-all` (docs/plus.md).

Usage: /usr/bin/python3 scripts/plus_plot.py [DIR]   (DIR defaults to docs/; reads and writes there)
Needs matplotlib (Debian: python3-matplotlib).
"""
import csv
import math
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def rows(path):
    with open(path) as f:
        return list(csv.DictReader(f))


def save_velocity_plane(fig, ax, title, path):
    """Axes, title and file of a tangential-velocity-plane plot (figures 8 and 10)."""
    ax.set_xlabel("tangential velocity x (m/s)")
    ax.set_ylabel("tangential velocity y (m/s)")
    ax.set_title(title)
    ax.set_aspect("equal")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def fig8(d):
    data = rows(os.path.join(d, "plus_fig8.csv"))
    fig, ax = plt.subplots(figsize=(6, 5.5))
    colors = {"0.125": "tab:blue", "0.225": "tab:orange", "0.325": "tab:green"}
    for mu, c in colors.items():
        for model, style in (("compliant", "-"), ("plus", "--")):
            pts = [r for r in data if r["model"] == model and r["mu"] == mu]
            ax.plot([float(r["vx"]) for r in pts], [float(r["vy"]) for r in pts], style, color=c,
                    label=f"mu {mu} {'PLUS' if model == 'plus' else 'compliant'}")
        roll = [r for r in data if r["model"] == "plus" and r["mu"] == mu and r["state"] == "1"]
        if roll:
            ax.plot(float(roll[0]["vx"]), float(roll[0]["vy"]), "^", color=c)
    t = [2 * math.pi * k / 64 for k in range(65)]
    ax.plot([0.1 * math.cos(a) for a in t], [0.1 * math.sin(a) for a in t], "k-", lw=1)
    save_velocity_plane(fig, ax, "[PLUS] fig. 8: example 1, compliant (solid) vs PLUS (dashed)",
                        os.path.join(d, "plus_fig8.png"))


def fig10(d):
    data = rows(os.path.join(d, "plus_fig10.csv"))
    summary = {r["theta_max"]: r["intervals"] for r in rows(os.path.join(d, "plus_fig10_summary.csv"))}
    fig8data = rows(os.path.join(d, "plus_fig8.csv"))
    fig, ax = plt.subplots(figsize=(6, 5.5))
    comp = [r for r in fig8data if r["model"] == "compliant" and r["mu"] == "0.125"]
    ax.plot([float(r["vx"]) for r in comp], [float(r["vy"]) for r in comp], "k-", lw=2, label="compliant")
    for th in sorted(summary, key=float):
        pts = [r for r in data if r["theta_max"] == th]
        ax.plot([float(r["vx"]) for r in pts], [float(r["vy"]) for r in pts], "--o", ms=2,
                label=f"PLUS theta_max {th} rad ({summary[th]} intervals)")
    save_velocity_plane(fig, ax, "[PLUS] fig. 10: convergence as theta_max shrinks (mu 0.125)",
                        os.path.join(d, "plus_fig10.png"))


def fig12(d):
    data = rows(os.path.join(d, "plus_fig12.csv"))
    fig, axes = plt.subplots(1, 2, figsize=(10, 4.5), sharey=True)
    for ax, side in zip(axes, ("left", "right")):
        points = sorted({r["point"] for r in data if r["side"] == side})
        p = points[0]   # its mirror image has the same impulses
        for model, style in (("compliant", "-"), ("plus", "--o")):
            pts = [r for r in data if r["model"] == model and r["point"] == p]
            xs = [0.0] + [float(r["pz"]) for r in pts]
            ax.plot(xs, [0.0] + [float(r["px"]) for r in pts], style, ms=3, label=f"{model}: x (tangential)")
        ax.set_xlabel("accumulated normal impulse (N s)")
        ax.set_title(f"{side} points")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
    axes[0].set_ylabel("accumulated tangential impulse (N s)")
    fig.suptitle("[PLUS] fig. 12: four-point impact, compliant (solid) vs PLUS (dashed)")
    fig.tight_layout()
    fig.savefig(os.path.join(d, "plus_fig12.png"), dpi=110)


def fig15(d):
    data = rows(os.path.join(d, "plus_fig15.csv"))
    comp = [r for r in data if r["model"] == "compliant"]
    plus = [r for r in data if r["model"] == "plus"]
    fig, ax = plt.subplots(figsize=(6, 4.5))
    E = [float(r["stiffness_pa"]) / 1e9 for r in comp]
    n = comp[0]["repeats"] if comp else "?"
    ax.loglog(E, [1e3 * float(r["cpu_median_s"]) for r in comp], "o-",
              label=f"compliant (RK-Merson, tol 1e-5), median of {n}")
    ax.loglog(E, [1e3 * float(r["cpu_min_s"]) for r in comp], "v", color="C0", alpha=0.6, label="compliant, least")
    if plus:
        ax.loglog([E[0], E[-1]], [1e3 * float(plus[0]["cpu_median_s"])] * 2, "s--", color="C1",
                  label=f"PLUS, median of {plus[0]['repeats']} x 100 solves")
    ax.set_xlabel("stiffness E (GPa)")
    ax.set_ylabel("thread CPU time of the impact (ms)")
    ax.set_title("[PLUS] fig. 15: triple pendulum impact")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(d, "plus_fig15.png"), dpi=110)


def main():
    d = sys.argv[1] if len(sys.argv) > 1 else "docs"
    for f in (fig8, fig10, fig12, fig15):
        f(d)
        print(f"wrote {d}/{f.__name__.replace('fig', 'plus_fig')}.png")


if __name__ == "__main__":
    main()
