#!/usr/bin/env bash
# Loads every scene file (*/scene*.xml, */*scene*.xml) of a MuJoCo Menagerie checkout and
# steps it (CPU, 2 worlds, 50 steps): prints OK with the flag tally, or the reason sapsim
# refuses it, and a count. Menagerie is not part of this repository: bring a checkout.
# Usage: bench/check_all_scenes.sh MENAGERIE_DIR [SAPSIM_BINARY]
set -uo pipefail
dir=${1:?usage: bench/check_all_scenes.sh MENAGERIE_DIR [SAPSIM_BINARY]}
bin=$(realpath "${2:-build/sapsim}")
cd "$dir" || exit 2
ok=0; n=0
for f in $(ls */scene*.xml */*scene*.xml 2>/dev/null | sort -u); do
  n=$((n + 1))
  out=$(timeout 120 "$bin" run "$f" --device cpu --worlds 2 --steps 50 --threads 1 2>&1)
  if [ $? -eq 0 ]; then
    ok=$((ok + 1))
    echo "OK  $f | $(echo "$out" | grep -m1 '^all .* world-steps:' | sed 's/^all //')"
  else
    echo "ERR $f | $(echo "$out" | grep -m1 -i 'sapsim\|error' | cut -c1-230)"
  fi
done
echo "$ok of $n scenes load and step"
