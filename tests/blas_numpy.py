#!/usr/bin/env python3
"""numpy runs unchanged on libcrossover_blas.so (LD_PRELOAD): `a @ b` and `np.dot` give the
right results, and XO_LOG=summary shows their calls (cblas_dgemm, cblas_sgemm, cblas_ddot),
both when small calls go straight to OpenBLAS and when crossover places every call
(XO_DEVICE=cpu XO_BLAS_PLACE=all: numpy's own arrays wrapped, no copy); `import numpy`
builds no crossover context (XO_LOG=info names the thresholds in force); numpy's own xerbla_ takes the
preloaded drop-in's place (lapack_lite.dorgqr with a bad argument raises ValueError, as
numpy's test_xerbla_override checks); and with XO_BLAS_LIB naming each other CPU BLAS given
(whose CBLAS calls its own Fortran routines), numpy imports and computes, within the
timeout. Usage: blas_numpy.py LIBCROSSOVER_BLAS [OTHER_CPU_BLAS ...].
Exit 77 (skipped) without Debian's python3-numpy, or in a sanitizer build (an instrumented
library cannot be preloaded into an uninstrumented python)."""
import os
import re
import subprocess
import sys

CHILD = r"""
import numpy as np
rng = np.random.default_rng(1)
for n in (4, 64, 200):
    for dt in (np.float64, np.float32):
        a = rng.standard_normal((n, n)).astype(dt)
        b = rng.standard_normal((n, n)).astype(dt)
        ref = np.add.reduce(a[:, :, None].astype(np.float64) * b[None, :, :], axis=1)  # no BLAS
        tol = 1e-10 if dt == np.float64 else 1e-4
        assert np.allclose(a @ b, ref, rtol=tol, atol=tol * n), (n, dt)
        assert np.allclose(a.T @ b, np.add.reduce(a.T[:, :, None].astype(np.float64) * b[None, :, :], axis=1),
                           rtol=tol, atol=tol * n), (n, dt, "transposed")
    x = rng.standard_normal(n)
    y = rng.standard_normal(n)
    assert abs(np.dot(x, y) - float(np.add.reduce(x * y))) < 1e-10 * n, n
print("numpy ok")
"""

# numpy's test_xerbla_override, without the fork: numpy's xerbla_ raises ValueError.
XERBLA = r"""
import numpy as np
import numpy.linalg.lapack_lite as lapack_lite
a = np.array([[1.]])
try:
    lapack_lite.dorgqr(1, 1, 1, a, 0, a, a, 0, 0)  # M, N, K, A, LDA = 0 <- invalid
except ValueError as e:
    assert "DORGQR parameter number 5" in str(e), str(e)
    print("xerbla ok")
"""


def run(code, lib, **extra):
    env = dict(os.environ, LD_PRELOAD=lib, **extra)
    for key in ("XO_DEVICE", "XO_BLAS_LIB"):
        if key not in extra:
            env.pop(key, None)
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=int(os.environ.get("XO_TEST_TIMEOUT", "600")))


def main():
    lib = os.path.abspath(sys.argv[1])
    if os.environ.get("XO_SANITIZE"):
        print("skipped: sanitizer build")
        return 77
    try:
        import numpy
    except ImportError:
        print("skipped: no numpy (Debian's python3-numpy)")
        return 77
    # numpy from PyPI carries its own OpenBLAS under other names: no drop-in can see it.
    if os.path.isdir(os.path.join(os.path.dirname(os.path.dirname(numpy.__file__)), "numpy.libs")):
        print("skipped: this numpy bundles its own OpenBLAS; use Debian's python3-numpy")
        return 77
    for device in (None, "cpu"):
        r = run(CHILD, lib, XO_LOG="summary", **({"XO_DEVICE": device, "XO_BLAS_PLACE": "all"} if device else {}))
        print(f"--- XO_DEVICE={device or 'auto'}: rc {r.returncode}\n{r.stdout}{r.stderr}")
        if r.returncode != 0 or "numpy ok" not in r.stdout:
            return 1
        for routine in ("dgemm", "sgemm", "ddot"):
            m = re.search(rf"^\s+{routine}\s+cblas\s+([\d ]+)$", r.stderr, re.M)
            calls = [int(v) for v in m.group(1).split()] if m else []
            # auto: the direct column counts them; cpu: the placed ones, on device 0
            if not calls or (device == "cpu" and calls[1] == 0) or sum(calls) == 0:
                print(f"no {routine} calls in the XO_LOG=summary table")
                return 1
    r = run("import numpy", lib, XO_LOG="info")
    print(f"--- import numpy, XO_LOG=info: rc {r.returncode}\n{r.stdout}{r.stderr}")
    if r.returncode != 0 or "no context yet" not in r.stderr or "the devices found" in r.stderr:
        print("import numpy built a context")
        return 1
    r = run(XERBLA, lib)
    print(f"--- numpy's xerbla_: rc {r.returncode}\n{r.stdout}{r.stderr}")
    if r.returncode != 0 or "xerbla ok" not in r.stdout:
        return 1
    for other in sys.argv[2:]:
        for device in (None, "cpu"):
            try:
                r = run(CHILD, lib, XO_BLAS_LIB=other,
                        **({"XO_DEVICE": device, "XO_BLAS_PLACE": "all"} if device else {}))
            except subprocess.TimeoutExpired:
                print(f"--- XO_BLAS_LIB={other} XO_DEVICE={device or 'auto'}: timed out")
                return 1
            print(f"--- XO_BLAS_LIB={other} XO_DEVICE={device or 'auto'}: rc {r.returncode}\n{r.stdout}{r.stderr}")
            if r.returncode != 0 or "numpy ok" not in r.stdout:
                return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
