#!/usr/bin/env bash
# GUI test (ctest gui_heavy): the window keeps drawing while a heavy scene steps slower than real
# time (issue 20). Runs the app for 60 frames on the 2,870-box peer pyramid, whose steps take
# seconds on one core, and checks from the app's summary line that no frame after start-up
# waited for a step (longest frame under MAX_FRAME_MS, default 1000, against steps of seconds)
# while the scene ran slower than real time. Prints the longest frame for the report; the
# issue's target is 33 ms. Under Xvfb, else EGL (--headless); exits 77 (SKIP) without either.
#   usage: gui_heavy_test.sh SANDBOX OUT_DIR [SCENE]
set -u
SANDBOX=$1
OUT=$2
SCENE=${3:-$(dirname "$0")/../bench/scenes/peer_pyramid_2870.json}
MAX_FRAME_MS=${MAX_FRAME_MS:-1000}
mkdir -p "$OUT"
fail() { echo "gui_heavy: FAIL: $*"; exit 1; }
ARGS=(gui "$SCENE" --frames 60 --size 1280x720 --no-shadows)
MODE=none
if command -v xvfb-run >/dev/null 2>&1 && command -v Xvfb >/dev/null 2>&1; then
    xvfb-run -a -s "-screen 0 1280x720x24" "$SANDBOX" "${ARGS[@]}" >"$OUT/heavy.log" 2>&1 && MODE=xvfb
fi
if [ $MODE = none ]; then
    "$SANDBOX" "${ARGS[@]}" --headless >"$OUT/heavy.log" 2>&1 && MODE=egl
fi
if [ $MODE = none ]; then
    if grep -qE "cannot open a window|EGL|OpenGL 3.3" "$OUT/heavy.log"; then
        echo "gui_heavy: SKIP: neither Xvfb nor EGL gives an OpenGL 3.3 context here"
        exit 77
    fi
    cat "$OUT/heavy.log"
    fail "the sandbox failed"
fi
cat "$OUT/heavy.log"
line=$(grep "longest frame" "$OUT/heavy.log") || fail "no summary line"
frame=$(sed -E 's/.*longest frame ([0-9.]+) ms.*/\1/' <<<"$line")
factor=$(sed -E 's/.*\(([0-9.e+-]+)x real time\).*/\1/' <<<"$line")
echo "gui_heavy ($MODE): longest frame $frame ms, ${factor}x real time"
awk -v f="$factor" 'BEGIN { exit !(f + 0 < 0.5) }' || fail "the scene was not slower than real time"
awk -v f="$frame" -v m="$MAX_FRAME_MS" 'BEGIN { exit !(f + 0 < m + 0) }' || fail "a frame waited for a step"
echo "gui_heavy: ok"
