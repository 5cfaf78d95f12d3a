#!/usr/bin/env bash
# Loads and steps robots of a MuJoCo Menagerie checkout with sapsim (CPU, 4 worlds,
# 200 steps from the first keyframe) and prints a Markdown table: runs, or the exact
# reason it does not; for those that run, `sapsim compare` over 1 s with zero controls
# gives the base height in sapsim and in MuJoCo 4 and the largest joint difference. Menagerie is not part of this repository: bring a checkout
# (e.g. with git) and pass its path.
# Usage: bench/check_robots.sh MENAGERIE_DIR [SAPSIM_BINARY]
set -uo pipefail
dir=${1:?usage: bench/check_robots.sh MENAGERIE_DIR [SAPSIM_BINARY]}
bin=${2:-build/sapsim}
scenes=(unitree_go1/scene.xml unitree_go2/scene.xml unitree_go2/scene_mjx.xml unitree_a1/scene.xml
        unitree_g1/scene.xml unitree_g1/scene_mjx.xml unitree_h1/scene.xml
        anybotics_anymal_c/scene.xml anybotics_anymal_c/scene_mjx.xml boston_dynamics_spot/scene.xml
        franka_emika_panda/scene.xml franka_emika_panda/mjx_scene.xml universal_robots_ur5e/scene.xml
        shadow_hand/scene_right.xml agility_cassie/scene.xml berkeley_humanoid/scene.xml
        booster_t1/scene.xml google_barkour_v0/scene.xml google_barkour_v0/scene_mjx.xml
        google_barkour_vb/scene.xml google_barkour_vb/scene_mjx.xml robotis_op3/scene.xml)
echo "| scene | result | 1 s, zero controls: base z sapsim / MuJoCo, max joint diff (rad or m) |"
echo "|---|---|---|"
for s in "${scenes[@]}"; do
  f="$dir/$s"
  if [ ! -f "$f" ]; then echo "| $s | not in this checkout | |"; continue; fi
  out=$(timeout 300 "$bin" run "$f" --device cpu --worlds 4 --steps 200 --threads 1 2>&1); rc=$?
  if [ $rc -eq 0 ]; then
    flags=$(echo "$out" | grep -m1 '^all .* world-steps:' | sed 's/^all //')
    dt=$(echo "$out" | grep -m1 -o 'dt [0-9.e-]*' | cut -d' ' -f2)
    steps=$(awk -v dt="${dt:-0.002}" 'BEGIN { printf "%d", 1 / dt + 0.5 }')
    cmp=$(timeout 300 "$bin" compare "$f" --device cpu --steps "$steps" --ctrl-noise 0 --threads 1 2>&1 | tail -n 1 |
          python3 -c 'import json,sys; d=json.loads(sys.stdin.read()); z=lambda x: "-" if x is None else "%.3f" % x; print("%s / %s, %.3g" % (z(d["final_base_z_sapsim"]), z(d["final_base_z_mujoco"]), d["max_joint_diff"]))' 2>/dev/null)
    echo "| $s | runs: $flags | ${cmp:-compare failed} |"
  else
    msg=$(echo "$out" | grep -m1 -i 'sapsim\|error\|not supported' | sed "s|$dir/||g; s/|/\\\\|/g" | cut -c1-220)
    echo "| $s | refused (exit $rc): $msg | |"
  fi
done
