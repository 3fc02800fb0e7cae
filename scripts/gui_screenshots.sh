#!/usr/bin/env bash
# Regenerates the GUI screenshots under docs/ (shown in the README), offscreen through EGL:
#   docs/gui_default.png      the default scene with contact points, normals and friction cones
#   docs/gui_compare.png      heavy_stack side by side: standard/pcr against standard/jacobi
#   docs/gui_convergence.png  the plots window: residual against iteration for the last solve
#   docs/gui_plus_replay.png  the PLUS impact replay on newtons_cradle (round 3 of table 2's five)
#   docs/gui_plus_replay_brick.png  the replay of [PLUS] example 1 (brick_impact), mid-impact
#   docs/gui_pour3d_compare.png     pour3d: standard beside PEG behind see-through walls
#   docs/fem_cantilever_strain.png  the cantilever bent by hand, strain colours on
#   docs/fem_pneunet_bent.png  the PneuNet finger bent by its arches' pressure, by the solver
# (scripts/gui_review.sh takes the screenshots for reviewing the layout at 1280x720 and 1920x1080.)
#   usage: scripts/gui_screenshots.sh [SANDBOX]   (default build/sandbox)
set -eu
SANDBOX=${1:-build/sandbox}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

cat >"$TMP/default.script" <<'S'
0 show cones on
0 show shadows on
0 camera -58 20 14 0.8 0 2.4
20 key space
S
# Paused at 0.33 s: the pile falls asleep (grey, its last contacts still drawn) within a second.
"$SANDBOX" gui pyramid --headless --shadows --script "$TMP/default.script" --frames 22 \
    --screenshot "$ROOT/docs/gui_default.png"

cat >"$TMP/compare.script" <<'S'
0 show shadows on
0 show cones on
S
"$SANDBOX" gui heavy_stack --headless --shadows --compare 'standard/pcr,standard/jacobi' \
    --script "$TMP/compare.script" --frames 120 --screenshot "$ROOT/docs/gui_compare.png"

cat >"$TMP/pour3d.script" <<'S'
0 show shadows on
S
"$SANDBOX" gui pour3d --headless --shadows --compare 'standard/pcr,peg/pcr' --size 1600x800 \
    --script "$TMP/pour3d.script" --frames 557 --screenshot "$ROOT/docs/gui_pour3d_compare.png"

cat >"$TMP/plots.script" <<'S'
0 show plots on
0 show shadows on
0 show legend off
0 camera -90 12 3.9 0.9 0 0.45
S
"$SANDBOX" gui card_house --headless --shadows --script "$TMP/plots.script" --frames 40 \
    --screenshot "$ROOT/docs/gui_convergence.png"

# The PLUS impact replay, under Xvfb when it is installed (a window, as a user sees it), else
# offscreen. The simulation pauses at the impact; the script frames it and picks an interval.
gui() {
    if command -v xvfb-run >/dev/null 2>&1; then
        xvfb-run -a -s "-screen 0 1280x720x24" "$SANDBOX" gui "$@" --shadows
    else
        "$SANDBOX" gui "$@" --headless --shadows
    fi
}
cat >"$TMP/cradle.script" <<'S'
0 show impact on
0 show legend off
0 show shadows on
20 impact frame
20 impact plot velocity normal
20 impact index 3
S
gui newtons_cradle --model plus --script "$TMP/cradle.script" --frames 24 --size 1280x720 \
    --screenshot "$ROOT/docs/gui_plus_replay.png"

cat >"$TMP/brick.script" <<'S'
0 show impact on
0 show legend off
0 show shadows on
0 camera -35 18 3 0 0 0.3
10 impact frame
10 impact index 70
S
gui brick_impact --model plus --script "$TMP/brick.script" --frames 14 --size 1280x720 \
    --screenshot "$ROOT/docs/gui_plus_replay_brick.png"

# Deformable bodies deformed by hand (--fem-deform; paused at once, so the solver does not undo
# it): strain colours, the rest shape as a wireframe, the pinned and attached nodes.
cat >"$TMP/cantilever.script" <<'S'
0 key space
0 show strain on
0 show rest on
0 show contacts off
0 show normals off
0 camera -72 12 0.85 0.02 0 0.42
S
gui fem_cantilever --fem-deform bend:-1.2 --script "$TMP/cantilever.script" --frames 6 --size 1280x720 \
    --screenshot "$ROOT/docs/fem_cantilever_strain.png"
# The PneuNet finger bent by the solver: its arches' activation at 1e8 Pa (the slider's top), let
# settle for 1.25 s (150 fixed steps), coloured by volumetric strain, the rest shape as a wireframe
# (docs/fem_pneunet.md).
cat >"$TMP/finger.script" <<'S'
0 fem pressure 1e8
0 show strain on
0 show rest on
0 show contacts off
0 show normals off
0 camera -75 10 0.3 0.06 0 0.16
75 key space
S
gui pneunet_finger --fixed-step --script "$TMP/finger.script" --frames 77 --size 1280x720 \
    --screenshot "$ROOT/docs/fem_pneunet_bent.png"
