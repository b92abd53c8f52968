#!/usr/bin/env python3
"""The xo bench workloads' math written with JAX (jax.jit on the CPU), for a side-by-side
comparison with `xo bench` on the same machine (bench/jax_compare.sh runs both).

Same shapes, step counts, initial values and update rules as bench/bench_rnn.c,
bench/bench_ode.c and bench/bench_eval1.c:

  rnn-train-b100, rnn-train-b10000  tanh RNN h256 in8, BPTT over 8 steps, SGD
      (lr 1e-3 / batch); a new minibatch (one of 4) from host memory every iteration, the
      loss (||h_8 - target||_2, the gradient of 0.5 ||h_8 - target||^2) read back.
      Written twice: the 8 steps unrolled in Python (traced once), and with lax.scan.
  neural-ode-train  3-100-3 tanh MLP right-hand side, batch 16, RK4 over 100 steps of
      0.01, backprop through every stage (jax.grad of the discrete solve), the
      gradient's norm clipped to 1, SGD lr 1e-3, the loss read back every iteration.
      lax.scan over the steps (the unrolled form takes minutes to compile).
  eval-3-100-3-b1  y = W2 tanh(W1 x + b1) + b2 at batch 1, x moved by 1e-3 y between
      evaluations: one jitted call per evaluation (x in, y out), and the whole loop of
      evaluations in one jitted lax.fori_loop (ns per evaluation).

Prints one line per workload: `NAME RATE UNIT (...)`, and with --json FILE the same as JSON.
The initial values use the bench's generator, so the first losses can be compared with
the C programs' (printed as `loss0`). Threads: whatever XLA uses on the CPU (all cores);
the figures are the median of ROUNDS rounds of BUDGET seconds each after compilation.

Usage: python3 bench/jax_compare.py [--quick] [--json FILE] [--only NAME[,NAME]]
"""
import argparse
import json
import statistics
import sys
import time

import numpy as np

try:
    import jax
    import jax.numpy as jnp
    from jax import lax
except ImportError:  # pragma: no cover - said plainly, the shell script checks for it
    sys.exit("jax_compare.py: jax is not installed (pip install jax jaxlib)")

jax.config.update("jax_platforms", "cpu")


def noise(n, scale, seed, mult_add=7):
    """bench_rnn.c's fill() (bench_ode.c's ode_init with mult_add 17): an LCG from
    seed * 2654435761 + mult_add, scale * [-1, 1) noise; vectorised by jumping the LCG
    (x_{s+i} = a^i x_s + c (a^{i-1} + ... + 1) mod 2^32, uint64 products wrap harmlessly)."""
    if scale == 0:
        return np.zeros(n, dtype=np.float32)
    a, c, m = 1664525, 1013904223, 1 << 32
    blk = min(n, 4096)
    A, C = np.empty(blk, np.uint64), np.empty(blk, np.uint64)
    ai, ci = 1, 0
    for i in range(blk):
        ai, ci = ai * a % m, (ci * a + c) % m
        A[i], C[i] = ai, ci
    raw = np.empty(n, np.uint64)
    x = (seed * 2654435761 + mult_add) % m
    for s in range(0, n, blk):
        k = min(blk, n - s)
        raw[s:s + k] = (A[:k] * np.uint64(x) + C[:k]) & np.uint64(0xFFFFFFFF)
        x = int(raw[s + k - 1])
    u = (raw >> np.uint64(8)).astype(np.float32) / np.float32(1 << 24) * np.float32(2) - np.float32(1)
    return (np.float32(scale) * u).astype(np.float32)


def timed(fn, budget, rounds, units=1.0):
    """Median over rounds of the rate of fn() (which must block), after one untimed call."""
    fn()
    rates = []
    for _ in range(rounds):
        n, t0 = 0, time.perf_counter()
        while True:
            fn()
            n += 1
            t = time.perf_counter() - t0
            if t >= budget / rounds:
                break
        rates.append(n * units / t)
    return statistics.median(rates)


# ---- the RNN (bench_rnn.c) ------------------------------------------------------------

R_X, R_TARGET, R_WX, R_WH, R_B = 0, 1, 2, 3, 4
H, IN, T = 256, 8, 8


