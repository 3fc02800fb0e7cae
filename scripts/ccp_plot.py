#!/usr/bin/python3
"""Figures of the CCP experiments from the CSV of `sandbox experiment ccp-all` (docs/ccp.md).

Usage: /usr/bin/python3 scripts/ccp_plot.py [DIR]   (DIR defaults to docs/; reads and writes there)
Writes ccp_pile.png (CCP merit per iteration, solve time per iteration against body count) and ccp_liftoff.png
(the first step's lift against h mu |v_T|, the highest lift over 0.5 s). Needs python3-matplotlib.
"""
import csv
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

COLORS = {"pj": "tab:blue", "pgs": "tab:orange", "apgd": "tab:green", "newton-pcr": "tab:red"}


def rows(path):
    with open(path) as f:
        return list(csv.DictReader(f))


def pile(d):
    res = rows(os.path.join(d, "ccp_pile_residual.csv"))
    tim = rows(os.path.join(d, "ccp_pile_time.csv"))
    sizes = sorted({int(r["size"]) for r in res})
    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4.2))
    for size, style in ((sizes[0], "-"), (sizes[-1], "--")):
        for solver, color in COLORS.items():
            pts = [r for r in res if int(r["size"]) == size and r["solver"] == solver]
            if pts:
                a.semilogy([int(r["iteration"]) for r in pts], [float(r["merit"]) for r in pts], style, color=color,
                           label=f"{solver}, {size} bodies")
    for size, style in ((sizes[0], ":"), (sizes[-1], "-.")):
        tol = [float(r["tolerance"]) for r in tim if int(r["size"]) == size and "tolerance" in r]
        if tol:
            a.axhline(tol[0], linestyle=style, color="gray", linewidth=0.8, label=f"tolerance, {size} bodies")
    a.set_xlabel("iteration (Newton: Newton iteration of 40 PCR ones)")
    a.set_ylabel("CCP merit ||natural residual||_2 (m/s)")
    a.set_title("one step of the pile, from the same warm start")
    a.grid(True, alpha=0.3)
    a.legend(fontsize=7)
    for solver, color in COLORS.items():
        pts = sorted((int(r["bodies"]), float(r["ms_per_iteration"])) for r in tim if r["solver"] == solver)
        if pts:
            b.loglog([p[0] for p in pts], [p[1] for p in pts], "o-", color=color, label=solver)
    b.set_xlabel("bodies")
    b.set_ylabel("solve time per iteration (ms, 1 thread)")
    b.set_title("time per iteration against body count\n(Newton: per Newton iteration, 40 PCR and any APGD fallback)", fontsize=10)
    b.grid(True, which="both", alpha=0.3)
    b.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(d, "ccp_pile.png"), dpi=110)


def liftoff(d):
    data = rows(os.path.join(d, "ccp_liftoff.csv"))
    ccp = [r for r in data if r["model"] == "ccp"]
    std = [r for r in data if r["model"] == "standard"]
    mus = sorted({float(r["mu"]) for r in ccp})
    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4.2))
    for mu in mus:
        pts = sorted((float(r["h"]), float(r["first_lift_m"]), float(r["predicted_m"])) for r in ccp if float(r["mu"]) == mu)
        line, = a.loglog([p[0] for p in pts], [p[2] for p in pts], "-", label=f"h mu |v_T|, mu {mu}")
        a.loglog([p[0] for p in pts], [p[1] for p in pts], "o", color=line.get_color(), label=f"CCP measured, mu {mu}")
        hi = sorted((float(r["h"]), float(r["max_lift_m"])) for r in ccp if float(r["mu"]) == mu)
        b.semilogx([p[0] for p in hi], [1e3 * p[1] for p in hi], "o-", color=line.get_color(), label=f"CCP, mu {mu}")
    worst = max(abs(float(r["max_lift_m"])) for r in std)
    a.set_xlabel("time step h (s)")
    a.set_ylabel("lift of the first step (m)")
    a.set_title(f"slab sliding at 1 m/s: standard model lifts < {worst:.0e} m")
    a.grid(True, which="both", alpha=0.3)
    a.legend(fontsize=6, ncol=2)
    b.set_xlabel("time step h (s)")
    b.set_ylabel("highest lift over 0.5 s (mm)")
    b.set_title("the slab leaves the ground (v_n = mu |v_T|)")
    b.grid(True, which="both", alpha=0.3)
    b.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(os.path.join(d, "ccp_liftoff.png"), dpi=110)


if __name__ == "__main__":
    out = sys.argv[1] if len(sys.argv) > 1 else "docs"
    if os.path.exists(os.path.join(out, "ccp_pile_time.csv")):
        pile(out)
    liftoff(out)
