#!/usr/bin/env bash
# Runs every test binary in DIR (optionally only those whose name contains FILTER)
# and prints the totals as "N passed, N failed, N skipped".
dir=${1:-build/tests}; filter=${2:-}
pass=0; fail=0; skip=0; broken=()
cd "$(dirname "$0")/.." || exit 1
for t in "$dir"/test_*; do
  [ -x "$t" ] || continue
  case "$(basename "$t")" in *"$filter"*) ;; *) continue ;; esac
  out=$("$t" 2> >(sed 's/^/    /' >&2)); rc=$?
  echo "$out"
  line=$(echo "$out" | grep -E '[0-9]+ passed, [0-9]+ failed' | tail -n 1)
  if [ -z "$line" ]; then broken+=("$(basename "$t") (rc=$rc, no summary)"); fail=$((fail+1)); continue; fi
  p=$(echo "$line" | sed -E 's/.* ([0-9]+) passed.*/\1/'); f=$(echo "$line" | sed -E 's/.* ([0-9]+) failed.*/\1/')
  s=$(echo "$line" | sed -nE 's/.* ([0-9]+) skipped.*/\1/p'); s=${s:-0}
  pass=$((pass+p)); fail=$((fail+f)); skip=$((skip+s))
  [ $rc -ne 0 ] && [ "$f" -eq 0 ] && { broken+=("$(basename "$t") (rc=$rc)"); fail=$((fail+1)); }
done
for b in "${broken[@]}"; do echo "broken: $b"; done
echo "$pass passed, $fail failed, $skip skipped"
[ $fail -eq 0 ] && [ $((pass+skip)) -gt 0 ]
