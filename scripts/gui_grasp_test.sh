#!/usr/bin/env bash
# GUI grasp test (ctest gui_grasp): plays grasp_box's script in the GUI (the Grasp window's Play
# script, from a test script) and reads the app's "grasp-report" lines (grasp_panel.cpp):
#   - at the hold (t = 5.5 s and 9.3 s) the box is 0.2 m up with the wrist (the script lifts the
#     wrist from 0.2 m to 0.4 m), each jaw's drive reads the grip force (7.85 N, saturated: the
#     jaws' closed target is inside the box) and the pads carry it;
#   - the mouse moves the wrist: a drag on the gripper moves the wrist goal, the key E lifts it by
#     1 cm, and the wrist target (the mocap joint's anchor) follows it;
#   - R after the script puts the gripper at rest under the user's control; the keys then lower,
#     close, lift 0.2 m, hold and set down the box (issue 36);
#   - in the compare view both copies get the same wrist target;
#   - at 1280x720 the Grasp and Selected-body windows cover neither each other nor the view, where
#     the box and the scale are;
#   - `sandbox record` refuses --script on a scene without a grasp, with one line and status 2.
# It runs under Xvfb when xvfb-run is installed, else offscreen through EGL (--headless); it exits
# 77 (ctest SKIP) only when neither gives an OpenGL 3.3 context.
#   usage: gui_grasp_test.sh SANDBOX OUT_DIR
set -u
SANDBOX=$1
OUT=$2
mkdir -p "$OUT"
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
fail() { echo "gui_grasp: FAIL: $*"; exit 1; }

"$SANDBOX" record friction_ramp --script --out "$OUT/none.mp4" >"$OUT/noscript.log" 2>&1
rc=$?
[ $rc -eq 2 ] || fail "record --script without a grasp: expected status 2, got $rc"
grep -q "has no grasp script" "$OUT/noscript.log" || fail "record --script without a grasp: no clear message"

# run NAME ARGS...: the sandbox under Xvfb or EGL, its output in $OUT/NAME.log.
run() {
    local name=$1
    shift
    local mode=none
    if command -v xvfb-run >/dev/null 2>&1 && command -v Xvfb >/dev/null 2>&1; then
        xvfb-run -a -s "-screen 0 1280x720x24" "$SANDBOX" "$@" >"$OUT/$name.log" 2>&1 && mode=xvfb
    fi
    if [ $mode = none ]; then
        "$SANDBOX" "$@" --headless >"$OUT/$name.log" 2>&1 && mode=egl
    fi
    if [ $mode = none ]; then
        if grep -qE "cannot open a window|EGL|OpenGL 3.3" "$OUT/$name.log"; then
            echo "gui_grasp: SKIP: neither Xvfb nor EGL gives an OpenGL 3.3 context here"
            exit 77
        fi
        cat "$OUT/$name.log"
        fail "the sandbox failed ($name)"
    fi
    echo "gui_grasp: $name ran under $mode"
}
# field LINE KEY: the value of KEY=... in a report line.
field() { echo "$1" | tr ' ' '\n' | awk -F= -v k="$2" '$1 == k { print $2 }'; }

# ---- the script played in the window, at 60 frames per simulated second ----------------------
cat >"$OUT/play.script" <<SCRIPT
0 grasp play
330 grasp report     # t = 5.5 s: hold
558 grasp report     # t = 9.3 s: the end of the hold
560 screenshot $OUT/grasp_hold.png
SCRIPT
run play gui grasp_box --script "$OUT/play.script" --frames 561 --fixed-step --size 960x540 \
    --session-out "$OUT/play.session.json"
# The session log records the grasp events (engine/grasp/grasp_events.h) in order.
events=$(grep -o '"event": *"[a-z ]*"' "$OUT/play.session.json" | sed 's/.*: *"//; s/"$//' | tr '\n' ',')
echo "gui_grasp: session grasp events: $events"
case "$events" in
    "grip closed,contact made,lift start,") ;;
    *) fail "session grasp events '$events', expected 'grip closed,contact made,lift start,'" ;;
