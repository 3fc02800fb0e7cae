#!/usr/bin/env bash
# GUI test (ctest gui_pile): the 20,000-box pile (bench/scenes/peer_pile_20000.json, issue 20) in the
# app under Xvfb (else EGL; exit 77, SKIP, without either). For 160 frames while the pile steps (steps
# of hundreds of ms to seconds on one core) it checks that the window stays responsive: no frame after
# start-up took as long as a run of steps (longest frame under MAX_FRAME_MS, default 2000; one frame of
# 1.1 s was seen at a load average of 11 on 2 cores, cause not found), the scene ran slower than real
# time, and the last frame shows the pile (the view of 20,000 boxes is drawn over several frames,
# render/progressive_view.h: it must have completed; with llvmpipe drawing in the UI thread alone, as
# the app sets it on 2 cores, the first build ends near frame 82 at load 3, hence 160 frames). The
# frame-time figures (median, p95, max) are printed for the report; the 33 ms target is `make bench`'s,
# not this test's (scripts/bench_gui_frames.sh), since a shared machine's load moves wall-clock times
# several-fold. The run writes a frame profile (--frame-profile), checked for its rows and the view's
# build.
#   usage: gui_pile_test.sh SANDBOX PNG_CHECK OUT_DIR
set -u
SANDBOX=$1
PNG_CHECK=$2
OUT=$3
SCENE=$(dirname "$0")/../bench/scenes/peer_pile_20000.json
MAX_FRAME_MS=${MAX_FRAME_MS:-2000}
mkdir -p "$OUT"
fail() { echo "gui_pile: FAIL: $*"; exit 1; }
ARGS=(gui "$SCENE" --frames 160 --size 1280x720 --no-shadows --screenshot "$OUT/pile.png" --frame-profile "$OUT/frames.csv")
MODE=none
if command -v xvfb-run >/dev/null 2>&1 && command -v Xvfb >/dev/null 2>&1; then
    xvfb-run -a -s "-screen 0 1280x720x24" "$SANDBOX" "${ARGS[@]}" >"$OUT/pile.log" 2>&1 && MODE=xvfb
fi
if [ $MODE = none ]; then
    "$SANDBOX" "${ARGS[@]}" --headless >"$OUT/pile.log" 2>&1 && MODE=egl
fi
if [ $MODE = none ]; then
    if grep -qE "cannot open a window|EGL|OpenGL 3.3" "$OUT/pile.log"; then
        echo "gui_pile: SKIP: neither Xvfb nor EGL gives an OpenGL 3.3 context here"
        exit 77
    fi
    cat "$OUT/pile.log"
    fail "the sandbox failed"
fi
cat "$OUT/pile.log"
grep -q "20005 bodies" "$OUT/pile.log" || fail "the pile did not load with its 20,005 bodies"
line=$(grep "longest frame" "$OUT/pile.log") || fail "no summary line"
frame=$(sed -E 's/.*longest frame ([0-9.]+) ms.*/\1/' <<<"$line")
factor=$(sed -E 's/.*\(([0-9.e+-]+)x real time\).*/\1/' <<<"$line")
steps=$(sed -E 's/.*; ([0-9]+) steps.*/\1/' <<<"$line")
echo "gui_pile ($MODE): longest frame $frame ms, $steps steps, ${factor}x real time"
grep "frame time median" "$OUT/pile.log"
[ "$steps" -gt 0 ] || fail "no step was taken"
awk -v f="$factor" 'BEGIN { exit !(f + 0 < 0.5) }' || fail "the scene was not slower than real time"
awk -v f="$frame" -v m="$MAX_FRAME_MS" 'BEGIN { exit !(f + 0 < m + 0) }' || fail "a frame waited for a step"
# The pile: coloured boxes fill a good part of the 940 x 720 view (about 200,000 pixels seen from
# the scene's camera); a blank view (no build completed) has none.
"$PNG_CHECK" "$OUT/pile.png" --saturated 0.25 >"$OUT/pixels.txt" || fail "cannot read the screenshot"
sat=$(sed -n 's/^saturated //p' "$OUT/pixels.txt")
echo "gui_pile: $sat saturated pixels (bodies)"
[ "${sat:-0}" -gt 50000 ] || fail "the pile is not drawn ($sat saturated pixels)"
# The frame profile (--frame-profile, app/gui/frame_profile.h): a header and a row per frame, and
# the view's build seen in it (slices drawn, a build started and one completed).
[ "$(head -1 "$OUT/frames.csv" | cut -d, -f1-3)" = "frame,total_ms,poll" ] || fail "no frame profile header"
rows=$(tail -n +2 "$OUT/frames.csv" | wc -l)
[ "$rows" -eq 160 ] || fail "the frame profile has $rows rows, not 160"
awk -F, 'NR == 1 { for (i = 1; i <= NF; ++i) col[$i] = i; next }
         { s += $col["slices"]; b += $col["built"]; d += $col["done"] }
         END { exit !(s > 0 && b > 0 && d > 0) }' "$OUT/frames.csv" || fail "the profile shows no view build"
err=$("$SANDBOX" gui "$SCENE" --frame-profile "$OUT/no/such/dir/f.csv" 2>&1 >/dev/null); code=$?
[ $code -eq 2 ] && [ "$(wc -l <<<"$err")" -eq 1 ] || fail "an unwritable profile gave exit $code: $err"
echo "gui_pile: frame profile ok ($rows rows; $err)"
echo "gui_pile: ok"
