#!/usr/bin/env python3
"""x real time of the app while a box is dragged with the mouse (issue 35: the default pyramid).

Runs `SANDBOX gui SCENE --real-time --script FILE --frames N` under Xvfb (1280x720, Mesa's
llvmpipe). The script aims the app's cursor at the highest dynamic body at frame 5 (the app prints
its pixel: `aim: body B at pixel X Y`) and prints a `method report` line at frame FROM, every 30
frames after it, and at frame TO. When the report of frame FROM arrives this script drags that
body with real X input (xdotool: the pointer to the pixel, button 1 down, then up by RISE pixels
over MOVE seconds in steps of 10 ms, then held still) until the report of frame TO, then lets go.
As in gui_realtime.py each report is stamped with this process's clock, so

    x real time = (simulated time at TO's report - at FROM's) / (wall time between them)

is what the physics thread achieved while the box was held, measured outside the app. Recorded
besides: the title's figure at TO (`title`) and its lowest at the reports between (`title_min`),
the simulated seconds the app let go past its lag cap (`dropped_s`, the reports' `dropped=`;
empty for binaries without it), the physics thread's busy share over the stretch (`busy`), fps
and frame times, and the CPU of the app's threads by name (gui_realtime.thread_cpu). With
several binaries the runs alternate, ROUNDS times; --profiles DIR writes each run's
--frame-profile CSV (its per-frame stepping columns: sim_s, asked, dropped_ms, stepped, step_ms,
drag, title; the profile's glFinish per part makes frames longer: not for the x real time).

  usage: scripts/gui_drag_realtime.py [--scene pyramid] [--from 240] [--to 840] [--rise 80]
                                      [--move 1.0] [--rounds R] [--shots DIR] [--profiles DIR]
                                      SANDBOX [SANDBOX ...]
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gui_realtime import thread_cpu, thread_shares  # noqa: E402


def xdo(display, *args):
    subprocess.run(["xdotool", *args], env=dict(os.environ, DISPLAY=display), check=False,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def drag(display, x, y, rise, move, stop):
    xdo(display, "mousemove", str(int(x)), str(int(y)))
    time.sleep(0.1)
    xdo(display, "mousedown", "1")
    n = max(1, int(move / 0.01))
    for k in range(1, n + 1):
        xdo(display, "mousemove", str(int(x)), str(int(round(y - rise * k / n))))
        time.sleep(0.01)
    stop.wait()
    xdo(display, "mouseup", "1")


def run_one(sandbox, a, shot, profile=""):
    with tempfile.NamedTemporaryFile("w", suffix=".script", delete=False) as f:
        f.write("5 aim auto\n")
        for k in range(a.from_frame, a.to, 30):   # every 30 frames: the title's lowest in the stretch
            f.write(f"{k} method report\n")
        if shot:
            f.write(f"{a.to - 1} screenshot {shot}\n")
        f.write(f"{a.to} method report\n")
        script = f.name
    # A display number of our own, so xdotool can reach the app's X server.
    display = f":{90 + os.getpid() % 9}"
    xvfb = subprocess.Popen(["Xvfb", display, "-screen", "0", "1280x720x24", "-nolisten", "tcp"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(1.0)
    load = os.getloadavg()[0]
    extra = ["--frame-profile", profile] if profile else []
    p = subprocess.Popen([sandbox, "gui", a.scene, "--real-time", "--script", script, "--frames", str(a.to + 1), *extra],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1,
                         env=dict(os.environ, DISPLAY=display))
    reports, summary, pixel = [], [], None
    stop = threading.Event()
    mover = None
    for line in p.stdout:
        now = time.monotonic()
        m = re.match(r"aim: body (\d+) at pixel ([-0-9.]+) ([-0-9.]+)", line)
        if m:
            pixel = (float(m.group(2)), float(m.group(3)))
        elif line.startswith("method-report") and "copy=0" in line:
            frame = int(re.search(r" frame=(\d+)", line).group(1))
            t = float(re.search(r" time=([-0-9.e+]+)", line).group(1))
            title = re.search(r" title=([-0-9.e+]+)", line)
            busy = re.search(r" busy=([-0-9.e+]+)", line)
            drop = re.search(r" dropped=([-0-9.e+]+)", line)   # since the last report; not in older binaries
            reports.append((now, t, title.group(1) if title else "", busy.group(1) if busy else "", thread_cpu(p.pid),
                            float(drop.group(1)) if drop else None))
            if frame == a.from_frame and pixel:
                mover = threading.Thread(target=drag, args=(display, pixel[0], pixel[1], a.rise, a.move, stop))
                mover.start()
            elif frame == a.to:
                stop.set()
        elif line.startswith("sandbox gui:"):
            summary.append(line.strip())
    p.wait()
    stop.set()
    if mover:
        mover.join()
    xvfb.terminate()
    xvfb.wait()
    os.unlink(script)
    row = {"scene": a.scene, "sandbox": sandbox, "load": round(load, 2), "rc": p.returncode, "pixel": pixel}
    if len(reports) >= 2:
        (w0, t0, _, _, c0, _), (w1, t1, title, busy, c1, _) = reports[0], reports[-1]
        n = a.to - a.from_frame
        # busy over the whole stretch: each report's is since the one before, weighted by its wall time
        spans = [(reports[k][0] - reports[k - 1][0], float(reports[k][3] or 0)) for k in range(1, len(reports))]
        busy = round(sum(w * b for w, b in spans) / max(sum(w for w, _ in spans), 1e-9), 3)
        drops = [r[5] for r in reports[1:] if r[5] is not None]
        row.update(x_real_time=round((t1 - t0) / max(w1 - w0, 1e-9), 3), title=title, busy=busy,
                   title_min=min(float(r[2]) for r in reports[1:] if r[2]),
                   dropped_s=round(sum(drops), 3) if drops else "",
                   sim_s=round(t1 - t0, 3), wall_s=round(w1 - w0, 3),
                   fps=round(n / max(w1 - w0, 1e-9), 1), **thread_shares(c0, c1, w1 - w0, n))
    text = " ".join(summary)
    m = re.search(r"frame time median ([0-9.]+) ms, p95 ([0-9.]+) ms", text)
    row["frame_median_ms"], row["frame_p95_ms"] = (m.group(1), m.group(2)) if m else ("", "")
    return row


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("sandboxes", nargs="+")
    ap.add_argument("--scene", default="pyramid")
    ap.add_argument("--from", dest="from_frame", type=int, default=240)
    ap.add_argument("--to", type=int, default=840)
    ap.add_argument("--rise", type=float, default=80, help="pixels the pointer moves up while held")
    ap.add_argument("--move", type=float, default=1.0, help="seconds the pointer takes to move")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--shots", default="")
    ap.add_argument("--profiles", default="", help="a directory for each run's --frame-profile CSV")
    a = ap.parse_args()
    fields = ["scene", "sandbox", "load", "x_real_time", "title", "title_min", "dropped_s", "busy", "cpu_physics",
              "ui_ms_frame", "lp_ms_frame",
              "fps", "frame_median_ms", "frame_p95_ms", "sim_s", "wall_s", "pixel", "rc"]
    print(f"# {os.cpu_count()} cores, 1280x720 Xvfb, drag from frame {a.from_frame} to {a.to}", flush=True)
    print("# " + " ".join(fields), flush=True)
    for r in range(a.rounds):
        for i, sb in enumerate(a.sandboxes):
            shot = ""
            if a.shots:
                os.makedirs(a.shots, exist_ok=True)
                shot = os.path.join(os.path.abspath(a.shots), f"drag_{a.scene}_{i}_r{r}.png")
            profile = ""
            if a.profiles:
                os.makedirs(a.profiles, exist_ok=True)
                profile = os.path.join(os.path.abspath(a.profiles), f"frames_{a.scene}_{i}_r{r}.csv")
            row = run_one(sb, a, shot, profile)
            print(" ".join(str(row.get(k, "")).replace(" ", "") for k in fields), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
