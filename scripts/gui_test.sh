#!/usr/bin/env bash
# GUI smoke test (ctest gui_smoke): runs the sandbox for 90 frames on friction_ramp with a scripted
# drag, takes a screenshot, and checks from the PNG's pixels (cs_png_check) that the bodies, the
# contact markers and the UI were drawn, and from the app's drag reports that the dragged body
# moved toward the cursor. Then opens the PLUS impact replay on newtons_cradle, steps it interval
# by interval and checks its reports against [PLUS] table 2 (five rounds, the phase of every
# pair in every round) and the conservation of momentum and energy. Then the layout at the
# default 1280x720 window (the settings fit, tooltips stay on screen, the plots cover no copy,
# R restarts the step counter, the camera stays above the floor, PEG's legend, captures go to
# --capture-dir and are named in the footer). Also checks the error paths: no display, a bad
# scene file.
#
# It runs under Xvfb when xvfb-run is installed, else offscreen through EGL (--headless); it
# exits 77 (ctest SKIP) only when neither can give an OpenGL 3.3 context.
#   usage: gui_test.sh SANDBOX PNG_CHECK OUT_DIR
set -u
SANDBOX=$1
CHECK=$2
OUT=$3
mkdir -p "$OUT"
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
fail() { echo "gui_smoke: FAIL: $*"; exit 1; }

# ---- error paths: a clear message and a non-zero status, never a crash --------------------
env -u DISPLAY -u WAYLAND_DISPLAY "$SANDBOX" gui friction_ramp --frames 1 >"$OUT/nodisplay.log" 2>&1
rc=$?
[ $rc -eq 1 ] || fail "no display: expected status 1, got $rc ($(cat "$OUT/nodisplay.log"))"
grep -q "cannot open a window" "$OUT/nodisplay.log" || fail "no display: no clear message"
echo '{"format": 1, "bodies": [' >"$OUT/bad_scene.json"
"$SANDBOX" gui "$OUT/bad_scene.json" --headless --frames 1 >"$OUT/badscene.log" 2>&1
rc=$?
[ $rc -ge 1 ] && [ $rc -lt 128 ] || fail "bad scene: expected a clean error status, got $rc"
grep -q "bad_scene.json" "$OUT/badscene.log" || fail "bad scene: message does not name the file"

# ---- the scripted drag --------------------------------------------------------------------
cat >"$OUT/drag.script" <<'SCRIPT'
0 show legend off      # the legend's swatches share the marker colours
0 show cones on
0 show normals on
20 aim auto
21 press left
22 report              # grabbed point and target at the press: the same point
22 moveby -40 -160 40  # pull it up and towards the camera's left over 40 frames
88 report              # grabbed point and target at the end
SCRIPT
ARGS=(gui friction_ramp --script "$OUT/drag.script" --frames 90 --screenshot "$OUT/gui.png" --size 1280x720)
rm -f "$OUT/gui.png"
MODE=none
if command -v xvfb-run >/dev/null 2>&1 && command -v Xvfb >/dev/null 2>&1; then
    xvfb-run -a -s "-screen 0 1280x720x24" "$SANDBOX" "${ARGS[@]}" >"$OUT/gui.log" 2>&1 && MODE=xvfb
fi
if [ $MODE = none ]; then
    "$SANDBOX" "${ARGS[@]}" --headless >"$OUT/gui.log" 2>&1 && MODE=egl
fi
if [ $MODE = none ]; then
    if grep -qE "cannot open a window|EGL|OpenGL 3.3" "$OUT/gui.log"; then
        echo "gui_smoke: SKIP: neither Xvfb nor EGL gives an OpenGL 3.3 context here:"
        cat "$OUT/gui.log"
        exit 77
    fi
    cat "$OUT/gui.log"
    fail "the sandbox failed"
fi
echo "gui_smoke: ran under $MODE"
cat "$OUT/gui.log"
[ -s "$OUT/gui.png" ] || fail "no screenshot"

# ---- pixels --------------------------------------------------------------------------------
# UI: the settings panel's opaque background (0.10, 0.105, 0.115) = (26, 27, 29).
# Contact markers: contact_model.cpp's point colours, yellow (1, 0.85, 0.1) and red (1, 0.1, 0.1).
# Bodies: saturated, lit pixels (the ground, the ramps, the background and the panel are grey).
"$CHECK" "$OUT/gui.png" --count panel 26 27 29 2 --count marker 255 217 26 8 --count penetrating 255 26 26 8 \
    --saturated 0.35 >"$OUT/pixels.txt" || fail "cannot read the screenshot"