def rnn_forward_unrolled(params, x, target):
    wx, wh, b = params
    h = jnp.zeros((x.shape[1], H), jnp.float32)
    for t in range(T):
        h = jnp.tanh(x[t] @ wx + h @ wh + b)
    d = h - target
    return 0.5 * jnp.sum(d * d), d


def rnn_forward_scan(params, x, target):
    wx, wh, b = params

    def cell(h, xt):
        h = jnp.tanh(xt @ wx + h @ wh + b)
        return h, None

    h, _ = lax.scan(cell, jnp.zeros((x.shape[1], H), jnp.float32), x)
    d = h - target
    return 0.5 * jnp.sum(d * d), d


def make_rnn_step(forward, lr):
    def step(params, x, target):
        (_, d), grads = jax.value_and_grad(forward, has_aux=True)(params, x, target)
        loss = jnp.sqrt(jnp.sum(d * d))  # what the bench reads back: snrm2 of h_T - target
        return tuple(p - lr * g for p, g in zip(params, grads)), loss

    return jax.jit(step, donate_argnums=0)


def rnn_bench(batch, forward, budget, rounds):
    batches = [noise(T * batch * IN, 1.0, 100 + i).reshape(T, batch, IN) for i in range(4)]
    target = jnp.asarray(noise(batch * H, 0.5, R_TARGET + 11).reshape(batch, H))
    params = (jnp.asarray(noise(IN * H, 0.3, R_WX + 11).reshape(IN, H)),
              jnp.asarray(noise(H * H, 1.0 / 16.0, R_WH + 11).reshape(H, H)),
              jnp.asarray(noise(H, 0.1, R_B + 11)))
    step = make_rnn_step(forward, 1e-3 / batch)
    state = {"p": params, "i": 0, "loss0": None}

    def one():
        x = batches[state["i"] % 4]  # from host memory, as the bench's xo_buffer_write
        state["i"] += 1
        state["p"], loss = step(state["p"], x, target)
        value = float(loss)  # read back (blocks)
        if state["loss0"] is None:
            state["loss0"] = value

    rate = timed(one, budget, rounds)
    return rate, state["loss0"]


# ---- the neural ODE (bench_ode.c) -----------------------------------------------------

ODE_B, ODE_D, ODE_H, ODE_STEPS, ODE_DT, ODE_LR, ODE_CLIP = 16, 3, 100, 100, 0.01, 1e-3, 1.0
O_W1, O_B1, O_W2, O_B2, O_Z, O_TARGET = 0, 1, 2, 3, 8, 12


def ode_init(idx, n, scale):
    return noise(n, scale, idx, mult_add=17)


def ode_f(params, z):
    w1, b1, w2, b2 = params
    return jnp.tanh(z @ w1 + b1) @ w2 + b2


def ode_solve(params, z0):
    h = ODE_DT

    def rk4(z, _):
        k1 = ode_f(params, z)
        k2 = ode_f(params, z + 0.5 * h * k1)
        k3 = ode_f(params, z + 0.5 * h * k2)
        k4 = ode_f(params, z + h * k3)
        return z + h * (k1 / 6 + k2 / 3 + k3 / 3 + k4 / 6), None

    z, _ = lax.scan(rk4, z0, None, length=ODE_STEPS)
    return z


def ode_loss(params, z0, target):
    d = ode_solve(params, z0) - target
    return 0.5 * jnp.sum(d * d), d


@jax.jit
def ode_step(params, z0, target):
    (_, d), grads = jax.value_and_grad(ode_loss, has_aux=True)(params, z0, target)
    norm = jnp.sqrt(sum(jnp.sum(g * g) for g in grads))
    scale = ODE_CLIP / jnp.maximum(norm, ODE_CLIP)
    return tuple(p - ODE_LR * scale * g for p, g in zip(params, grads)), jnp.sqrt(jnp.sum(d * d))


def ode_bench(budget, rounds):
    B, D, Hh = ODE_B, ODE_D, ODE_H
    params = (jnp.asarray(ode_init(O_W1, D * Hh, 0.5).reshape(D, Hh)), jnp.asarray(ode_init(O_B1, Hh, 0.1)),
              jnp.asarray(ode_init(O_W2, Hh * D, 0.1).reshape(Hh, D)), jnp.asarray(ode_init(O_B2, D, 0.1)))
    z0 = jnp.asarray(ode_init(O_Z, (ODE_STEPS + 1) * B * D, 0.5)[:B * D].reshape(B, D))
    target = jnp.asarray(ode_init(O_TARGET, B * D, 0.5).reshape(B, D))
    state = {"p": params, "loss0": None}

    def one():
        state["p"], loss = ode_step(state["p"], z0, target)
        value = float(loss)
        if state["loss0"] is None:
            state["loss0"] = value

    return timed(one, budget, rounds), state["loss0"]


