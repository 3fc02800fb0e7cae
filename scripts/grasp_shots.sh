#!/usr/bin/env bash
# The README's fetch_tomato screenshot series (docs/grasp/): the scene's grasp script played in
# the GUI under Xvfb at 60 frames per simulated second, a PNG at each phase.
#   usage: scripts/grasp_shots.sh [SANDBOX] [OUT_DIR]   (defaults: build/sandbox, docs/grasp)
set -eu
SANDBOX=${1:-build/sandbox}
OUT=${2:-docs/grasp}
mkdir -p "$OUT"
SCRIPT=$(mktemp)
trap 'rm -f "$SCRIPT"' EXIT
cat >"$SCRIPT" <<SCRIPT
0 grasp play
0 show legend off
0 show joints off
0 camera -29 25 1.3 0.15 0.5 0.15
60 screenshot $OUT/fetch_tomato_1_approach.png
150 screenshot $OUT/fetch_tomato_2_close.png
276 screenshot $OUT/fetch_tomato_3_hold.png
372 screenshot $OUT/fetch_tomato_4_carry.png
540 screenshot $OUT/fetch_tomato_5_place.png
690 screenshot $OUT/fetch_tomato_6_settle.png
690 grasp report
SCRIPT
xvfb-run -a -s "-screen 0 1280x720x24" "$SANDBOX" gui fetch_tomato --script "$SCRIPT" --frames 692 \
    --fixed-step --shadows --size 1280x720