esac
for frame in 330 558; do
    line=$(grep "^grasp-report frame=$frame copy=0 " "$OUT/play.log") || fail "no grasp report at frame $frame"
    echo "$line"
    rise=$(field "$line" rise); phase=$(field "$line" phase); grip=$(field "$line" grip); normal=$(field "$line" normal)
    [ "$phase" = hold ] || fail "frame $frame: phase '$phase', expected hold"
    awk -v r="$rise" -v g="$grip" -v n="$normal" 'BEGIN {
        split(g, G, ","); split(n, N, ",")
        if (!(r > 0.19 && r < 0.21)) { print "gui_grasp: FAIL: the box rose " r " m, expected 0.2 m with the wrist"; exit 1 }
        for (f = 1; f <= 2; ++f) {
            if (!(G[f] > 7.85 * 0.98 && G[f] < 7.85 * 1.02)) { print "gui_grasp: FAIL: jaw " f " reads " G[f] " N, expected the limit 7.85 N"; exit 1 }
            if (!(N[f] > 7.85 * 0.9)) { print "gui_grasp: FAIL: pad " f " carries " N[f] " N of normal force"; exit 1 }
        }
    }' || exit 1
done

# ---- the wrist by mouse and key, and the compare view ----------------------------------------
# The mouse and the keys set the wrist's goal; the applied target (wrist=, the mocap joint's
# anchor) ramps to it at most 0.15 m/s and 0.5 m/s^2 (engine/grasp/grasp_driver.h): 1 cm takes 0.28 s.
cat >"$OUT/mouse.script" <<'SCRIPT'
10 aim wrist
11 press left
12 grasp report
12 moveby 0 -60 20
40 release left
41 grasp report
42 key e
44 grasp report
110 grasp report
SCRIPT
run mouse gui grasp_box --compare standard/jacobi,standard/pcr --script "$OUT/mouse.script" --frames 111 --fixed-step --size 960x540
grep -q "^aim: body" "$OUT/mouse.log" || fail "could not aim at the wrist"
z() { field "$(grep "^grasp-report frame=$1 copy=$2 " "$OUT/mouse.log")" "$3" | cut -d, -f3; }
awk -v a="$(z 12 0 goal)" -v b="$(z 41 0 goal)" -v c="$(z 44 0 goal)" -v w="$(z 110 0 wrist)" \
    -v w1="$(z 110 1 wrist)" -v m="$(z 44 0 wrist)" -v m1="$(z 44 1 wrist)" 'BEGIN {
    printf "gui_grasp: wrist goal z %.4f m at the press, %.4f after the drag, %.4f after E; the target %.4f at the E, %.4f later (copy 2: %.4f)\n", a, b, c, m, w, w1
    if (!(b > a + 0.03)) { print "gui_grasp: FAIL: dragging the gripper up did not lift the wrist goal"; exit 1 }
    d = c - b; if (d < 0) d = -d
    if (!(d > 0.0099 && d < 0.0101 && c > b)) { print "gui_grasp: FAIL: E did not lift the wrist goal by 1 cm"; exit 1 }
    d = w - c; if (d < 0) d = -d
    if (!(d < 1e-5)) { print "gui_grasp: FAIL: the wrist target did not reach the goal"; exit 1 }
    if (m != m1 || w != w1) { print "gui_grasp: FAIL: the copies got different wrist targets"; exit 1 }
}' || exit 1

