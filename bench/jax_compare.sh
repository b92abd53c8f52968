#!/bin/sh
# crossover against JAX (jax.jit on the CPU) on the same machine, side by side:
# bench/jax_compare.py (the workloads' math in JAX) and `xo bench --workloads` (eager,
# plan, plain CBLAS), then one table. Usage, from the repository root after building:
#
#   bench/jax_compare.sh [BUILD_DIR (default build)] [--full]
#
# PYTHON names the interpreter that has jax (default python3); e.g.
#   python3 -m venv /tmp/jaxenv && /tmp/jaxenv/bin/pip install jax jaxlib
#   PYTHON=/tmp/jaxenv/bin/python bench/jax_compare.sh
# The results stay in $OUT (default a new temporary directory): jax.json, xo/ (the
# bench's report.md, summary.json, workloads.csv), table.md.
set -eu
build=${1:-build}
mode=--quick
[ "${2:-}" = "--full" ] && mode=
py=${PYTHON:-python3}
out=${OUT:-$(mktemp -d)}
here=$(dirname "$0")

"$py" -c 'import jax' 2>/dev/null || {
    echo "jax_compare.sh: $py has no jax (pip install jax jaxlib; set PYTHON)" >&2
    exit 1
}
echo "== JAX ($py)" >&2
"$py" "$here/jax_compare.py" $mode --json "$out/jax.json" >&2
echo "== xo bench $mode --workloads" >&2
XO_CACHE_DIR=${XO_CACHE_DIR:-$(mktemp -d)} "$build/bench/xo" bench $mode --workloads --out "$out/xo"
python3 - "$out/jax.json" "$out/xo/summary.json" >"$out/table.md" <<'EOF'
import json, sys
jx = json.load(open(sys.argv[1]))
xo = json.load(open(sys.argv[2]))
w = {x["name"]: x for x in xo["workloads"]}
print("| workload | unit | JAX jit | crossover eager (auto) | crossover plan | plain CBLAS | plan speed-up over JAX |")
print("|---|---|---|---|---|---|---|")
for j in jx["workloads"]:
    name, form = j["name"], j.get("form", "")
    if name == "eval-3-100-3-b1":
        e = xo.get("eval_3_100_3") or {}
        med = e.get("median_ns") or {}
        plan = med.get("plan")
        ratio = f"{j['rate'] / plan:.2f}" if plan else "-"
        f = lambda v: f"{v:.0f}" if v else "-"
        print(f"| {name} ({form}) | ns/eval (lower is better) | {j['rate']:.0f} | {f(med.get('eager'))} | "
              f"{f(plan)} | {f(med.get('CBLAS'))} | {ratio} |")
        continue
    x = w.get(name, {})
    auto = (x.get("rates") or {}).get("auto")
    plan, cblas = x.get("plan"), x.get("cblas")
    f = lambda v: f"{v:.4g}" if v else "-"
    ratio = f"{plan / j['rate']:.2f}" if plan else "-"
    print(f"| {name} ({form}) | {j['unit']} | {j['rate']:.4g} | {f(auto)} | {f(plan)} | {f(cblas)} | {ratio} |")
EOF
cat "$out/table.md"
echo "results in $out" >&2
