#!/usr/bin/env bash
# The README's screenshot series of [NSN] figure 1 (docs/grasp/): fetch_tomato_fem's grasp script
# (the FEM tomato) played in the GUI under Xvfb at 60 frames per simulated second, a PNG at each
# phase. The tomato is coloured by its von Mises stress on a fixed 0..2 kPa scale (its weight over
# its cross-section is 0.17 kg x 9.81 / (pi 0.035^2) = 0.44 kPa); the contact points are off so
# that the tomato is not hidden under its node contacts; the camera follows the gripper for the
# pick and the scale for the place.
#   usage: scripts/grasp_shots.sh [SANDBOX] [OUT_DIR]   (defaults: build/sandbox, docs/grasp)
set -eu
SANDBOX=${1:-build/sandbox}
OUT=${2:-docs/grasp}
mkdir -p "$OUT"
SCRIPT=$(mktemp)
trap 'rm -f "$SCRIPT"' EXIT
cat >"$SCRIPT" <<SCRIPT
0 grasp play
0 show settings off
0 show joints off
0 show contacts off
0 show normals off
0 show strain on
0 fem field vonmises
0 fem range 0 2000
0 camera -78 14 0.62 0.02 0 0.16
60 screenshot $OUT/fetch_tomato_1_approach.png
150 screenshot $OUT/fetch_tomato_2_close.png
200 camera -78 14 0.62 0.02 0 0.26
276 screenshot $OUT/fetch_tomato_3_lift.png
300 camera -62 22 0.9 0.03 0.3 0.16
372 screenshot $OUT/fetch_tomato_4_carry.png
516 screenshot $OUT/fetch_tomato_5_place.png
690 screenshot $OUT/fetch_tomato_6_released.png
60 grasp report
150 grasp report
276 grasp report
372 grasp report
516 grasp report
690 grasp report
SCRIPT
xvfb-run -a -s "-screen 0 1280x720x24" "$SANDBOX" gui fetch_tomato_fem --script "$SCRIPT" --frames 692 \
    --fixed-step --shadows --size 1280x720
# Palette PNGs: the shots are a few colours of flat shading and text, so 256 colours keep them
# under 300 KB each.
if command -v ffmpeg >/dev/null 2>&1; then
    for f in "$OUT"/fetch_tomato_*.png; do
        ffmpeg -loglevel error -y -i "$f" -vf "split[a][b];[a]palettegen=max_colors=256[p];[b][p]paletteuse=dither=none" \
            "$f.tmp.png" && mv "$f.tmp.png" "$f"
    done
fi
