#!/usr/bin/env python3
"""The layers of docs/design.md, checked rather than believed.

1. Every internal header compiles on its own (a file that includes it first needs
   nothing else before it).
2. No call cycle between the files of one library: from `nm` of each object in the
   archives, file A -> file B when A uses a symbol B defines; any strongly connected
   group of two or more files is a circle, and fails the check. In the core, no file
   calls a file of a folder above its own (LAYERS, top to bottom).
3. The core never calls a plugin by name (only the generated registry may name their
   register functions), and no plugin calls the core by name.
4. `#include` lines follow the layers too: a core file includes only headers of its
   own folder or of folders below it, and no files include each other around a circle.
   A call to a `static inline` helper leaves no trace in `nm`; the include it needs does.

Usage: check_layers.py SOURCE_DIR BUILD_DIR CC
       check_layers.py --includes SOURCE_DIR   (check 4 alone, on any tree: no build)
Exit 0: clean; 1: a violation (listed on stderr)."""
import os
import re
import subprocess
import sys
import tempfile

LAYERS = ["context", "sim", "plan", "ops", "place", "calibrate", "exec", "device", "base"]  # top to bottom


def sccs(nodes, edges):
    index, low, on, stack, result, counter = {}, {}, set(), [], [], [0]
    sys.setrecursionlimit(10000)
    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on.discard(w)
                group.append(w)
                if w == v:
                    break
            result.append(group)
    for v in nodes:
        if v not in index:
            visit(v)
    return result


def check_includes(src):
    """Check 4 over the core's sources: the list of violations."""
    found, layer_of = [], {}
    for i, l in enumerate(LAYERS):
        for f in os.listdir(os.path.join(src, "core", l)):
            if f.endswith((".c", ".h")):
                layer_of[l + "/" + f] = i
    header_at = {os.path.basename(k): k for k in layer_of if k.endswith(".h")}
    edges = {}
    for f, i in sorted(layer_of.items()):
        with open(os.path.join(src, "core", f)) as text:
            for line in text:
                m = re.match(r'\s*#\s*include\s*"([^"]+)"', line)
                if not m or os.path.basename(m.group(1)) not in header_at:
                    continue
                h = header_at[os.path.basename(m.group(1))]
                edges.setdefault(f, set()).add(h)
                if layer_of[h] < i:
                    found.append("core/%s includes core/%s, a folder above its own" % (f, h))
    for group in sccs(sorted(layer_of), edges):
        if len(group) > 1:
            found.append("an include circle: " + ", ".join("core/" + g for g in sorted(group)))
    return found


if len(sys.argv) == 3 and sys.argv[1] == "--includes":
    bad = check_includes(os.path.abspath(sys.argv[2]))
    for f in bad:
        print("FAIL: " + f, file=sys.stderr)
    print("includes: %s" % ("follow the layers" if not bad else "%d violations" % len(bad)))
    sys.exit(1 if bad else 0)

src, build, cc = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2]), sys.argv[3]
failures = check_includes(src)
print("includes: %s" % ("follow the layers" if not failures else "%d violations" % len(failures)))

# ---- 1. headers on their own ---------------------------------------------------------
includes = (["core/include"] + ["core/" + l for l in LAYERS] +
            ["blas", "plugins/cpu", "plugins/opencl", "plugins/cuda", "tests"])
gen = [os.path.join(root) for root, _, files in os.walk(build) if "xo_cl_embedded.h" in files]
gen += [os.path.dirname(root) for root, _, files in os.walk(build)
        if root.endswith(os.sep + "crossover") and "version.h" in files and "noroot" not in root and "consumer" not in root]
flags = ["-std=c11", "-D_GNU_SOURCE", "-DCL_TARGET_OPENCL_VERSION=120", "-fsyntax-only", "-Wall", "-Wextra",
         "-Werror"] + ["-I" + os.path.join(src, i) for i in includes] + ["-I" + g for g in gen]
headers = []
for top in ("core", "plugins", "blas"):
    for root, _, files in os.walk(os.path.join(src, top)):
        headers += [os.path.join(root, f) for f in files if f.endswith(".h")]
