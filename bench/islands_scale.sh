#!/bin/bash
# Island scaling bench (docs/performance.md): bench/many_objects.py N for N = 10 .. 1000, one
# world, one thread, sapsim and MuJoCo 4 in the same run; one JSON line per N appended to OUT.
# usage: bench/islands_scale.sh SAPSIM_BINARY LABEL MAXN OUT
BIN=$1; LABEL=$2; MAXN=$3; OUT=$4
dir=$(cd "$(dirname "$0")" && pwd)
for N in 10 20 50 100 200 500 680 1000; do
  [ "$N" -gt "$MAXN" ] && continue
  python3 "$dir/many_objects.py" $N > /tmp/many_$N.xml
  steps=50; [ $N -ge 200 ] && steps=20; [ "$LABEL" = before ] && [ $N -ge 100 ] && steps=5
  "$BIN" bench /tmp/many_$N.xml --device cpu --worlds 1 --threads 1 --steps $steps --no-progress \
    --json /tmp/many_raw_$LABEL.jsonl > /dev/null 2>&1 || { echo "N = $N: refused or failed" >&2; continue; }
  tail -1 /tmp/many_raw_$LABEL.jsonl | python3 -c "import json,sys; d=json.load(sys.stdin); print(json.dumps({'label':'$LABEL','N':$N,'ns':d['ns_per_world_step'],'solve':d['stage_ns_per_world_step']['solve'],'free':d['stage_ns_per_world_step']['free_motion'],'mj_sps':d.get('mujoco_steps_per_s'),'bytes':d['bytes_per_world'],'shared':d.get('bytes_shared'),'newton':d['newton_mean'],'collision':d['stage_ns_per_world_step']['collision'],'mj_newton':d.get('mujoco_newton_mean')}))" >> "$OUT"
done
