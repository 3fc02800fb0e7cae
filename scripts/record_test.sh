#!/usr/bin/env bash
# Recording test (ctest gui_record): `sandbox record` of 2 s at 60 fps and 320x240 must give an
# MP4 that ffprobe reads as 120 frames of 320x240 H.264; without ffmpeg (CS_FFMPEG pointing
# nowhere) it must say so and write the PNG frames instead. Also replays a recorded session
# headless: the same inputs must give the same final state. Runs offscreen (EGL surfaceless, no
# X server); exits 77 (ctest SKIP) only when EGL cannot give an OpenGL 3.3 context.
#   usage: record_test.sh SANDBOX OUT_DIR
set -u
SANDBOX=$1
OUT=$2
mkdir -p "$OUT"
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
fail() { echo "gui_record: FAIL: $*"; exit 1; }

rm -f "$OUT/rec.mp4"
env -u DISPLAY "$SANDBOX" record friction_ramp --out "$OUT/rec.mp4" --seconds 2 --size 320x240 >"$OUT/rec.log" 2>&1
rc=$?
cat "$OUT/rec.log"
if [ $rc -ne 0 ] && grep -q "EGL" "$OUT/rec.log"; then
    echo "gui_record: SKIP: no EGL OpenGL 3.3 context on this machine"
    exit 77
fi
[ $rc -eq 0 ] || fail "sandbox record exited with $rc"
if command -v ffprobe >/dev/null 2>&1 && command -v ffmpeg >/dev/null 2>&1; then
    [ -s "$OUT/rec.mp4" ] || fail "no MP4 written"
    probe=$(ffprobe -v error -count_frames -select_streams v:0 \
        -show_entries stream=codec_name,width,height,nb_read_frames -of csv=p=0 "$OUT/rec.mp4")
    echo "ffprobe: $probe"
    [ "$probe" = "h264,320,240,120" ] || fail "expected h264,320,240,120 (codec,width,height,frames), got $probe"
else
    echo "gui_record: ffmpeg/ffprobe absent: checking the PNG fallback only"
fi

# Without ffmpeg: a clear message and PNG frames (0.5 s at 60 fps = 30 frames).
rm -rf "$OUT/nof_frames"
CS_FFMPEG=/nonexistent/ffmpeg "$SANDBOX" record friction_ramp --out "$OUT/nof.mp4" --seconds 0.5 --size 160x120 \
    >"$OUT/nof.log" 2>&1 || fail "record without ffmpeg failed: $(cat "$OUT/nof.log")"
grep -q "ffmpeg not found" "$OUT/nof.log" || fail "no 'ffmpeg not found' message"
n=$(ls "$OUT/nof_frames" 2>/dev/null | grep -c '^frame_.*\.png$')
[ "$n" -eq 30 ] || fail "expected 30 PNG frames without ffmpeg, found $n"

# Session replay: a scripted drag recorded to a session file, then replayed with no script for
# the same number of frames; the final drag reports must agree to the printed digits.
cat >"$OUT/session.script" <<'SCRIPT'
5 aim auto
6 press left
6 moveby 60 -80 20
30 release left
40 key b               # a launched box is part of the session too
59 report
SCRIPT
cat >"$OUT/report.script" <<'SCRIPT'
59 report
SCRIPT
"$SANDBOX" gui friction_ramp --headless --script "$OUT/session.script" --frames 60 --session-out "$OUT/session.json" \
    --size 800x600 >"$OUT/live.log" 2>&1 || fail "live session failed: $(cat "$OUT/live.log")"
"$SANDBOX" gui --headless --replay "$OUT/session.json" --script "$OUT/report.script" --frames 60 --size 800x600 \
    >"$OUT/replay.log" 2>&1 || fail "replay failed: $(cat "$OUT/replay.log")"
grep -q '"type": "drag"' "$OUT/session.json" || fail "the drag is missing from the session"
grep -q '"type": "launch"' "$OUT/session.json" || fail "the launch is missing from the session"
live=$(grep '^bodies-report' "$OUT/live.log")
replay=$(grep '^bodies-report' "$OUT/replay.log")
echo "live:   $live"
echo "replay: $replay"
[ -n "$live" ] && [ "$live" = "$replay" ] || fail "the replay does not reproduce the session"

# The scene's settings that a session does not record (here brick_impact's PLUS block) must hold
# in the replay too: 120 frames of PLUS, live and replayed, end in the same state.
cat >"$OUT/plus.script" <<'SCRIPT'
119 report
SCRIPT
"$SANDBOX" gui brick_impact --model plus --headless --script "$OUT/plus.script" --frames 120 \
    --session-out "$OUT/plus_session.json" --size 800x600 >"$OUT/plus_live.log" 2>&1 || fail "PLUS session failed"
"$SANDBOX" gui --headless --replay "$OUT/plus_session.json" --script "$OUT/plus.script" --frames 120 --size 800x600 \
    >"$OUT/plus_replay.log" 2>&1 || fail "PLUS replay failed: $(cat "$OUT/plus_replay.log")"
live=$(grep '^bodies-report' "$OUT/plus_live.log")
replay=$(grep '^bodies-report' "$OUT/plus_replay.log")
echo "PLUS live:   $live"
echo "PLUS replay: $replay"
[ -n "$live" ] && [ "$live" = "$replay" ] || fail "the PLUS replay does not keep the scene's PLUS settings"
# No scene: the demo session (a steel ball into the default pyramid) replays into a video.
"$SANDBOX" record --out "$OUT/demo.mp4" --seconds 1 --size 320x240 >"$OUT/demo.log" 2>&1 ||
    fail "record of the demo failed: $(cat "$OUT/demo.log")"
grep -q "wrote .*demo.mp4 (60 frames)" "$OUT/demo.log" || fail "demo: $(cat "$OUT/demo.log")"

echo "gui_record: PASS"
