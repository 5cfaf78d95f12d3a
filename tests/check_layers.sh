#!/usr/bin/env bash
# The layering rule (STYLE.md, "Layers"): tools (host/cli/, bench/, tests/) -> host/ ->
# kernels/ -> include/, arrows only down. Every #include of each layer's files is resolved
# as the compilers do (the including file's folder, then -Iinclude -Ikernels -Ihost) and
# must land in the same layer or a lower one: include/ only include/; kernels/ only
# kernels/ and include/; host/ not host/cli/, bench/ or tests/. Prints each offending line; exit 1.
# Usage: tests/check_layers.sh [BUILD]
cd "$(dirname "$0")/.." || exit 2
rank() {  # layer of a path: include 0, kernels 1, host 2, the tools (host/cli, bench, tests) 3
  case "$1" in include/*) echo 0 ;; kernels/*) echo 1 ;; host/cli/*) echo 3 ;; host/*) echo 2 ;; *) echo 3 ;; esac
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
# and at link level, when the build is there (argument: the build folder): the kernels'
# objects (nvcc's, and the CPU emulation's) call nothing of host/ but sap_fail (host/errors.c)
build=${1:-}
if [ -n "$build" ]; then
  for o in "$build"/kernels/*.o "$build"/emu/kernels/*.o; do
    [ -f "$o" ] || continue
    for sym in $(nm -u "$o" | awk '{print $2}' | grep -E '^sap' | grep -vE '^(sap_fail|sapShim[A-Za-z_]*)$'); do
      echo "check-layers: $o calls $sym, defined above kernels/"
      bad=1
    done
  done
fi
[ $bad = 0 ] && echo "check-layers: include/ <- kernels/ <- host/ <- tools, no include points up${build:+ (and the kernel objects of $build call only sap_fail above them)}"
exit $bad
