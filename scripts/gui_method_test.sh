#!/usr/bin/env bash
# GUI test (ctest gui_method): the solve-method picker (issue 38). On the default pyramid:
#  1. live: the copy starts under Newton, `method soft` (what the Solver panel's combo sets) switches
#     it at frame 40; the copy's label becomes standard/soft, its steps then take no Newton
#     iteration and 9 sweeps (the soft step ran, not Newton under a new name), and the pyramid
#     stands (its top box moves less than 5 cm; a collapse moves it by metres);
#  2. the session recorded in 1 replays to the same poses (the switch is a logged settings event);
#  3. the compare view, --compare standard/pcr,standard/soft: each copy reports its own method and
#     label, and the screenshot shows two viewports with the panel (cs_png_check).
# An unknown method is refused in one line. Under Xvfb, else EGL (--headless); exits 77 (SKIP)
# without either.
#   usage: gui_method_test.sh SANDBOX PNG_CHECK OUT_DIR
set -u
SANDBOX=$1
CHECK=$2
OUT=$3
mkdir -p "$OUT"
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
fail() { echo "gui_method: FAIL: $*"; exit 1; }
MODE=none
gui() {   # gui LOG ARGS...: the sandbox under Xvfb, else EGL
    local log=$1
    shift
    if [ $MODE != egl ] && command -v xvfb-run >/dev/null 2>&1 && command -v Xvfb >/dev/null 2>&1; then
        xvfb-run -a -s "-screen 0 1280x720x24" "$SANDBOX" gui "$@" >"$log" 2>&1 && { MODE=xvfb; return 0; }
    fi
    "$SANDBOX" gui "$@" --headless >"$log" 2>&1 && { MODE=egl; return 0; }
    if grep -qE "cannot open a window|EGL|OpenGL 3.3" "$log"; then
        echo "gui_method: SKIP: neither Xvfb nor EGL gives an OpenGL 3.3 context here"
        exit 77
    fi
    cat "$log"
    fail "the sandbox failed"
}
field() { sed -E "s/.* $1=([^ ]*).*/\1/"; }

# ---- 1. live switch -----------------------------------------------------------------------
cat >"$OUT/live.script" <<'SCRIPT'
39 method report
40 method soft
40 method bogus
89 method report
89 report
SCRIPT
gui "$OUT/live.log" pyramid --script "$OUT/live.script" --frames 90 --size 1280x720 --session-out "$OUT/session.json"
grep -q "unknown solve method 'bogus'" "$OUT/live.log" || fail "an unknown method was not refused"
before=$(grep '^method-report frame=39' "$OUT/live.log") || fail "no report before the switch"
after=$(grep '^method-report frame=89' "$OUT/live.log") || fail "no report after the switch"
echo "before: $before"
echo "after:  $after"
[ "$(field method <<<"$before")" = newton ] || fail "the copy did not start under Newton"
[[ "$(field label <<<"$before")" == standard/newton* ]] || fail "the label does not name Newton"
[ "$(field method <<<"$after")" = soft ] || fail "the method did not switch"
[ "$(field label <<<"$after")" = standard/soft ] || fail "the label does not name the soft step"
[ "$(field newton_iters <<<"$after")" = 0 ] || fail "a soft step took Newton iterations"
[ "$(field linear_iters <<<"$after")" -gt 0 ] || fail "the soft step swept nothing"
drift=$(field top_drift <<<"$after")
awk -v d="$drift" 'BEGIN { exit !(d + 0 < 0.05) }' || fail "the pyramid fell under soft (top drift $drift m)"

# ---- 2. the session replays the switch ----------------------------------------------------
echo "89 report" >"$OUT/replay.script"
gui "$OUT/replay.log" --replay "$OUT/session.json" --script "$OUT/replay.script" --frames 90 --size 1280x720
live=$(grep '^bodies-report' "$OUT/live.log")
replay=$(grep '^bodies-report' "$OUT/replay.log")
echo "live:   $live"
echo "replay: $replay"
[ -n "$live" ] && [ "$live" = "$replay" ] || fail "the replay does not reproduce the method switch"

# ---- 3. the compare view: newton and soft side by side ------------------------------------
cat >"$OUT/compare.script" <<'SCRIPT'
59 method report
59 screenshot COMPARE_PNG
SCRIPT
sed -i "s|COMPARE_PNG|$OUT/compare.png|" "$OUT/compare.script"
rm -f "$OUT/compare.png"
gui "$OUT/compare.log" pyramid --compare standard/pcr,standard/soft --script "$OUT/compare.script" --frames 60 \
    --size 1280x720
grep '^method-report' "$OUT/compare.log"
c1=$(grep '^method-report frame=59 copy=0' "$OUT/compare.log") || fail "no report of copy 1"
c2=$(grep '^method-report frame=59 copy=1' "$OUT/compare.log") || fail "no report of copy 2"
[ "$(field method <<<"$c1")" = newton ] && [[ "$(field label <<<"$c1")" == standard/newton*pcr* ]] ||
    fail "copy 1 is not Newton/PCR: $c1"
[ "$(field method <<<"$c2")" = soft ] && [ "$(field label <<<"$c2")" = standard/soft ] || fail "copy 2 is not soft: $c2"
[ -s "$OUT/compare.png" ] || fail "no compare screenshot"
# The panel's background and the yellow contact markers of both copies are on screen.
"$CHECK" "$OUT/compare.png" --count panel 26 27 29 2 --count marker 255 217 26 8 >"$OUT/compare_pixels.txt" ||
    fail "compare screenshot: $(cat "$OUT/compare_pixels.txt")"
cat "$OUT/compare_pixels.txt"
panel=$(awk '$2 == "panel" { print $3 }' "$OUT/compare_pixels.txt")
marker=$(awk '$2 == "marker" { print $3 }' "$OUT/compare_pixels.txt")
[ "${panel:-0}" -gt 20000 ] || fail "compare screenshot: no settings panel ($panel pixels)"
# (about 15,000 for the two pyramids at 1280x720; none when nothing is drawn)
[ "${marker:-0}" -gt 5000 ] || fail "compare screenshot: too few contact markers ($marker pixels)"
echo "gui_method ($MODE): ok"
