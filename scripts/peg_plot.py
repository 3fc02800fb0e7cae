#!/usr/bin/python3
"""Draws the pouring experiment of [PEG] section 6 from `sandbox experiment` CSVs.

usage: scripts/peg_plot.py docs/peg_pour3d  [title note]
reads  <base>_overlap.csv (figures 21/24: median and quartiles of the per-step overlap per step
       size, per model variant) and <base>_traps.csv (figure 22: feature pairs and SM traps per step
       of one PEG run); writes <base>.png."""
import csv, sys
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

base = sys.argv[1]
note = sys.argv[2] if len(sys.argv) > 2 else ""
area = base.endswith("pour2d")
rows = list(csv.DictReader(open(base + "_overlap.csv")))
fig, ax = plt.subplots(1, 3, figsize=(17, 4.8))
ax = list(ax)
traps_ax = ax[2]
floor = 1e-18
labels = {"standard": "standard", "hyperplane": "standard, hyperplane faces", "peg": "PEG"}
for model, colour in (("standard", "tab:red"), ("hyperplane", "tab:orange"), ("peg", "tab:blue")):
    r = sorted((x for x in rows if x["model"] == model), key=lambda x: float(x["dt"]))
    if not r:
        continue
    dt = [float(x["dt"]) for x in r]
    med = [max(float(x["median"]), floor) for x in r]
    q1 = [max(float(x["q1"]), floor) for x in r]
    q3 = [max(float(x["q3"]), floor) for x in r]
    ax[0].plot(dt, med, "o-", color=colour, label=f"{labels[model]} median")
    ax[0].fill_between(dt, q1, q3, color=colour, alpha=0.2, label=f"{labels[model]} quartiles")
    bad = [(d, m) for d, m, x in zip(dt, med, r) if int(x["failed_runs"]) > 0 or int(x["exploded_runs"]) > 0]
    if bad:
        ax[0].plot([b[0] for b in bad], [b[1] for b in bad], "x", color=colour, markersize=12, mew=2,
                   label=f"{labels[model]}: a run failed or exploded")
# Failed or exploded runs per step size and variant (the paper: "the simulation frequently crashed").
present = [m for m in labels if any(x["model"] == m for x in rows)]
dts = sorted({float(x["dt"]) for x in rows})
width = 0.8 / max(1, len(present))
colours = {"standard": "tab:red", "hyperplane": "tab:orange", "peg": "tab:blue"}
for k, model in enumerate(present):
    by = {float(x["dt"]): x for x in rows if x["model"] == model}
    ax[1].bar([i + (k - (len(present) - 1) / 2) * width for i in range(len(dts))],
              [int(by[d]["failed_runs"]) if d in by else 0 for d in dts], width, color=colours[model],
              label=labels[model])
ax[1].set_xticks(range(len(dts)))
ax[1].set_xticklabels([f"{d:.3g}" for d in dts], rotation=60, fontsize=7)
ax[1].set_xlabel("step size h (s)")
ax[1].set_ylabel("runs (of %s)" % (rows[0]["runs"] if rows else "?"))
ax[1].set_title("runs with a failed step or an explosion")
ax[1].legend(fontsize=8)
ax[1].grid(True, axis="y", alpha=0.3)
ax[0].set_xscale("log")
ax[0].set_yscale("log")
ax[0].set_xlabel("step size h (s)")
ax[0].set_ylabel("overlap area (m^2)" if area else "overlap volume (m^3)")
ax[0].set_title(("figure 21" if area else "figure 24") + ": overlap at the end of each step")
ax[0].legend(fontsize=8)
ax[0].grid(True, which="both", alpha=0.3)
try:
    tr = list(csv.DictReader(open(base + "_traps.csv")))
    t = [float(x["time"]) for x in tr]
    traps_ax.plot(t, [int(x["feature_pairs"]) for x in tr], color="k", lw=0.8, label="feature pairs (contacts)")
    traps_ax.plot(t, [int(x["sm_traps"]) for x in tr], color="tab:red", lw=0.8, label="SM traps")
    steps = len(tr)
    with_trap = sum(1 for x in tr if int(x["sm_traps"]) > 0)
    traps_ax.set_title(f"figure 22: SM traps (PEG run; {with_trap}/{steps} steps have one)")
    traps_ax.set_xlabel("time (s)")
    traps_ax.legend(fontsize=8)
    traps_ax.grid(True, alpha=0.3)
except FileNotFoundError:
    traps_ax.set_visible(False)
if note:
    fig.suptitle(note, fontsize=9)
fig.tight_layout()
fig.savefig(base + ".png", dpi=110)
print("wrote", base + ".png")
