#!/usr/bin/env bash
# Loads and steps MuJoCo Playground's locomotion and manipulation scenes with sapsim (CPU,
# 4 worlds, 200 steps) and prints a Markdown table: runs (with the contact / distance sensors
# the scene has), or the exact reason it is refused. Playground's XMLs come from its Python
# package (`pip download playground --no-deps`, unzip the wheel: PLAYGROUND_DIR is the folder
# holding mujoco_playground/); its robots' meshes from a MuJoCo Menagerie checkout, linked as
# PLAYGROUND_DIR/mujoco_menagerie (Playground's own layout, its XMLs' meshdir); a mesh missing
# from that checkout is replaced by a 5 cm tetrahedron, counted per scene.
# Usage: bench/check_playground.sh PLAYGROUND_DIR MENAGERIE_DIR [SAPSIM_BINARY]
set -uo pipefail
dir=${1:?usage: bench/check_playground.sh PLAYGROUND_DIR MENAGERIE_DIR [SAPSIM_BINARY]}
men=${2:?usage: bench/check_playground.sh PLAYGROUND_DIR MENAGERIE_DIR [SAPSIM_BINARY]}
bin=${3:-build/sapsim}
men=$(cd "$men" && pwd)
for l in "$dir/mujoco_menagerie" "$dir/mujoco_playground/mujoco_menagerie" "$dir/mujoco_playground/external_deps/mujoco_menagerie"; do
  mkdir -p "$(dirname "$l")"; [ -e "$l" ] || ln -s "$men" "$l"
done
# a file the loader cannot open (Playground hands its meshes to MuJoCo by name from the robot's
# Menagerie folder): linked where the loader looks, from the Menagerie file of that name
fetch_missing() {  # scene, loader output; 0 when a link was made
  local miss; miss=$(echo "$2" | grep -m1 -o "Error opening file '[^']*'" | sed "s/Error opening file '//; s/'$//")
  [ -n "$miss" ] || return 1
  # where the loader looked: the path as printed (relative to the run's folder, $dir), else
  # beside the scene (an include, or the asset folder of an included file)
  local dest=""
  case "$miss" in /*) dest=$miss ;; */*) [ -e "$dir/$miss" ] || dest="$dir/$miss" ;; esac
  [ -n "$dest" ] || dest="$(dirname "$1")/$miss"
  [ ! -e "$dest" ] || return 1
  local src; src=$(find -L "$men" -name "$(basename "$miss")" -print -quit 2>/dev/null)
  mkdir -p "$(dirname "$dest")"
  [ -n "$src" ] && { ln -s "$src" "$dest"; return 0; }
  # not in this Menagerie checkout: a 5 cm tetrahedron in its place (counted in the table)
  python3 - "$dest" <<'PY' || return 1
import struct, sys
path = sys.argv[1]
v = [(0, 0, 0), (0.05, 0, 0), (0, 0.05, 0), (0, 0, 0.05)]
f = [(0, 2, 1), (0, 1, 3), (0, 3, 2), (1, 2, 3)]
if path.lower().endswith(".obj"):
    open(path, "w").write("".join("v %g %g %g\n" % p for p in v) + "".join("f %d %d %d\n" % (a + 1, b + 1, c + 1) for a, b, c in f))
elif path.lower().endswith(".stl"):
    with open(path, "wb") as o:
        o.write(b"\0" * 80 + struct.pack("<I", 4))
        for t in f:
            o.write(struct.pack("<3f", 0, 0, 0) + b"".join(struct.pack("<3f", *v[k]) for k in t) + b"\0\0")
elif path.lower().endswith(".png"):  # a 1 x 1 grey texture
    import zlib
    chunk = lambda t, d: struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d))
    open(path, "wb").write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0))
                           + chunk(b"IDAT", zlib.compress(b"\0\x80\x80\x80")) + chunk(b"IEND", b""))
else:
    sys.exit(1)
PY
  echo "$dest" >> "$dir/.substituted"
}
[ -f "$dir/.substituted" ] && xargs -r rm -f < "$dir/.substituted"  # the last run's stand-ins
rm -f "$dir/.substituted"
echo "| scene | contact/distance sensors | tetrahedra for meshes missing from Menagerie | result |"
echo "|---|---|---|---|"
find "$dir/mujoco_playground/_src/locomotion" "$dir/mujoco_playground/_src/manipulation" -name '*.xml' |
  grep -E '/scene[^/]*\.xml$|/mjx_scene[^/]*\.xml$' | sort | while read -r f; do
  rel=${f#"$dir/mujoco_playground/_src/"}
  # sensors of the scene and its includes
  inc=$(grep -o 'include file="[^"]*"' "$f" | sed 's/include file="//; s/"$//' | while read -r i; do echo "$(dirname "$f")/$i"; done)
  ns=$(cat "$f" $inc 2>/dev/null | grep -cE '<(contact|distance|normal|fromto|insidesite) ')
  nsub0=$(cat "$dir/.substituted" 2>/dev/null | wc -l)
  for _ in $(seq 400); do
    out=$(cd "$dir" && timeout 300 "$OLDPWD/$bin" run "$f" --device cpu --worlds 4 --steps 200 --threads 1 2>&1); rc=$?
    [ $rc -ne 0 ] && fetch_missing "$f" "$out" || break
  done
  nsub=$(( $(cat "$dir/.substituted" 2>/dev/null | wc -l) - nsub0 ))
  if [ $rc -eq 0 ]; then
    flags=$(echo "$out" | grep -m1 '^all .* world-steps:' | sed 's/^all //')
    echo "| $rel | $ns | $nsub | runs: $flags |"
  else
    msg=$(echo "$out" | grep -m1 -i 'sapsim\|error\|not supported\|refused' | sed "s|$dir/||g; s|$f|SCENE|g; s/|/\\\\|/g" | cut -c1-240)
    echo "| $rel | $ns | $nsub | refused (exit $rc): $msg |"
  fi
done
