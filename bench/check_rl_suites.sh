#!/usr/bin/env bash
# The RL benchmark suites' models in sapsim: every MJCF of Gymnasium's MuJoCo environments and
# of the dm_control suite (their release wheels, fetched with pip into WORKDIR) is loaded and
# stepped (CPU, 2 worlds, 200 steps, random controls), then compared with MuJoCo 4 on the same
# file (`sapsim compare`, 1 world, 200 steps, controls at 0.3 of their range): the largest
# hinge/slide difference over the run, beside MuJoCo against itself with the other friction
# cone (the spread of two valid MuJoCo settings), and the final base heights.
# Prints one markdown row per file and a count.
# Usage: bench/check_rl_suites.sh [WORKDIR] [SAPSIM_BINARY] [SAPSIM OPTIONS...]
#   WORKDIR: build/rl_suites; options go to both run and compare, e.g. --preset drake or
#   --set integration=sap_euler
set -uo pipefail
work=$(realpath -m "${1:-build/rl_suites}")
bin=$(realpath "${2:-build/sapsim}")
shift $(( $# < 2 ? $# : 2 ))
extra=("$@")
pip=build/pyenv/bin/pip
[ -x "$pip" ] || pip="python3 -m pip"
mkdir -p "$work"
if [ ! -d "$work/gymnasium" ] || [ ! -d "$work/dm_control" ]; then
  $pip download --quiet --no-deps --dest "$work" gymnasium==1.4.0 dm_control==1.0.50 || exit 2
  (cd "$work" && for w in gymnasium-*.whl dm_control-*.whl; do python3 -m zipfile -e "$w" .; done) || exit 2
fi
files=$(ls "$work"/gymnasium/envs/mujoco/assets/*.xml "$work"/dm_control/suite/*.xml)
ok=0; n=0
echo "| suite / file | sapsim (2 worlds x 200 steps) | max joint diff vs MuJoCo 4 (cones baseline) | base z sapsim / MuJoCo |"
echo "|---|---|---|---|"
for f in $files; do
  n=$((n + 1))
  name=$(echo "$f" | sed "s#$work/##; s#/envs/mujoco/assets##; s#/suite##")
  out=$(timeout 300 "$bin" run "$f" --device cpu --worlds 2 --steps 200 --threads 1 "${extra[@]}" 2>&1)
  if [ $? -ne 0 ]; then
    echo "| $name | refused: $(echo "$out" | grep -m1 'sapsim' | sed "s#^sapsim: $f: ##" | cut -c1-160) | | |"
    continue
  fi
  ok=$((ok + 1))
  tally=$(echo "$out" | grep -m1 '^all .* world-steps:' | sed 's/^all //')
  cmp=$(timeout 300 "$bin" compare "$f" --device cpu --steps 200 --ctrl-noise 0.3 "${extra[@]}" 2>/dev/null | tail -1)
  fig=$(python3 -c '
import json, sys
try:
    j = json.loads(sys.argv[1])
except Exception:
    print("| compare failed |"); sys.exit()
z = lambda v: "-" if v is None else "%.3f" % v
print("%.3g (%.3g) | %s / %s" % (j["max_joint_diff"], j["max_joint_diff_mujoco_cones"],
      z(j["final_base_z_sapsim"]), z(j["final_base_z_mujoco"])))' "$cmp")
  echo "| $name | $tally | $fig |"
done
echo
echo "$ok of $n files load and step"
