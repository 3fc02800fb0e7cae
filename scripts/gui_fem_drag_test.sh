#!/usr/bin/env bash
# GUI test of the FEM mouse drag (ctest gui_fem_drag): on fem_cantilever the cursor is put over
# the beam (the script's "aim fem", 60 px towards the free end), pressed and pulled 120 px up; the
# app's drag reports must show a FEM surface point grabbed (body=fem) and the beam's point
# following the cursor's target (the gap at least 30 % smaller, the point 3 cm higher). The
# session is recorded and replayed: the replay's pose hash (rigid poses and every FEM node) and
# drag reports match the live run's. Then (issue 36): pneunet_finger's pressure, set while the
# scene steps in real time, holds; on fem_tomato_drop a click selects the tomato, C follows it, F
# frames it, and the wheel zooms towards it under the cursor.
# It runs under Xvfb when xvfb-run is installed, else offscreen through EGL (--headless); it exits
# 77 (ctest SKIP) only when neither gives an OpenGL 3.3 context.
#   usage: gui_fem_drag_test.sh SANDBOX OUT_DIR
set -u
SANDBOX=$1
OUT=$2
mkdir -p "$OUT"
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
fail() { echo "gui_fem_drag: FAIL: $*"; exit 1; }

MODE=none
run() {   # run NAME ARGS...: the sandbox under Xvfb or EGL, its output in $OUT/NAME.log
    local name=$1
    shift
    if [ $MODE != egl ] && command -v xvfb-run >/dev/null 2>&1 && command -v Xvfb >/dev/null 2>&1; then
        xvfb-run -a -s "-screen 0 1280x720x24" "$SANDBOX" "$@" >"$OUT/$name.log" 2>&1 && { MODE=xvfb; return; }
    fi
    "$SANDBOX" "$@" --headless >"$OUT/$name.log" 2>&1 && { MODE=egl; return; }
    if grep -qE "cannot open a window|EGL|OpenGL 3.3" "$OUT/$name.log"; then
        echo "gui_fem_drag: SKIP: neither Xvfb nor EGL gives an OpenGL 3.3 context here"
        exit 77
    fi
    cat "$OUT/$name.log"
    fail "$name: the sandbox failed"
}

cat >"$OUT/drag.script" <<'SCRIPT'
0 show strain on
30 aim fem 60 0
31 press left
32 report              # at the press: the grabbed point under the cursor
32 moveby 0 -120 40    # pull it up over 40 frames
100 report
100 screenshot DRAGPNG
110 release left
148 report
SCRIPT
sed -i "s|DRAGPNG|$OUT/fem_drag.png|" "$OUT/drag.script"
rm -f "$OUT/fem_drag.png" "$OUT/session.json"
ARGS=(gui fem_cantilever --frames 150 --fixed-step --size 1280x720)
run live "${ARGS[@]}" --script "$OUT/drag.script" --session-out "$OUT/session.json"
echo "gui_fem_drag: ran under $MODE"
grep -E '^(aim|drag-report|bodies-report)' "$OUT/live.log"
[ -s "$OUT/fem_drag.png" ] || fail "no screenshot"
first=$(grep '^drag-report frame=32 ' "$OUT/live.log")
last=$(grep '^drag-report frame=100 ' "$OUT/live.log")
echo "$first" | grep -q 'body=fem fem_tri=' || fail "no FEM surface point grabbed at the press: $first"
awk -v a="$first" -v b="$last" 'function vec(s, key, v,   m) {
        match(s, key "=[-0-9.e]+,[-0-9.e]+,[-0-9.e]+"); split(substr(s, RSTART + length(key) + 1, RLENGTH - length(key) - 1), v, ",") }
    function dist(p, q) { return sqrt((p[1]-q[1])^2 + (p[2]-q[2])^2 + (p[3]-q[3])^2) }
    BEGIN {
        vec(a, "point", p0); vec(a, "target", t0); vec(b, "point", p1); vec(b, "target", t1)
        d0 = dist(p0, t1); d1 = dist(p1, t1); rise = p1[3] - p0[3]
        printf "gui_fem_drag: grabbed %.4f m from the cursor at the press; target %.3f m away after the pull, %.3f m at frame 100; point rose %.3f m\n", dist(p0, t0), d0, d1, rise
        if (dist(p0, t0) > 0.005) { print "gui_fem_drag: FAIL: the grabbed point is not under the cursor"; exit 1 }
        if (!(d1 < 0.7 * d0) || rise < 0.03) { print "gui_fem_drag: FAIL: the beam did not follow the cursor"; exit 1 }
    }' || exit 1
