#!/usr/bin/env bash
# Runs on a lent GPU machine from the project root, over what ../shared/gpu/pack.sh
# carried in .gpu/ (copy this file to .gpu/run.sh after packing). Logs go to $OUT.
# Every step is bounded so the whole run ends inside one 10-minute device command.
# Usage: bash .gpu/run.sh [all|tests|sweep|vary|python|sanitize|ncu]...   (default: all)
# Packing: ../shared/gpu/pack.sh, then copy this file to .gpu/run.sh, build/libsapsim.so to
# .gpu/lib and the gymnasium wheels (pip download gymnasium) to .gpu/wheels.
set -uo pipefail
export LD_LIBRARY_PATH="$PWD/.gpu/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
OUT=${OUT:-gpu_out}; mkdir -p "$OUT"
G=.gpu/bin S=.gpu/scenes
steps=${*:-all}
want() { [[ " $steps " == *" all "* || " $steps " == *" $1 "* ]]; }
nvidia-smi > "$OUT/nvidia-smi.txt" 2>&1; head -n 12 "$OUT/nvidia-smi.txt"
if want tests; then
  echo "== parity tests"
  for t in "$G"/test_gpu "$G"/test_shim_gpu; do
    [ -x "$t" ] && SAPSIM_REQUIRE_GPU=1 timeout 150 "$t" > "$OUT/$(basename "$t").log" 2>&1
    echo "$(basename "$t"): exit $?"; tail -n 4 "$OUT/$(basename "$t").log"
  done
fi
if want sweep; then
  echo "== sweep"
  timeout 200 "$G"/sapsim bench $S/humanoid.xml --device cuda --no-mujoco \
    --worlds 1,256,1024,8192,32768 --steps 200 --preset approx32,drake --json "$OUT/bench.jsonl" 2>&1 | tail -n 14
fi
if want vary; then
  echo "== solver layouts (humanoid, approx32, 8192 worlds)"
  timeout 240 "$G"/sapsim bench $S/humanoid.xml --device cuda --no-mujoco --worlds 1,256,8192 --steps 100 \
    --preset approx32 --vary "line_search=armijo_decay+warm_start=qvel,line_search=newton_wolfe+warm_start=qvel,line_search=newton_wolfe,line_search=exact_root,free_motion_kernel=thread,world_block_threads=128,solve_kernel=thread,newton_loop=while,graph=1" \
    --json "$OUT/vary.jsonl" 2>&1 | tail -n 24
fi
if want python && [ -f .gpu/lib/libsapsim.so ]; then
  echo "== Python package on the GPU (copy build/libsapsim.so into .gpu/lib when packing)"
  SAPSIM_LIB=.gpu/lib/libsapsim.so PYTHONPATH=python timeout 120 python3 - <<'PY' 2>&1 | tee "$OUT/python.log"
import numpy as np, sapsim
scene, n, k = ".gpu/scenes/humanoid.xml", 64, 20
a = sapsim.Sim(scene, nworld=n, device="cuda", preset="approx64")
b = sapsim.Sim(scene, nworld=n, device="cpu", preset="approx64")
rng = np.random.default_rng(1)
u = rng.uniform(-0.5, 0.5, (n, a.nu))
a.ctrl = u
b.ctrl = u
a.step(k)
b.step(k)
d = np.abs(np.asarray(a.qpos) - np.asarray(b.qpos)).max()
print(f"python: cuda vs cpu, {n} humanoids x {k} steps, approx64: max |qpos diff| {d:.3e}; "
      f"converged {int(np.asarray(a.converged).sum())}/{n}")
assert d < 1e-6, d
PY
  # device arrays, caller streams, vector env on torch (python/tests/gpu_check.py); gymnasium
  # and its dependencies come as wheels in .gpu/wheels (the machine has no network)
  SAPSIM_WHEELS=.gpu/wheels SAPSIM_LIB=.gpu/lib/libsapsim.so PYTHONPATH=python timeout 200 \
    python3 python/tests/gpu_check.py 2>&1 | tee "$OUT/gpu_check.log" | tail -n 12
fi
if want sanitize && command -v compute-sanitizer >/dev/null; then
  echo "== compute-sanitizer (small)"
  for tool in memcheck racecheck synccheck initcheck; do
    timeout 90 compute-sanitizer --tool $tool --error-exitcode 9 \
      "$G"/sapsim run $S/humanoid.xml --device cuda --worlds 8 --steps 3 --quiet > /tmp/san_$tool.log 2>&1
    echo "$tool: exit $?  $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' /tmp/san_$tool.log | tail -n 1)"
    { echo "== $tool"; cat /tmp/san_$tool.log; } >> "$OUT/sanitizer.log"
  done
fi
if want ncu && command -v ncu >/dev/null; then
  echo "== ncu (key kernels of one step)"
  timeout 150 ncu --clock-control none --launch-skip 20 --launch-count 12 \
    --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats \
    "$G"/sapsim run $S/humanoid.xml --device cuda --worlds 8192 --steps 4 --quiet > "$OUT/ncu.txt" 2>&1
  echo "ncu: exit $?"; grep -E '^  [a-z_]+.*\(|Duration|Registers Per|Achieved Occupancy|Theoretical Occupancy' "$OUT/ncu.txt" | head -n 80
fi
ls -la "$OUT"
