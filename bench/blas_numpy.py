#!/usr/bin/env python3
"""numpy matmul through libcrossover_blas.so against numpy on plain OpenBLAS, same run.

Usage: /usr/bin/python3 bench/blas_numpy.py path/to/libcrossover_blas.so [sizes...]
(Debian's python3-numpy: a numpy from PyPI carries its own OpenBLAS, which no drop-in
sees.) For each size n (default 64 256 1024 2048) and dtype, child processes alternate
between plain numpy and numpy with LD_PRELOAD=the drop-in (ROUNDS times, default 5); each times `a @ b` (median of
repeats after a warm-up); the best child of each side is kept. Also prints where the
drop-in ran the calls (XO_LOG=summary): `direct` = straight to OpenBLAS."""
import os
import re
import subprocess
import sys

ROUNDS = int(os.environ.get("ROUNDS", "5"))

CHILD = r"""
import sys, time
import numpy as np
n, dt = int(sys.argv[1]), np.dtype(sys.argv[2])
rng = np.random.default_rng(0)
a = rng.standard_normal((n, n)).astype(dt)
b = rng.standard_normal((n, n)).astype(dt)
reps = max(5, min(2000, int(3e9 / (2.0 * n ** 3))))
for _ in range(3):
    a @ b
times = []
for _ in range(reps):
    t0 = time.perf_counter()
    a @ b
    times.append(time.perf_counter() - t0)
times.sort()
print(times[len(times) // 2] * 1e3)
"""


def run(n, dt, lib):
    env = dict(os.environ)
    if lib:
        env.update(LD_PRELOAD=lib, XO_LOG="summary")
    r = subprocess.run([sys.executable, "-c", CHILD, str(n), dt], env=env, capture_output=True, text=True,
                       check=True)
    where = ""
    if lib:
        m = re.search(r"^\s+[sd]gemm\s+cblas\s+([\d ]+)$", r.stderr, re.M)
        head = re.search(r"^\s+routine\s+abi\s+(.*)$", r.stderr, re.M)
        if m and head:
            cols, calls = head.group(1).split(), m.group(1).split()
            where = " ".join(f"{c}={v}" for c, v in zip(cols, calls) if v != "0")
    return float(r.stdout.split()[-1]), where


def main():
    lib = os.path.abspath(sys.argv[1])
    sizes = [int(s) for s in sys.argv[2:]] or [64, 256, 1024, 2048]
    print(f"{'n':>6} {'dtype':>8} {'openblas ms':>12} {'drop-in ms':>11} {'ratio':>7}  where (calls)")
    for n in sizes:
        for dt in ("float64", "float32"):
            plain, dropin, where = [], [], ""
            for _ in range(ROUNDS):
                plain.append(run(n, dt, None)[0])
                t, where = run(n, dt, lib)
                dropin.append(t)
            p, d = min(plain), min(dropin)
            print(f"{n:>6} {dt:>8} {p:>12.4f} {d:>11.4f} {d / p:>7.3f}  {where}", flush=True)


if __name__ == "__main__":
    main()