cat "$OUT/pixels.txt"
get() { awk -v k="$1" -v n="$2" '$1 == k && (n == "" || $2 == n) { print $NF }' "$OUT/pixels.txt"; }
read -r W H < <(awk '$1 == "size" { print $2, $3 }' "$OUT/pixels.txt")
[ "$W" = 1280 ] && [ "$H" = 720 ] || fail "screenshot is ${W}x${H}, expected 1280x720"
panel=$(get count panel); marker=$(get count marker); pen=$(get count penetrating); sat=$(get saturated "")
[ "$panel" -ge 40000 ] || fail "UI not drawn: $panel panel pixels (< 40000)"
[ $((marker + pen)) -ge 40 ] || fail "contact markers not drawn: $((marker + pen)) marker pixels (< 40)"
[ "$sat" -ge 5000 ] || fail "bodies not drawn: $sat coloured pixels (< 5000)"

# ---- the drag: the grabbed point moved toward the cursor's target -------------------------
first=$(grep '^drag-report frame=22 ' "$OUT/gui.log")
last=$(grep '^drag-report frame=88 ' "$OUT/gui.log")
[ -n "$first" ] && [ -n "$last" ] || fail "no drag reports (did the aim hit a body?)"
echo "$first" | grep -q 'body=-1' && fail "nothing was grabbed"
awk -v a="$first" -v b="$last" 'function vec(s, key, v,   m) {
        match(s, key "=[-0-9.e]+,[-0-9.e]+,[-0-9.e]+"); split(substr(s, RSTART + length(key) + 1, RLENGTH - length(key) - 1), v, ",") }
    function dist(p, q) { return sqrt((p[1]-q[1])^2 + (p[2]-q[2])^2 + (p[3]-q[3])^2) }
    BEGIN {
        vec(a, "point", p0); vec(b, "point", p1); vec(b, "target", t)
        d0 = dist(p0, t); d1 = dist(p1, t); moved = dist(p0, p1)
        printf "gui_smoke: target %.3f m from the grabbed point at the press, %.3f m at the end (moved %.3f m)\n", d0, d1, moved
        if (d0 < 0.2) { print "gui_smoke: FAIL: the cursor target hardly moved"; exit 1 }
        if (!(d1 < 0.5 * d0) || moved < 0.1) { print "gui_smoke: FAIL: the dragged body did not follow the cursor"; exit 1 }
    }' || exit 1
# ---- the PLUS impact replay on newtons_cradle ([PLUS] example 3, table 2) -------------------
# The window pauses the simulation at the impact; the script steps the replay interval by
# interval and prints a report per index (impact_replay.h): rounds, intervals, the round shown,
# per point its phase (C/E/O) and slip state, and the balls' total momentum and kinetic energy.
cat >"$OUT/impact.script" <<'SCRIPT'
0 show impact on
0 show legend off
30 impact report        # paused at the impact: index 0, before it
31 impact step
31 impact report
32 impact step
32 impact report
33 impact step
33 impact report
34 impact step
34 impact report
35 impact step
35 impact report
36 impact index end
36 impact report
SCRIPT
IARGS=(gui newtons_cradle --model plus --script "$OUT/impact.script" --frames 40 --screenshot "$OUT/impact.png" --size 1280x720)
rm -f "$OUT/impact.png"
if [ $MODE = xvfb ]; then
    xvfb-run -a -s "-screen 0 1280x720x24" "$SANDBOX" "${IARGS[@]}" >"$OUT/impact.log" 2>&1 || { cat "$OUT/impact.log"; fail "impact replay run failed"; }
else
    "$SANDBOX" "${IARGS[@]}" --headless >"$OUT/impact.log" 2>&1 || { cat "$OUT/impact.log"; fail "impact replay run failed"; }
