#!/usr/bin/env bash
# Regenerates the GUI screenshots under docs/ (shown in the README), offscreen through EGL:
#   docs/gui_default.png      the default scene with contact points, normals and friction cones
#   docs/gui_compare.png      heavy_stack side by side: standard/pcr against standard/jacobi
#   docs/gui_convergence.png  the plots window: residual against iteration for the last solve
#   usage: scripts/gui_screenshots.sh [SANDBOX]   (default build/sandbox)
set -eu
SANDBOX=${1:-build/sandbox}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

cat >"$TMP/default.script" <<'S'
0 show cones on
0 show shadows on
0 camera -58 24 7.5 1.6 0 1.1
118 key space
S
"$SANDBOX" gui pyramid --headless --shadows --script "$TMP/default.script" --frames 120 \
    --screenshot "$ROOT/docs/gui_default.png"

cat >"$TMP/compare.script" <<'S'
0 show shadows on
0 show cones on
S
"$SANDBOX" gui heavy_stack --headless --shadows --compare 'standard/pcr,standard/jacobi' \
    --script "$TMP/compare.script" --frames 120 --screenshot "$ROOT/docs/gui_compare.png"

cat >"$TMP/plots.script" <<'S'
0 show plots on
0 show shadows on
0 show legend off
0 camera -90 12 3.9 0.9 0 0.45
S
"$SANDBOX" gui card_house --headless --shadows --script "$TMP/plots.script" --frames 40 \
    --screenshot "$ROOT/docs/gui_convergence.png"
