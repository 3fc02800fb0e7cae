#!/usr/bin/python3
"""Mutation fuzzer of the scene and OBJ loaders, run through the command line.

Seeds are every library scene (assets/scenes/*.json) and mesh (assets/meshes/*.obj). Case k
is made by a generator seeded with (--seed, k), so a run is reproducible: it mutates a seed
scene (a value set to an extreme number, a count set past its limit, a key or string holding a
control character, a value nested thousands deep, a member deleted or retyped, bytes flipped)
or a seed OBJ, wrapped in a scene that loads it as a convex part or a deformable body's surface (a coordinate that is not a number, a material
library naming a device, 10^3 to 10^5 vertices, an extreme scale). Each case runs as

    sandbox run CASE.json --steps 3 --no-progress

with a time bound and one OpenMP thread (OMP_NUM_THREADS=1: on a loaded machine spinning
threads would make time bounds meaningless), and is classed: exit 0, 1, 2 or 3 is clean (exit 2 must print exactly one
line on stderr, otherwise it counts as a multi-line message); a signal, another status or a
sanitizer's report (a CS_SANITIZE=ON build) is a crash; running past the bound is a hang. Crashing, hanging and multi-line inputs are kept under
--out for the regression corpus (tests/fuzz_corpus/).

    scripts/fuzz_loaders.py --sandbox build/sandbox --cases 3000 --seed 1 --out /tmp/fuzz
    scripts/fuzz_loaders.py --sandbox build-asan/sandbox --replay tests/fuzz_corpus

--replay runs every *.json of a folder (the regression corpus) instead of generated cases.
"""
import argparse
import collections
import concurrent.futures
import json
import math
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEEP = "__CS_FUZZ_DEEP__"

EXTREME_NUMBERS = [0, -1, 0.5, 3, 1e-300, 1e155, 1e300, 1e308, -1e308, 2147483647, 2147483648,
                   4294967297, 65536, 100000, 1000000, -2147483649]
COUNT_KEYS = {"count": [65536, 100000, 1000000, 2147483647, 4294967297],
              "base": [1000, 2000, 100000],
              "blocks": [1000, 10000, 2147483647],
              "levels": [100, 1000, 100000],
              "substeps": [100000, 2147483647],
              "projection": [100000, 2147483647],
              "redetect": [100000, 2147483647],
              "newton": [1000000, 2147483647],
              "iters": [1000000, 2147483647],
              "points": [100000, [4, 100000], 1000000],
              "until": [1e12, 1e300],
              "period": [1e-12, 1e-300],
              "offset": [[1e308, 0, 0], [1e155, 1e155, 1e155], [0, 0, 0]],
              "counts": [[4294967297, 1, 1], [100, 100, 100], [65536, 65536, 1]],
              "position": [[1e308, 0, 0], [1e155, 0, 0], [0, 0, 0]],
              "half_extents": [[1e155, 1e155, 1e155], [1e-300, 1, 1], [1e300, 1, 1]],
              "radius": [1e155, 1e-300, 1e300],
              "scale": [1e300, 1e155, 1e-300],
              "mass": [1e300, 1e-300],
              "density": [1e300, 1e-300],
              "velocity": [[1e300, 0, 0], [1e155, 0, 0]],
              "dt": [1e-300, 1e300, 1],
              "cells": [100, 1000, 2147483647],
              "cross_cells": [100, 100000],
              "resolution": [24, 25, 1000],
              "subdivisions": [4, 5, 100],
              "youngs": [1e300, 1e-300, 1e12],
              "poisson": [0.5, -1, 0.4999999]}
SANITIZER_TAGS = ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:")
CONTROL_STRINGS = ["a\nb", "line1\nline2\nline3", "tab\there", "cr\rx", "nul\u0000x", "esc\u001b[31m"]