fi
grep '^impact-report' "$OUT/impact.log"
[ "$(grep -c '^impact-report copy=' "$OUT/impact.log")" -eq 7 ] || fail "impact replay: expected 7 reports of a captured impact"
# Table 2: five rounds; in round j the pair (ball_{j-1}, ball_j) compresses, the pair before it
# expands, the others observe. Total momentum stays -2 kg m/s at every interval (no external
# impulse), and the kinetic energy is 2 J before and after the impact (COR 1).
awk 'function field(k,   i, kv) { for (i = 2; i <= NF; ++i) { split($i, kv, "="); if (kv[1] == k) return kv[2] } return "" }
    /^impact-report copy=/ {
        ++n; rounds = field("rounds"); intervals = field("intervals"); index_ = field("index"); round = field("round")
        if (rounds != 5) { printf "gui_smoke: FAIL: %d rounds, table 2 has 5\n", rounds; bad = 1 }
        if (intervals < 5) { printf "gui_smoke: FAIL: %d intervals (< 5)\n", intervals; bad = 1 }
        if (field("points") != 4) { printf "gui_smoke: FAIL: %s points, expected the 4 touching pairs\n", field("points"); bad = 1 }
        split(field("momentum"), p, ",")
        if (p[1] + 2 > 1e-6 || p[1] + 2 < -1e-6) { printf "gui_smoke: FAIL: momentum %s at index %d\n", p[1], index_; bad = 1 }
        e = field("energy")
        if ((index_ == 0 || index_ == intervals) && (e - 2 > 1e-6 || e - 2 < -1e-6)) { printf "gui_smoke: FAIL: kinetic energy %s J at index %d\n", e, index_; bad = 1 }
        if (index_ > 0) seen[index_] = 1
        if (index_ < 1) next
        for (i = 2; i <= NF; ++i) {
            if ($i !~ /^ball_[0-9]\|ball_[0-9]=/) continue
            a = substr($i, 6, 1) + 0; b = substr($i, 13, 1) + 0; lo = a < b ? a : b
            ph = substr($i, index($i, "=") + 1, 1)
            want = lo == round - 1 ? "C" : (lo == round - 2 ? "E" : "O")
            if (ph != want) { printf "gui_smoke: FAIL: round %d: %s is %s, table 2 says %s\n", round, $i, ph, want; bad = 1 }
            ++checked
        }
        if (index_ == intervals) last = round
    }
    END {
        if (checked < 20) { printf "gui_smoke: FAIL: only %d point phases checked\n", checked; exit 1 }
        if (last != 5) { printf "gui_smoke: FAIL: the last interval is in round %s, not 5\n", last; exit 1 }
        if (bad) exit 1
        printf "gui_smoke: impact replay: 5 rounds, %d point phases match table 2, momentum and energy conserved\n", checked
    }' "$OUT/impact.log" || exit 1
[ -s "$OUT/impact.png" ] || fail "no impact screenshot"
# The round timeline's cells in the phase colours: compressing (1, 0.3, 0.2), expanding (0.2, 0.8, 1).
"$CHECK" "$OUT/impact.png" --count compressing 255 77 51 2 --count expanding 51 204 255 2 >"$OUT/impact_pixels.txt" ||
    fail "cannot read the impact screenshot"
cat "$OUT/impact_pixels.txt"
comp=$(awk '$1 == "count" && $2 == "compressing" { print $NF }' "$OUT/impact_pixels.txt")
expd=$(awk '$1 == "count" && $2 == "expanding" { print $NF }' "$OUT/impact_pixels.txt")
[ "$comp" -ge 500 ] && [ "$expd" -ge 500 ] || fail "impact timeline not drawn: $comp compressing, $expd expanding pixels (< 500)"

# ---- the layout at the default 1280x720 window (issue 22, item 13) --------------------------
# The app prints "ui-report" lines (app/gui/ui_report.cpp): window rectangles, whether the
# settings fit their area, the last tooltip, the legend, the step counter, the camera.
run_gui() {   # run_gui NAME SANDBOX-ARGS...: the log in $OUT/NAME.log
    local name=$1
    shift
    if [ $MODE = xvfb ]; then
        xvfb-run -a -s "-screen 0 1280x720x24" "$SANDBOX" gui "$@" --size 1280x720 >"$OUT/$name.log" 2>&1
    else
        "$SANDBOX" gui "$@" --size 1280x720 --headless >"$OUT/$name.log" 2>&1
    fi || { cat "$OUT/$name.log"; fail "$name run failed"; }
}
ui() { awk -v f="$2" -v k="$3" '$1 == "ui-report" && $2 == "frame=" f && $3 == k { $1 = $2 = $3 = ""; print substr($0, 4) }' "$OUT/$1.log"; }
rect() { ui "$1" "$2" rect | awk -v n="$3" '$1 == n { print $2, $3, $4, $5 }'; }
inside() {   # inside "x y w h": within the 1280x720 window
    awk -v r="$1" 'BEGIN { split(r, a, " "); exit !(a[3] > 0 && a[1] >= 0 && a[2] >= 0 && a[1] + a[3] <= 1280 && a[2] + a[4] <= 720) }'
}
overlap() {  # overlap "x y w h" "x y w h": the two rectangles share pixels
    awk -v r="$1" -v q="$2" 'BEGIN { split(r, a, " "); split(q, b, " ")
        exit !(a[1] < b[1] + b[3] && b[1] < a[1] + a[3] && a[2] < b[2] + b[4] && b[2] < a[2] + a[4]) }'
}
cat >"$OUT/layout.script" <<'SCRIPT'
0 show legend on
5 hover help 1          # the (?) after "hyperplane faces", a long tooltip
12 ui report
20 key r
22 ui report            # two frames after R: t and the step counter restarted together
24 cursor 900 80        # orbit down as far as the mouse goes
25 press left
25 moveby 0 -600 10
36 release left
38 ui report
SCRIPT
run_gui layout pyramid --script "$OUT/layout.script" --frames 40
grep '^ui-report' "$OUT/layout.log" | grep -v ' legend '
read -r content _ area < <(ui layout 12 settings-content)
[ -n "$content" ] && awk -v c="$content" -v a="$area" 'BEGIN { exit !(c <= a) }' ||
    fail "layout: the settings need $content px, their area has $area (the panel scrolls at 1280x720)"
