#!/usr/bin/python3
"""The PneuNet finger's bend against its chambers' pressure, from `sandbox experiment fem-pneunet`.

Usage: /usr/bin/python3 scripts/fem_pneunet_plot.py [DIR]   (reads DIR/fem_pneunet.csv, writes DIR/fem_pneunet.png)
Needs matplotlib (Debian: python3-matplotlib).
"""
import csv
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    folder = sys.argv[1] if len(sys.argv) > 1 else "docs"
    with open(os.path.join(folder, "fem_pneunet.csv")) as f:
        rows = list(csv.DictReader(f))
    p = [float(r["pressure_pa"]) / 1e6 for r in rows]
    fig, (ax, ay) = plt.subplots(1, 2, figsize=(9.6, 4.0))
    ax.plot(p, [1e3 * float(r["tip_down_m"]) for r in rows], "o-", color="tab:blue", ms=4, label="simulated: tip down")
    ax.plot(p, [1e3 * float(r["tip_along_m"]) for r in rows], "s-", color="tab:green", ms=3,
            label="simulated: tip along the finger")
    ax.plot(p, [1e3 * float(r["euler_bernoulli_down_m"]) for r in rows], "--", color="gray",
            label="Euler-Bernoulli, free-swelling layer (linear)")
    ax.set_xlabel("chamber pressure (MPa)")
    ax.set_ylabel("fingertip displacement (mm)")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    ay.plot(p, [float(r["tip_angle_deg"]) for r in rows], "o-", color="tab:red", ms=4)
    ay.set_xlabel("chamber pressure (MPa)")
    ay.set_ylabel("tip rotation (degrees, curling down)")
    ay.grid(alpha=0.3)
    fig.suptitle("PneuNet finger (pneunet_finger, Y = 10 MPa, nu = 0.47): static bend against pressure", fontsize=10)
    fig.tight_layout()
    fig.savefig(os.path.join(folder, "fem_pneunet.png"), dpi=110)


if __name__ == "__main__":
    main()