# ---- a grasp with the keys (issue 36), as tests/test_grasp_keys.cpp does it without the window --
# After the script, R puts the gripper back at rest under the user's control. Then at 4x speed
# (8 steps a frame): Q x 25 to 0.20 m, V, E x 20 (0.2 m up), a hold, Q x 20 back down, V. The box
# rises with the wrist, the pads stick with at most the grip limit plus half the box's weight,
# and the box ends where it started; after the V the pads are free.
{
    echo "0 grasp play"
    echo "20 key r"
    echo "21 grasp report"
    echo "22 key plus"
    echo "23 key plus"
    for f in $(seq 25 49); do echo "$f key q"; done
    echo "60 key v"
    for f in $(seq 80 99); do echo "$f key e"; done
    echo "115 grasp report"
    echo "145 grasp report"
    echo "146 screenshot $OUT/grasp_keys_hold.png"
    for f in $(seq 150 169); do echo "$f key q"; done
    echo "195 grasp report"
    echo "196 key v"
    echo "215 grasp report"
} >"$OUT/keys.script"
run keys gui grasp_box --script "$OUT/keys.script" --frames 216 --fixed-step --size 1280x720
line=$(grep "^grasp-report frame=21 copy=0 " "$OUT/keys.log") || fail "no grasp report after R"
echo "$line"
[ "$(field "$line" playing)" = 0 ] || fail "R left the script playing"
[ "$(field "$line" goal)" = "0.00000,0.00000,0.45000" ] || fail "R did not put the wrist goal at rest"
for frame in 115 145 195 215; do
    line=$(grep "^grasp-report frame=$frame copy=0 " "$OUT/keys.log") || fail "no grasp report at frame $frame"
    echo "$line"
    awk -v f=$frame -v r="$(field "$line" rise)" -v n="$(field "$line" normal)" -v p="$(field "$line" pad)" \
        -v w="$(field "$line" wrist | cut -d, -f3)" 'BEGIN {
        split(n, N, ","); split(p, P, ",")
        if (f == 115 || f == 145) {
            if (!(w > 0.3995 && w < 0.4005)) { print "gui_grasp: FAIL: frame " f ": the wrist target is at " w " m, expected 0.40"; exit 1 }
            if (!(r > 0.195 && r < 0.205)) { print "gui_grasp: FAIL: frame " f ": the box rose " r " m, expected 0.2 m with the wrist"; exit 1 }
            for (i = 1; i <= 2; ++i) {
                if (P[i] != "stick") { print "gui_grasp: FAIL: frame " f ": pad " i " reads " P[i] ", expected stick"; exit 1 }
                if (!(N[i] > 7.85 * 0.9 && N[i] < 7.85 + 9.81 / 2)) { print "gui_grasp: FAIL: frame " f ": pad " i " carries " N[i] " N"; exit 1 }
            }
        }
        if (f == 195 && !(r > -0.003 && r < 0.003)) { print "gui_grasp: FAIL: the box was set down " r " m from where it started"; exit 1 }
        if (f == 215 && (P[1] != "free" || P[2] != "free")) { print "gui_grasp: FAIL: after V the pads read " p; exit 1 }
    }' || exit 1
done

# ---- the layout at 1280x720 (issue 36) ------------------------------------------------------
# The Grasp window and the Selected-body window (the box clicked) sit in a column right of the
# view: they overlap neither each other nor the view, and the box and the scale are in the view.
cat >"$OUT/layout.script" <<'SCRIPT'
0 grasp play
20 aim box
21 press left
22 release left
30 ui report
SCRIPT
run layout gui grasp_box --script "$OUT/layout.script" --frames 31 --fixed-step --size 1280x720
ui() { awk -v f="$1" -v k="$2" '$1 == "ui-report" && $2 == "frame=" f && $3 == k { $1 = $2 = $3 = ""; print substr($0, 4) }' "$OUT/layout.log"; }
rect() { ui "$1" rect | awk -v n="$2" '$1 == n { print $2, $3, $4, $5 }'; }
grep -E '^ui-report frame=30 (rect|pixel)' "$OUT/layout.log"
awk -v g="$(rect 30 grasp)" -v s="$(rect 30 selection)" -v v="$(rect 30 viewport0)" \
    -v o="$(ui 30 pixel | awk '$1 == "grasp-object" { print $2, $3 }')" -v c="$(ui 30 pixel | awk '$1 == "scale" { print $2, $3 }')" '
    function overlap(a, b,   p, q) { split(a, p, " "); split(b, q, " ")
        return p[1] < q[1] + q[3] && q[1] < p[1] + p[3] && p[2] < q[2] + q[4] && q[2] < p[2] + p[4] }
    function inside(pt, r,   p, q) { split(pt, p, " "); split(r, q, " ")
        return p[1] >= q[1] && p[1] < q[1] + q[3] && p[2] >= q[2] && p[2] < q[2] + q[4] }
    BEGIN {
        if (g == "" || s == "" || v == "" || o == "" || c == "") { print "gui_grasp: FAIL: the layout report is incomplete"; exit 1 }
        if (overlap(g, s) || overlap(g, v) || overlap(s, v)) {
            print "gui_grasp: FAIL: the Grasp (" g "), Selected-body (" s ") and view (" v ") rectangles overlap"; exit 1 }
        if (!inside(o, v) || !inside(c, v)) {
            print "gui_grasp: FAIL: the box (" o ") or the scale (" c ") is out of the view (" v ")"; exit 1 }
        print "gui_grasp: layout: grasp (" g "), selection (" s ") beside the view (" v "); box at " o ", scale at " c
    }' || exit 1
echo "gui_grasp: PASS"