def walk(node, path=()):
    """Yields (path, value) for every node of a parsed JSON tree."""
    yield path, node
    if isinstance(node, dict):
        for k, v in node.items():
            yield from walk(v, path + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from walk(v, path + (i,))


def set_at(root, path, value):
    if not path:
        return value
    node = root
    for p in path[:-1]:
        node = node[p]
    node[path[-1]] = value
    return root


def mutate_tree(rng, root):
    nodes = list(walk(root))
    path, value = rng.choice(nodes)
    kind = rng.randrange(9)
    if kind == 0 and isinstance(value, (int, float)) and not isinstance(value, bool):
        return set_at(root, path, rng.choice(EXTREME_NUMBERS))
    if kind == 1:
        # A count or size key of the format set past its limit (or added where absent).
        key = rng.choice(sorted(COUNT_KEYS))
        dicts = [(p, v) for p, v in nodes if isinstance(v, dict)]
        p, d = rng.choice(dicts)
        if key not in d and rng.random() < 0.5:
            keyed = [(p2, v2) for p2, v2 in dicts if key in v2]
            if keyed:
                p, d = rng.choice(keyed)
        d[key] = rng.choice(COUNT_KEYS[key])
        return root
    if kind == 2 and isinstance(value, str):
        return set_at(root, path, value + rng.choice(CONTROL_STRINGS))
    if kind == 3 and isinstance(value, dict) and value:
        k = rng.choice(sorted(value))
        value[k + rng.choice(CONTROL_STRINGS)] = value.pop(k)
        return root
    if kind == 4 and path:
        return set_at(root, path, DEEP + str(rng.choice([10, 1000, 5000, 60000, 100000])))
    if kind == 5 and isinstance(value, dict) and value:
        del value[rng.choice(sorted(value))]
        return root
    if kind == 6 and isinstance(value, list) and value:
        value.extend([json.loads(json.dumps(rng.choice(value)))] * rng.choice([1, 10, 1000, 10000]))
        return root
    if kind == 7 and path:
        return set_at(root, path, rng.choice([None, True, "x", [], {}, [1, 2], {"a": 1}, -0.0]))
    if kind == 8:
        # Many bodies in one spot.
        bodies = root.get("bodies") if isinstance(root, dict) else None
        if isinstance(bodies, list):
            n = rng.choice([100, 1000, 10000])
            bodies.append({"generator": "row", "count": n, "offset": [0, 0, 0],
                           "body": {"shape": {"type": "box", "half_extents": [0.1, 0.1, 0.1]},
                                    "position": [0, 0, 1]}})
        return root
    return root


def render_json(rng, root):
    text = json.dumps(root, indent=1, allow_nan=True)
    while DEEP in text:
        at = text.index(DEEP)
        end = at + len(DEEP)
        while text[end].isdigit():
            end += 1
        depth = int(text[at + len(DEEP):end])
        opener = rng.choice(["[", "{\"a\":"])
        closer = "]" if opener == "[" else "}"
        text = text[:at - 1] + opener * depth + "1" + closer * depth + text[end + 1:]
    if rng.random() < 0.1:
        data = bytearray(text.encode("utf-8", "surrogatepass"))
        for _ in range(rng.randint(1, 4)):
            i = rng.randrange(len(data))
            op = rng.randrange(3)
            if op == 0:
                data[i] = rng.randrange(256)
            elif op == 1:
                del data[i:i + rng.randint(1, 20)]
            else:
                data[i:i] = bytes([rng.choice(b"[]{}\",:0123456789e-.\n\\")])
        return bytes(data)
    return text.encode("utf-8", "surrogatepass")


def sphere_obj(rng, n):
    lines = []
    for _ in range(n):
        z = rng.uniform(-1, 1)
        a = rng.uniform(0, 2 * math.pi)
        s = math.sqrt(max(0.0, 1 - z * z))
        lines.append("v %.9g %.9g %.9g" % (s * math.cos(a), s * math.sin(a), z))
    return "\n".join(lines) + "\n"


def mutate_obj(rng, text):
    lines = text.splitlines()
    kind = rng.randrange(6)
    vlines = [i for i, l in enumerate(lines) if l.startswith("v ")]
    if kind == 0 and vlines:
        i = rng.choice(vlines)
        parts = lines[i].split()
        parts[rng.randint(1, 3)] = rng.choice(["nan", "inf", "-inf", "abc", "1e300", "1e155", "", "0x1p3"])
        lines[i] = " ".join(parts)
    elif kind == 1:
        lines.insert(0, "mtllib " + rng.choice(["../../../../../dev/urandom", "/dev/zero", "missing.mtl",
                                                "/etc/passwd", "."]))
    elif kind == 2:
        return sphere_obj(rng, rng.choice([1000, 10000, 100000, 300000]))
    elif kind == 3 and lines:
        del lines[rng.randrange(len(lines))]
    elif kind == 4 and vlines:
        lines.extend([lines[rng.choice(vlines)]] * rng.choice([1, 100, 10000]))
    else:
        i = rng.randrange(len(lines) + 1)
        lines.insert(i, rng.choice(["v 1 2", "v", "f 1 2 3", "f 99 100 101", "vt 0 0", "o x\ny", "\x00\x01"]))
    return "\n".join(lines) + "\n"


def make_case(seed, k, seeds_json, seeds_obj, folder):
    """Writes case k into folder; returns the scene path."""
    rng = random.Random(seed * 1000003 + k)
    os.makedirs(folder, exist_ok=True)
    scene = os.path.join(folder, "case.json")
    if rng.random() < 0.8:
        root = json.loads(rng.choice(seeds_json))
        for _ in range(rng.randint(1, 3)):
            root = mutate_tree(rng, root)
        data = render_json(rng, root)
    else:
        obj = rng.choice(seeds_obj)
        for _ in range(rng.randint(1, 2)):
            obj = mutate_obj(rng, obj)
        with open(os.path.join(folder, "mesh.obj"), "w") as f:
            f.write(obj)
        shape = {"type": "obj", "path": "mesh.obj", "convex_hull": rng.random() < 0.7}
        if rng.random() < 0.4:
            shape["scale"] = rng.choice([1e300, 1e155, 1e-300, 2, 0.5])
        if rng.random() < 0.3:
            # The OBJ as a deformable body's closed surface, filled by TetGen.
            mesh = {"type": "obj", "path": "mesh.obj", "resolution": rng.choice([0, 2, 8])}
            if "scale" in shape:
                mesh["scale"] = shape["scale"]
            data = json.dumps({"bodies": [{"generator": "ground"}],
                               "deformables": [{"mesh": mesh, "material": {"youngs": 1e5},
                                                "position": [0, 0, 3]}]}).encode()
        else:
            data = json.dumps({"bodies": [{"generator": "ground"},
                                          {"name": "mesh", "shape": shape, "position": [0, 0, 3]}]}).encode()
    with open(scene, "wb") as f:
        f.write(data)
    return scene


def run_case(sandbox, scene, timeout):
    t0 = time.time()
    env = dict(os.environ, OMP_NUM_THREADS="1")
    try:
        p = subprocess.run([sandbox, "run", os.path.basename(scene), "--steps", "3", "--no-progress"],
                           cwd=os.path.dirname(scene), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return "hang", None, "", time.time() - t0
    err = p.stderr.decode("utf-8", "replace")
    if any(tag in err for tag in SANITIZER_TAGS):
        kind = "crash"   # a report of a sanitizer build (CS_SANITIZE=ON), whatever the status
    elif p.returncode in (0, 1, 2, 3):
        lines = err.rstrip("\n").count("\n") + 1 if err else 0
        kind = "multiline" if p.returncode == 2 and lines != 1 else "clean"
    else:
        kind = "crash"
    return kind, p.returncode, err, time.time() - t0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sandbox", required=True)
    ap.add_argument("--cases", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=10)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--out", default=None, help="keeps crashing, hanging and multi-line inputs here")
    ap.add_argument("--replay", default=None, help="run every *.json of this folder instead")
    ap.add_argument("--only", default=None, help="seed scenes whose names start with one of these (comma list)")
    a = ap.parse_args()
    sandbox = os.path.abspath(a.sandbox)

    work = tempfile.mkdtemp(prefix="cs_fuzz_")
    if a.replay:
        cases = [(name, os.path.join(os.path.abspath(a.replay), name))
                 for name in sorted(os.listdir(a.replay)) if name.endswith(".json")]
    else:
        prefixes = tuple(a.only.split(",")) if a.only else ("",)
        seeds_json = [open(os.path.join(ROOT, "assets/scenes", n)).read()
                      for n in sorted(os.listdir(os.path.join(ROOT, "assets/scenes")))
                      if n.endswith(".json") and n.startswith(prefixes)]
        seeds_obj = [open(os.path.join(ROOT, "assets/meshes", n)).read()
                     for n in sorted(os.listdir(os.path.join(ROOT, "assets/meshes"))) if n.endswith(".obj")]
        cases = [(str(k), make_case(a.seed, k, seeds_json, seeds_obj, os.path.join(work, str(k))))
                 for k in range(a.cases)]

    counts = collections.Counter()
    kept = collections.defaultdict(list)
    start = time.time()
    with concurrent.futures.ThreadPoolExecutor(a.jobs) as pool:
        futures = {pool.submit(run_case, sandbox, scene, a.timeout): (name, scene) for name, scene in cases}
        for fut in concurrent.futures.as_completed(futures):
            name, scene = futures[fut]
            kind, rc, err, secs = fut.result()
            counts[kind] += 1
            counts["exit %s" % rc] += 1
            if kind != "clean":
                first = err.strip().splitlines()[:1]
                kept[kind].append({"case": name, "exit": rc, "seconds": round(secs, 1),
                                   "stderr": first[0][:200] if first else ""})
                if a.out and not a.replay:
                    shutil.copytree(os.path.dirname(scene), os.path.join(a.out, kind, name), dirs_exist_ok=True)
            if not a.replay:
                shutil.rmtree(os.path.dirname(scene), ignore_errors=True)
    shutil.rmtree(work, ignore_errors=True)
    summary = {"sandbox": a.sandbox, "cases": len(cases), "seed": a.seed, "timeout_s": a.timeout,
               "crashes": counts["crash"], "hangs": counts["hang"], "multiline": counts["multiline"],
               "clean": counts["clean"], "by_exit": {k: v for k, v in sorted(counts.items()) if k.startswith("exit")},
               "wall_s": round(time.time() - start, 1), "failures": kept}
    text = json.dumps(summary, indent=1)
    if a.out:
        os.makedirs(a.out, exist_ok=True)
        with open(os.path.join(a.out, "summary.json"), "w") as f:
            f.write(text + "\n")
    print(json.dumps({k: v for k, v in summary.items() if k != "failures"}))
    return 1 if counts["crash"] or counts["hang"] or counts["multiline"] else 0


if __name__ == "__main__":
    sys.exit(main())