with tempfile.TemporaryDirectory() as tmp:
    for h in sorted(headers):
        unit = os.path.join(tmp, "unit.c")
        with open(unit, "w") as f:
            f.write('#include "%s"\n' % h)
        r = subprocess.run([cc] + flags + ["-I" + os.path.dirname(h), unit], capture_output=True, text=True)
        rel = os.path.relpath(h, src)
        if r.returncode != 0:
            if "No such file or directory" in r.stderr and ("CL/cl.h" in r.stderr or "clblast" in r.stderr):
                continue  # a plugin whose SDK is absent here
            failures.append("header %s does not compile on its own:\n%s" % (rel, r.stderr.strip()[:800]))
print("headers: %d compiled alone" % len(headers))

# ---- 2. and 3. calls between files ---------------------------------------------------
def archives():
    for root, _, files in os.walk(build):
        if "/tests" in root or "noroot" in root or "consumer" in root or "CMakeFiles" in root.split(os.sep)[-1:]:
            continue
        for f in files:
            if f.startswith("libcrossover") and f.endswith(".a"):
                yield os.path.join(root, f)

def symbols(archive):
    """{object: (defined set, undefined set)}"""
    out = subprocess.run(["nm", "-A", archive], capture_output=True, text=True).stdout
    objs = {}
    for line in out.splitlines():
        # archive:object: [value] type name
        parts = line.split(":", 2)
        if len(parts) < 3:
            continue
        obj, rest = parts[1], parts[2].split()
        if len(rest) < 2:
            continue
        kind, name = rest[-2], rest[-1]
        d, u = objs.setdefault(obj, (set(), set()))
        (u if kind == "U" else d if kind in "TDBRCVW" else set()).add(name)
    return objs

all_defs = {}
per_archive = {}
for a in sorted(archives()):
    objs = symbols(a)
    per_archive[a] = objs
    for o, (d, _) in objs.items():
        for s in d:
            all_defs.setdefault(s, (a, o))
for a, objs in per_archive.items():
    defined_here = {s: o for o, (d, _) in objs.items() for s in d}
    edges = {}
    for o, (_, u) in objs.items():
        for s in u:
            if s in defined_here and defined_here[s] != o:
                edges.setdefault(o, set()).add(defined_here[s])
            elif s in all_defs and all_defs[s][0] != a:
                other = os.path.basename(all_defs[s][0])
                me = os.path.basename(a)
                registry = "xo_plugins_init" in o
                if me == "libcrossover.a" and other != "libcrossover.a" and not registry:
                    failures.append("%s (core) calls %s in %s by name" % (o, s, other))
                if me != "libcrossover.a" and other == "libcrossover.a":
                    failures.append("%s (%s) calls the core's %s by name" % (o, me, s))
    if os.path.basename(a) == "libcrossover.a":  # the core's folders, top to bottom
        layer_of = {}
        for i, l in enumerate(LAYERS):
            for f in os.listdir(os.path.join(src, "core", l)):
                layer_of[f + ".o"] = i
        for o, targets in edges.items():
            for t in targets:
                if o in layer_of and t in layer_of and layer_of[t] < layer_of[o]:
                    failures.append("core/%s/%s calls up into core/%s/%s" % (
                        LAYERS[layer_of[o]], o[:-2], LAYERS[layer_of[t]], t[:-2]))
    for group in sccs(sorted(objs), edges):
        if len(group) > 1:
            detail = "; ".join("%s -> %s" % (o, ", ".join(sorted(edges.get(o, set()) & set(group))))
                               for o in sorted(group))
            failures.append("a call cycle in %s: %s" % (os.path.basename(a), detail))
    print("%s: %d files, no cycle" % (os.path.basename(a), len(objs)) if not any(
        os.path.basename(a) in f and "cycle" in f for f in failures) else "%s: cycles" % os.path.basename(a))

for f in failures:
    print("FAIL: " + f, file=sys.stderr)
sys.exit(1 if failures else 0)
