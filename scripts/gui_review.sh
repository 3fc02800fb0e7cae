#!/usr/bin/env bash
# Screenshots for reviewing the app as its user sees it, at 1280x720 (the default window) and
# 1920x1080, under Xvfb (a window) when it is installed, else offscreen through EGL:
#   settings_W.png          the default scene, settings panel and legend
#   help_tooltip_W.png      a (?) tooltip hovered
#   forces_SCENE_W.png      contact forces on box_on_plane, pyramid, arch, table_pile
#   cones_SCENE_W.png       friction cones on card_house and table_pile
#   peg_legend_W.png        sm_trap under PEG: its markers and the legend
#   compare_W.png           heavy_stack, standard/pcr beside standard/jacobi, table and plots
#   orbit_low_W.png         the camera orbited down as far as it goes
#   reset_W.png             after R: time and step counter back to 0
#   recording_W.png         a recording started with M: its path in the footer
#   shift_drag_W.png        box_on_plane, shift-dragged 150 px and held (drag reports in the log)
#   usage: scripts/gui_review.sh OUT_DIR [SANDBOX]   (default build/sandbox)
set -eu
OUT=$1
SANDBOX=${2:-build/sandbox}
mkdir -p "$OUT"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# shot NAME WxH SCENE FRAMES [sandbox options...] < script
shot() {
    local name=$1 size=$2 scene=$3 frames=$4
    shift 4
    cat >"$TMP/$name.script"
    local args=(gui "$scene" --script "$TMP/$name.script" --frames "$frames" --size "$size"
                --screenshot "$OUT/$name.png" "$@")
    if [ "${HEADLESS:-0}" = 0 ] && command -v xvfb-run >/dev/null 2>&1; then
        xvfb-run -a -s "-screen 0 ${size}x24" "$SANDBOX" "${args[@]}" >"$OUT/$name.log" 2>&1
    else
        "$SANDBOX" "${args[@]}" --headless >"$OUT/$name.log" 2>&1
    fi
}

for size in 1280x720 1920x1080; do
    w=${size%x*}
    shot "settings_$w" $size pyramid 30 <<'S'
0 show legend on
S
    # The (?) after "hyperplane faces", the second marker of the panel.
    shot "help_tooltip_$w" $size pyramid 12 <<'S'
5 hover help 1
S
    for scene in box_on_plane pyramid arch table_pile; do
        shot "forces_${scene}_$w" $size $scene 60 <<'S'
0 show forces on
0 show normals off
S
    done
    for scene in card_house table_pile; do
        shot "cones_${scene}_$w" $size $scene 60 <<'S'
0 show cones on
0 show normals off
S
    done
    shot "peg_legend_$w" $size sm_trap 60 --model peg <<'S'
0 show legend on
S
    shot "compare_$w" $size heavy_stack 240 --compare 'standard/pcr,standard/jacobi' <<'S'
0 show plots on
S
    shot "orbit_low_$w" $size box_on_plane 40 <<'S'
5 cursor 900 80
6 press left
6 moveby 0 -500 20
30 release left
S
    shot "reset_$w" $size box_on_plane 40 <<'S'
30 key r
S
    # A recording started with M: the footer shows where it goes (the capture directory).
    shot "recording_$w" $size box_on_plane 30 --capture-dir "$OUT/captures" <<'S'
10 key m
S
    shot "shift_drag_$w" $size box_on_plane 200 <<'S'
0 show legend off
60 aim box
61 press left shift
61 moveby 150 0 10
80 report
120 report
160 report
199 report
S
done
echo "gui_review: screenshots in $OUT"
