#!/usr/bin/env python3
"""x real time of every library scene in the app, as a user sees it (issue 35).

Runs `SANDBOX gui SCENE --real-time --script FILE --frames N` under Xvfb (1280x720, Mesa's
llvmpipe), with a script that prints a `method report` line (the copy's simulated time) at frame
WARM and at the last frame; each line is stamped with this process's clock as it arrives (the app
flushes after every script command), so

    x real time = (simulated time at the last report - at the first) / (wall time between them)

is what the physics thread achieved over that stretch, with the UI running, from outside the app.
The app's own summary line (frames, fps, frame time median / p95) and, where the binary prints it
(`title=` in the method report), the title's figure and the share of the wall time the physics
thread spent stepping (`busy=`) are recorded too, with the load average at the
start of each run. The CPU time of the app's threads between the two reports is read from
/proc (load-independent where the wall figures are not): the physics thread's share of a core
(`cpu_physics`; the thread named "physics"), and per frame the UI thread's (`ui_ms_frame`),
llvmpipe's rasterizer threads' (`lp_ms_frame`) and the X server's (`xvfb_ms_frame`). With several binaries the runs are interleaved: scene by scene, binary by
binary, ROUNDS times.

  usage: scripts/gui_realtime.py [--frames N] [--warm W] [--rounds R] [--scenes a,b,...]
                                 [--shots DIR] [--csv FILE] SANDBOX [SANDBOX ...]
"""
import argparse
import csv
import os
import re
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def library_scenes():
    d = os.path.join(ROOT, "assets", "scenes")
    return sorted(f[:-5] for f in os.listdir(d) if f.endswith(".json"))


def children(pid):
    out = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/stat") as f:
                    st = f.read()
            except OSError:
                continue
            if int(st[st.rindex(")") + 2:].split()[1]) == pid:
                out.append(int(d))
    return out


def comm(pid):
    try:
        with open(f"/proc/{pid}/comm") as f:
            return f.read().strip()
    except OSError:
        return ""


def thread_cpu(pid):
    """{thread name: CPU seconds} summed over the process's threads of that name; the main
    thread is "ui"."""
    cpu = {}
    tick = os.sysconf("SC_CLK_TCK")
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return cpu
    for t in tasks:
        try:
            with open(f"/proc/{pid}/task/{t}/stat") as f:
                st = f.read()
        except OSError:
            continue
        name = "ui" if int(t) == pid else st[st.index("(") + 1:st.rindex(")")]
        fields = st[st.rindex(")") + 2:].split()
        cpu[name] = cpu.get(name, 0.0) + (int(fields[11]) + int(fields[12])) / tick
    return cpu


def app_cpu(root):
    """CPU seconds by part: the app's threads by name, and the X server's ("Xvfb")."""
    cpu = {}
    todo, seen = [root], []
    while todo:   # xvfb-run's shell starts the X server and the app, not necessarily directly
        kids = children(todo.pop())
        todo += kids
        seen += kids
    for c in seen:
        if comm(c) == "Xvfb":
            cpu["Xvfb"] = sum(thread_cpu(c).values())
        elif comm(c) not in ("sh", "xvfb-run", "xauth"):   # the app (its name may read "exe")
            cpu.update(thread_cpu(c))
    return cpu


def thread_shares(c0, c1, wall, frames):
    """The app's CPU between two thread_cpu readings: the physics thread's share of a core over
    `wall` seconds, and per frame (of `frames`) the UI thread's, llvmpipe's and the X server's ms."""
    used = {k: c1.get(k, 0.0) - c0.get(k, 0.0) for k in c1}
    per_frame = lambda v: round(1e3 * v / frames, 2)
    return dict(cpu_physics=round(used.get("physics", 0.0) / max(wall, 1e-9), 3),
                ui_ms_frame=per_frame(used.get("ui", 0.0)),
                lp_ms_frame=per_frame(sum(v for k, v in used.items() if k.startswith("llvmpipe"))),
                xvfb_ms_frame=per_frame(used.get("Xvfb", 0.0)))


