#!/usr/bin/env bash
# Frame rate of the sandbox (rendering + stepping + UI) on the default scene and on a pile of
# 1,000 boxes, offscreen at 1280x720 through EGL, each for N frames in real-time mode.
#   usage: scripts/gui_fps.sh [SANDBOX] [FRAMES]
set -eu
SANDBOX=${1:-build/sandbox}
FRAMES=${2:-120}   # >= 60
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
# 1,000 boxes (0.1 m half extents) in a 10 x 10 x 10 grid dropped onto the ground.
cat >"$TMP/pile1000.json" <<'J'
{"format": 1, "name": "pile1000", "description": "1,000 boxes dropped in a 10 x 10 x 10 grid.",
 "duration": 4.0, "camera": {"eye": [6, -8, 5], "target": [0, 0, 1]},
 "bodies": [{"generator": "ground"},
  {"generator": "grid", "counts": [10, 10, 10], "spacing": [0.25, 0.25, 0.25],
   "body": {"name": "box", "shape": {"type": "box", "half_extents": [0.1, 0.1, 0.1]},
            "position": [-1.125, -1.125, 0.15], "density": 500}}]}
J
# Paused after 1 s of simulated time: the rendering and UI alone.
printf '0 camera -60 30 9 0 0 0.5\n60 key space\n' >"$TMP/pause.script"
echo "# cores $(getconf _NPROCESSORS_ONLN), load average $(cut -d' ' -f1 /proc/loadavg), 1280x720, EGL offscreen"
for scene in pyramid "$TMP/pile1000.json"; do
    for shadows in --no-shadows --shadows; do
        out=$("$SANDBOX" gui "$scene" --headless $shadows --frames "$FRAMES" 2>&1 | tail -1)
        echo "$(basename "$scene" .json) $shadows stepping: $out"
        out=$("$SANDBOX" gui "$scene" --headless $shadows --fixed-step --script "$TMP/pause.script" \
              --frames $((2 * FRAMES)) 2>&1 | tail -1)
        echo "$(basename "$scene" .json) $shadows paused at frame 60 (second half: render + UI only): $out"
    done
done