for r in show-header footer settings; do
    inside "$(rect layout 12 $r)" || fail "layout: $r at ($(rect layout 12 $r)) is not within 1280x720"
done
tip=$(ui layout 12 tooltip)
inside "$tip" || fail "layout: the hovered tooltip ($tip) runs off the 1280x720 window"
read -r steps _ time < <(ui layout 22 steps)
awk -v s="$steps" -v t="$time" 'BEGIN { exit !(s < 10 && (s / 120 - t) ^ 2 < 1e-10) }' ||
    fail "layout: after R the panel reads step $steps at t = $time s"
read -r _ eyez _ floor _ < <(ui layout 38 camera)
awk -v e="$eyez" -v f="$floor" 'BEGIN { exit !(e > f) }' || fail "layout: the camera orbited below the floor (eye z $eyez, floor $floor)"
echo "gui_smoke: layout: settings ${content}/${area} px, tooltip ($tip), step $steps at t = $time after R, eye z $eyez over floor $floor"

# Sleeping bodies are greyed (scene_renderer.cpp) and the legend says so while one sleeps:
# a box dropped 10 cm lands, rests 0.5 s and falls asleep (engine/solver/islands.h).
cat >"$OUT/asleep.script" <<'SCRIPT'
0 show legend on
5 ui report
196 ui report
SCRIPT
run_gui asleep box_on_plane --script "$OUT/asleep.script" --frames 198
ui asleep 5 legend | grep -q '^asleep' && fail "asleep: the legend lists sleeping bodies before the box has landed"
ui asleep 196 legend | grep -q '^asleep (greyed' || fail "asleep: no sleeping entry in the legend once the box sleeps"
echo "gui_smoke: asleep: the legend names the greyed bodies once the box sleeps"

# Two copies (standard, PEG) with the plots and the forces: the plots column covers neither
# viewport nor the table; the legend has PEG's markers and the force scale.
cat >"$OUT/compare.script" <<'SCRIPT'
0 show plots on
0 show forces on
28 ui report
SCRIPT
run_gui compare sm_trap --compare 'standard/pcr,peg/pcr' --script "$OUT/compare.script" --frames 30
grep '^ui-report' "$OUT/compare.log"
plots=$(rect compare 28 plots)
inside "$plots" || fail "compare: no plots window in the window ($plots)"
for r in viewport0 viewport1 table; do
    q=$(rect compare 28 $r)
    [ -n "$q" ] || fail "compare: no $r"
    overlap "$plots" "$q" && fail "compare: the plots ($plots) cover $r ($q)"
done
ui compare 28 legend | grep -q '^PEG U' || fail "compare: PEG's markers are not in the legend"
# With several copies the legend starts folded to its title bar, clear of the bottom-left view.
read -r _ _ _ lh < <(rect compare 28 legend)
awk -v h="$lh" 'BEGIN { exit !(h > 0 && h < 40) }' || fail "compare: the legend is $lh px high, not folded"
ui compare 28 legend | grep -qE '^contact force: [0-9.e+-]+ m = [0-9.e+-]+ N$' || fail "compare: no force scale in the legend"

# A recording started with M goes to the capture directory, its path shown in the footer.
cat >"$OUT/capture.script" <<'SCRIPT'
5 key m
15 ui report
20 key m
22 ui report
SCRIPT
rm -rf "$OUT/captures"
run_gui capture box_on_plane --capture-dir "$OUT/captures" --script "$OUT/capture.script" --frames 24
grep '^ui-report frame=\(15\|22\) \(rect footer\|recording\|status\|capture-dir\)' "$OUT/capture.log"
recording=$(ui capture 15 recording)
case "$recording" in "$OUT/captures/sandbox_"*.mp4) ;; *) fail "capture: recording to '$recording', not into --capture-dir" ;; esac
inside "$(rect capture 15 footer)" || fail "capture: the footer with the path is not on the screen"
if command -v ffmpeg >/dev/null 2>&1; then
    [ -s "$recording" ] || fail "capture: $recording was not written"
    ui capture 22 status | grep -qF "wrote $recording" || fail "capture: the status does not name $recording"
fi

echo "gui_smoke: PASS"