def run_one(sandbox, scene, frames, warm, shot):
    with tempfile.NamedTemporaryFile("w", suffix=".script", delete=False) as f:
        f.write(f"{warm} method report\n")
        if shot:
            f.write(f"{frames - 2} screenshot {shot}\n")
        f.write(f"{frames - 1} method report\n")
        script = f.name
    cmd = ["xvfb-run", "-a", "-s", "-screen 0 1280x720x24", sandbox, "gui", scene, "--real-time",
           "--script", script, "--frames", str(frames)]
    load = os.getloadavg()[0]
    reports, summary = [], []
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1)
    for line in p.stdout:
        now = time.monotonic()
        if line.startswith("method-report") and "copy=0" in line:
            t = float(re.search(r" time=([-0-9.e+]+)", line).group(1))
            title = re.search(r" title=([-0-9.e+]+)", line)
            busy = re.search(r" busy=([-0-9.e+]+)", line)
            reports.append((now, t, float(title.group(1)) if title else None, busy.group(1) if busy else "",
                            app_cpu(p.pid)))
        elif line.startswith("sandbox gui:"):
            summary.append(line.strip())
    p.wait()
    os.unlink(script)
    row = {"scene": scene, "sandbox": sandbox, "load": round(load, 2), "rc": p.returncode}
    if len(reports) >= 2:
        (w0, t0, _, _, c0), (w1, t1, title, busy, c1) = reports[0], reports[-1]
        row.update(sim_from=t0, sim_s=round(t1 - t0, 3), wall_s=round(w1 - w0, 3),
                   x_real_time=round((t1 - t0) / max(w1 - w0, 1e-9), 3),
                   title=title if title is not None else "", busy=busy)
        row.update(thread_shares(c0, c1, w1 - w0, frames - 1 - warm))
    text = " ".join(summary)
    m = re.search(r"\(([0-9.]+) fps;", text)
    row["fps"] = m.group(1) if m else ""
    m = re.search(r"frame time median ([0-9.]+) ms, p95 ([0-9.]+) ms", text)
    row["frame_median_ms"], row["frame_p95_ms"] = (m.group(1), m.group(2)) if m else ("", "")
    return row


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("sandboxes", nargs="+")
    ap.add_argument("--frames", type=int, default=600)
    ap.add_argument("--warm", type=int, default=60)
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--scenes", default="")
    ap.add_argument("--shots", default="", help="write a screenshot of each run's last frames here")
    ap.add_argument("--csv", default="")
    a = ap.parse_args()
    scenes = a.scenes.split(",") if a.scenes else library_scenes()
    fields = ["scene", "sandbox", "load", "x_real_time", "title", "busy", "cpu_physics", "ui_ms_frame", "lp_ms_frame",
              "xvfb_ms_frame", "sim_from", "sim_s", "wall_s", "fps", "frame_median_ms",
              "frame_p95_ms", "rc"]
    out = open(a.csv, "w", newline="") if a.csv else None
    writer = csv.DictWriter(out, fieldnames=fields, extrasaction="ignore") if out else None
    if writer:
        writer.writeheader()
    print(f"# {os.cpu_count()} cores, 1280x720 Xvfb, {a.frames} frames, x real time from frame {a.warm} to the last",
          flush=True)
    print("# " + " ".join(fields), flush=True)
    for r in range(a.rounds):
        for scene in scenes:
            for i, sb in enumerate(a.sandboxes):
                shot = ""
                if a.shots:
                    os.makedirs(a.shots, exist_ok=True)
                    shot = os.path.join(os.path.abspath(a.shots), f"{scene}_{i}_r{r}.png")
                row = run_one(sb, scene, a.frames, a.warm, shot)
                print(" ".join(str(row.get(k, "")) for k in fields), flush=True)
                if writer:
                    writer.writerow(row)
                    out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