# ---- the batch-1 evaluation (bench_eval1.c) --------------------------------------------

def eval1_params():
    r = 12345

    def nxt(scale):
        nonlocal r
        r = (r * 1664525 + 1013904223) & 0xFFFFFFFF
        return np.float32(scale * (np.float32(r >> 8) / np.float32(1 << 24) * 2.0 - 1.0))

    w1 = np.array([nxt(1.0) for _ in range(3 * 100)], np.float32).reshape(3, 100)
    b1 = np.array([nxt(0.5) for _ in range(100)], np.float32)
    w2 = np.array([nxt(0.2) for _ in range(100 * 3)], np.float32).reshape(100, 3)
    b2, x0 = np.empty(3, np.float32), np.empty(3, np.float32)
    for k in range(3):
        b2[k], x0[k] = nxt(0.1), nxt(1.0)
    return tuple(jnp.asarray(a) for a in (w1, b1, w2, b2)), x0


def eval1_bench(budget, rounds):
    params, x0 = eval1_params()
    f = jax.jit(lambda p, x: jnp.tanh(x @ p[0] + p[1]) @ p[2] + p[3])
    state = {"x": x0.copy()}

    def one_call():
        y = np.asarray(f(params, state["x"]))  # x in from the host, y out to it
        state["x"] = x0 + np.float32(1e-3) * y

    per_call = timed(one_call, budget, rounds)
    n = 10000

    @jax.jit
    def loop(p, x):
        def body(_, x):
            return jnp.asarray(x0) + 1e-3 * (jnp.tanh(x @ p[0] + p[1]) @ p[2] + p[3])

        return lax.fori_loop(0, n, body, x)

    whole = timed(lambda: loop(params, jnp.asarray(x0)).block_until_ready(), budget, rounds, units=n)
    return 1e9 / per_call, 1e9 / whole


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="1 s per workload (else 3 s)")
    ap.add_argument("--json", help="also write the results to FILE")
    ap.add_argument("--only", help="comma-separated workload names (prefixes)")
    a = ap.parse_args()
    budget, rounds = (1.0, 6) if a.quick else (3.0, 12)
    want = a.only.split(",") if a.only else None
    sel = lambda name: want is None or any(name.startswith(w) for w in want)
    out = []
    print(f"jax {jax.__version__}, jaxlib on {jax.devices()[0].platform}; median of {rounds} rounds, "
          f"{budget:g} s per workload", flush=True)

    def report(name, rate, unit, extra):
        out.append({"name": name, "rate": rate, "unit": unit, **extra})
        more = ", ".join(f"{k} {v:.6g}" if isinstance(v, float) else f"{k} {v}" for k, v in extra.items())
        print(f"{name} {rate:.4g} {unit} ({more})", flush=True)

    for batch in (100, 10000):
        name = f"rnn-train-b{batch}"
        if not sel(name):
            continue
        for form, fwd in (("unrolled", rnn_forward_unrolled), ("scan", rnn_forward_scan)):
            t0 = time.perf_counter()
            rate, loss0 = rnn_bench(batch, fwd, budget, rounds)
            report(name, rate, "it/s", {"form": form, "loss0": loss0, "wall_s": time.perf_counter() - t0})
    if sel("neural-ode-train"):
        t0 = time.perf_counter()
        rate, loss0 = ode_bench(budget, rounds)
        report("neural-ode-train", rate, "it/s", {"form": "scan", "loss0": loss0, "wall_s": time.perf_counter() - t0})
    if sel("eval-3-100-3-b1"):
        per_call_ns, loop_ns = eval1_bench(budget, rounds)
        report("eval-3-100-3-b1", per_call_ns, "ns", {"form": "one jit call per evaluation"})
        report("eval-3-100-3-b1", loop_ns, "ns", {"form": "whole loop in one jit (fori_loop)"})
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"jax": jax.__version__, "budget_s": budget, "rounds": rounds, "workloads": out}, f, indent=1)


if __name__ == "__main__":
    main()