grep -q '"fem_tri"' "$OUT/session.json" || fail "the session file holds no FEM drag"

# The replay: the same events before the same steps give the same state.
printf '32 report\n100 report\n148 report\n' >"$OUT/replay.script"
run replay "${ARGS[@]}" --replay "$OUT/session.json" --script "$OUT/replay.script"
for f in 32 100 148; do
    a=$(grep -A0 -B1 "^drag-report frame=$f " "$OUT/live.log")
    b=$(grep -A0 -B1 "^drag-report frame=$f " "$OUT/replay.log")
    [ -n "$a" ] && [ "$a" = "$b" ] || fail "the replay differs at frame $f: live '$a', replay '$b'"
done
echo "gui_fem_drag: replay matches the live run (pose hash with FEM nodes, drag reports)"

# ---- issue 36: the app as a new user meets it --------------------------------------------------
# ui NAME FRAME KEY: the values of the "ui-report frame=FRAME KEY ..." line (app/gui/ui_report.cpp).
ui() { awk -v f="$2" -v k="$3" '$1 == "ui-report" && $2 == "frame=" f && $3 == k { $1 = $2 = $3 = ""; print substr($0, 4) }' "$OUT/$1.log"; }
# The chambers' pressure, set while the scene runs in real time (the physics thread steps copies
# of the worlds and hands them back), holds: it was lost at the next adoption. Few iterations: the
# steps only have to be cheap enough that several run during the frames.
cat >"$OUT/pressure.script" <<'SCRIPT'
10 fem pressure 20000
11 ui report
149 ui report
SCRIPT
run pressure gui pneunet_finger --frames 150 --size 1280x720 --newton 2 --linear 20 --real-time --script "$OUT/pressure.script"
read -r _ p11 < <(ui pressure 11 fem-pressure)
read -r _ p149 < <(ui pressure 149 fem-pressure)
read -r s11 _ < <(ui pressure 11 steps)
read -r s149 _ < <(ui pressure 149 steps)
echo "gui_fem_drag: pressure $p11 Pa at frame 11 (step $s11), $p149 Pa at frame 149 (step $s149), stepped in real time"
[ "$p11" = 20000 ] && [ "$p149" = 20000 ] || fail "the pressure set while running did not hold ($p11, then $p149 Pa)"
[ "$s149" -gt "$s11" ] || fail "the scene did not step after the pressure was set"

# A click on the tomato selects it and C follows it; F frames the bodies (the tomato fills the
# view, not a dot on the ground's horizon); the wheel zooms towards the point under the cursor.
cat >"$OUT/select.script" <<'SCRIPT'
60 aim fem
61 press left
62 release left
63 key c
64 ui report
70 key f
72 ui report
80 camera -60 25 1.0 0.15 0.1 0.05
82 aim fem
83 ui report
84 wheel 3
85 aim fem
86 ui report
SCRIPT
run select gui fem_tomato_drop --frames 88 --fixed-step --size 1280x720 --script "$OUT/select.script"
grep -E '^(aim|ui-report frame=[0-9]+ (selection|camera-target|status))' "$OUT/select.log"
ui select 64 selection | grep -q '^body -1 fem 0 follow-body -1 follow-fem 0$' ||
    fail "a click on the tomato did not select it, or C did not follow it: $(ui select 64 selection)"
ui select 64 status | grep -q '^following tomato' || fail "C: the status reads '$(ui select 64 status)'"
read -r _ _ _ _ framed < <(ui select 72 camera-target)
awk -v d="$framed" 'BEGIN { exit !(d > 0.1 && d < 0.5) }' || fail "F framed the tomato (r = 4 cm) from $framed m"
read -r x0 y0 < <(grep '^aim: body 0' "$OUT/select.log" | sed -n 2p | awk '{ print $6, $7 }')
read -r x1 y1 < <(grep '^aim: body 0' "$OUT/select.log" | sed -n 3p | awk '{ print $6, $7 }')
read -r _ _ _ _ d0 < <(ui select 83 camera-target)
read -r _ _ _ _ d1 < <(ui select 86 camera-target)
echo "gui_fem_drag: wheel: tomato at pixel $x0 $y0 before, $x1 $y1 after; distance $d0 -> $d1 m"
awk -v a="$x0" -v b="$y0" -v c="$x1" -v d="$y1" -v p="$d0" -v q="$d1" 'BEGIN {
    exit !((a - c) ^ 2 + (b - d) ^ 2 < 4 && q < 0.75 * p && (a - 810) ^ 2 + (b - 360) ^ 2 > 50 ^ 2) }' ||
    fail "the wheel did not zoom towards the tomato under the cursor"
echo "gui_fem_drag: PASS"
