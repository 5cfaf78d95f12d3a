#!/usr/bin/env bash
# The layering rule (STYLE.md, "Layers"): tools (bench/, host/cli_*, tests/) -> host/ ->
# kernels/ -> include/, arrows only down. Every #include of each layer's files is resolved
# as the compilers do (the including file's folder, then -Iinclude -Ikernels -Ihost) and
# must land in the same layer or a lower one: include/ only include/; kernels/ only
# kernels/ and include/; host/ not bench/ or tests/. Prints each offending line; exit 1.
cd "$(dirname "$0")/.." || exit 2
rank() {  # layer of a path: include 0, kernels 1, host 2, bench and tests 3
  case "$1" in include/*) echo 0 ;; kernels/*) echo 1 ;; host/*) echo 2 ;; *) echo 3 ;; esac
}
bad=0
for f in $(find include kernels host -type f \( -name '*.h' -o -name '*.c' -o -name '*.cu' \) | sort); do
  dir=$(dirname "$f"); r=$(rank "$f")
  while IFS=: read -r line text; do
    name=$(echo "$text" | sed -E 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]([^>"]+)[>"].*/\1/')
    quoted=0; case "$text" in *'"'*) quoted=1 ;; esac
    target=""
    [ $quoted = 1 ] && [ -f "$dir/$name" ] && target=$(realpath --relative-to=. "$dir/$name")
    if [ -z "$target" ]; then
      for d in include kernels host; do [ -f "$d/$name" ] && { target="$d/$name"; break; }; done
    fi
    [ -z "$target" ] && continue  # a system header
    case "$target" in include/*|kernels/*|host/*|bench/*|tests/*) ;; *) target="outside/$target" ;; esac
    if [ "$(rank "$target")" -gt "$r" ]; then
      echo "check-layers: $f:$line includes $target (a higher layer): $text"
      bad=1
    fi
  done < <(grep -nE '^[[:space:]]*#[[:space:]]*include' "$f")
done
[ $bad = 0 ] && echo "check-layers: include/ <- kernels/ <- host/ <- tools, no include points up"
exit $bad
