#!/bin/bash
# Issue 16's side-by-side table: sapsim's CPU backend and MuJoCo 4 (C, same threads, same
# random controls, one bench run each) on the humanoid, the ant, box_stack, the cube pile and
# N = 200 separate objects (bench/many_objects.py), at 1 thread and at all threads; one JSON
# line per scene and thread count appended to OUT, then a markdown table on stdout (with
# MuJoCo's own Newton iterations and line-search evaluations per world-step of the same run).
# usage: bench/side_by_side.sh SAPSIM_BINARY OUT [RUNS [SCENES [SET]]]
#   RUNS: repeats, the table shows medians; SCENES: a blank-separated subset of humanoid ant
#   box_stack box_pile many (default all); SET: sapsim options for every run, e.g.
#   "contact_band=speed" (blank-separated key=value words; the scene's label shows them)
BIN=$1; OUT=$2; RUNS=${3:-1}; ONLY=${4:-humanoid ant box_stack box_pile many}; SET=${5:-}
sets=(); for kv in $SET; do sets+=(--set "$kv"); done
dir=$(cd "$(dirname "$0")" && pwd); root=$(dirname "$dir")
python3 "$dir/many_objects.py" 200 > /tmp/sbs_many_200.xml
nt=$(nproc)
for r in $(seq "$RUNS"); do
  for sc in "$root/scenes/humanoid.xml:64" "$root/scenes/ant.xml:64" "$root/scenes/box_stack.xml:64" \
            "$root/scenes/box_pile.xml:16" "/tmp/sbs_many_200.xml:2"; do
    f=${sc%%:*}; w=${sc##*:}; name=$(basename "$f" .xml)
    key=$name; [ "$name" = sbs_many_200 ] && key=many
    case " $ONLY " in *" $key "*) ;; *) continue ;; esac
    label=$name${SET:+ [$SET]}
    for t in 1 "$nt"; do
      "$BIN" bench "$f" --device cpu --worlds "$w" --threads "$t" --steps 200 --no-progress "${sets[@]}" \
        --json /tmp/sbs_raw.jsonl > /dev/null 2>&1 || { echo "bench failed: $f" >&2; continue; }
      tail -1 /tmp/sbs_raw.jsonl | python3 -c "
import json, sys
d = json.load(sys.stdin)
print(json.dumps({'scene': '$label', 'threads': $t, 'worlds': $w, 'sps': d['steps_per_s'],
  'mj_sps': d.get('mujoco_steps_per_s'), 'ratio': d.get('ratio_vs_mujoco'), 'stage_ns': d['stage_ns_per_world_step'],
  'newton': [d['newton_mean'], d['newton_p95']], 'ls': [d['ls_eval_mean'], d['ls_eval_p95']],
  'mj_newton': [d.get('mujoco_newton_mean'), d.get('mujoco_newton_p95')],
  'mj_ls': [d.get('mujoco_ls_eval_mean'), d.get('mujoco_ls_eval_p95')]}))" >> "$OUT"
    done
  done
done
python3 - "$OUT" <<'PY'
import json, sys, statistics as st
rows = {}
for line in open(sys.argv[1]):
    d = json.loads(line); rows.setdefault((d['scene'], d['threads']), []).append(d)
print('| scene | threads | worlds | sapsim world-steps/s | MuJoCo 4 steps/s | ratio | ns per world-step: kinematics / collision / free motion / solve / integrate | Newton mean / p95 | LS evaluations mean / p95 | MuJoCo Newton mean / p95 | MuJoCo LS evaluations mean / p95 |')
print('|---|---|---|---|---|---|---|---|---|---|---|')
def pair(v):  # mean / p95, or '-' for lines written before MuJoCo's counts were recorded
    return '-' if not v or v[0] is None else '%.2f / %d' % (v[0], v[1])
for (sc, t), ds in rows.items():
    med = lambda k: st.median(x[k] for x in ds)
    d = ds[0]; s = d['stage_ns']
    stages = ' / '.join('%.0f' % st.median(x['stage_ns'][k] for x in ds) for k in ('kinematics', 'collision', 'free_motion', 'solve', 'integrate'))
    print('| %s | %d | %d | %.0f | %.0f | %.3f | %s | %.2f / %d | %.2f / %d | %s | %s |' % (sc, t, d['worlds'], med('sps'), med('mj_sps'), med('ratio'), stages,
          d['newton'][0], d['newton'][1], d['ls'][0], d['ls'][1], pair(d.get('mj_newton')), pair(d.get('mj_ls'))))
PY
