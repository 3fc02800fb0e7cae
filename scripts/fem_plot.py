#!/usr/bin/python3
"""Figure 13 of [NSN] from `sandbox experiment fem-extension`: volume against stretch, both materials.

Usage: /usr/bin/python3 scripts/fem_plot.py [DIR]   (reads DIR/fem_extension.csv, writes DIR/fem_extension.png)
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
    with open(os.path.join(folder, "fem_extension.csv")) as f:
        rows = list(csv.DictReader(f))
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    styles = {"linear": ("tab:blue", "corotated linear"), "neohookean": ("tab:red", "stable neo-Hookean")}
    for material, (colour, label) in styles.items():
        mine = [r for r in rows if r["material"] == material]
        s = [float(r["stretch"]) for r in mine]
        ax.plot(s, [float(r["volume_middle"]) for r in mine], "o-", color=colour, ms=3,
                label=f"{label}: simulated, middle third")
        ax.plot(s, [float(r["volume_whole"]) for r in mine], ":", color=colour, label=f"{label}: whole bar")
        ax.plot(s, [float(r["closed_form"]) for r in mine], "--", color=colour, alpha=0.6,
                label=f"{label}: uniaxial stress, closed form")
    ax.set_xlabel("stretch (length / rest length)")
    ax.set_ylabel("volume / rest volume")
    ax.set_title("Extension test ([NSN] figure 13): Y = 1e5 Pa, nu = 0.45")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    path = os.path.join(folder, "fem_extension.png")
    fig.savefig(path, dpi=120)
    print("wrote", path)


main()
