#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Build the many-core scaling kit (bench/kit/README.md): clove's benchmarks
# in Release with their OpenMP and oneTBB peers (and the Rayon companion when
# cargo and Debian's rayon crate are there), gathered with the shared
# libraries they need into a folder that runs on another x86-64 Linux
# machine with only the C and C++ runtime:
#   DIR/bin/       tree_sum fib uts nqueens loops sort [clove-rayon-bench]
#   DIR/lib/       libgomp, libtbb, ...: everything but the C/C++ runtime
#   DIR/run.sh     the sweep (DIR/run.sh --help); plot.sh, plot.py
#   DIR/kit.conf   what was built: peers, versions, commit
#   DIR/README.md  how to run it
# The binaries find DIR/lib through their RPATH $ORIGIN/../lib (set by CMake
# at link time; clove itself is linked in statically). Last, every binary and
# library in DIR is checked with ldd: each must resolve to the C/C++ runtime
# or to a file inside DIR, else this script fails and says which.
# The build folder is build-scale/ in the checkout (CLOVE_SCALE_BUILD
# overrides it); DIR's bin/ and lib/ are replaced, results/ is kept.
# oneTBB is installed with scripts/deps.sh tbb when apt-get is there and
# libtbb-dev is not (CLOVE_SCALE_NO_DEPS=1: never); cargo is never installed.
# Usage: scripts/scale.sh DIR [--quick-size]
#   --quick-size  a kit for checks: no Rayon companion (its cargo build is
#                 the slow part) and DIR/run.sh without a mode runs --smoke
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
dir="" quick_size=0
for a in "$@"; do
  case "$a" in
    --quick-size) quick_size=1 ;;
    -h|--help) sed -n '3,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) echo "scale.sh: unknown option $a (usage: scripts/scale.sh DIR [--quick-size])" >&2; exit 2 ;;
    *) [ -z "$dir" ] || { echo "scale.sh: one DIR only" >&2; exit 2; }; dir=$a ;;
  esac
done
[ -n "$dir" ] || { echo "usage: scripts/scale.sh DIR [--quick-size]" >&2; exit 2; }
start=$SECONDS
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
case "$top/" in
  "$dir"/*) echo "scale.sh: DIR must not be the checkout or a folder above it" >&2; exit 2 ;;
esac
build=${CLOVE_SCALE_BUILD:-$top/build-scale}
case "$build" in /*) ;; *) build=$PWD/$build ;; esac
jobs=$(nproc 2>/dev/null || echo 2)

# The C and C++ runtime a bare machine is assumed to have; everything else
# the binaries load goes into DIR/lib.
runtime_re='^(linux-vdso|linux-gate|ld-linux[^/]*|libc|libm|libpthread|libdl|librt|libstdc[+][+]|libgcc_s)[.]so'

if [ "${CLOVE_SCALE_NO_DEPS:-0}" != 1 ] && command -v apt-get >/dev/null 2>&1 &&
   command -v dpkg >/dev/null 2>&1 && ! dpkg -s libtbb-dev >/dev/null 2>&1; then
  "$top/scripts/deps.sh" tbb ||
    echo "scale.sh: note: could not install libtbb-dev; the oneTBB peer is left out"
fi

echo "scale.sh: configuring $build (Release, clove static, RPATH \$ORIGIN/../lib)"
mkdir -p "$build"
# The install RPATH, used at build time too and nothing else: no build-tree
# or link-path entries that would point outside the kit. --disable-new-dtags
# writes DT_RPATH, which (unlike DT_RUNPATH) also serves the libraries'
# own dependencies and is not overridden by LD_LIBRARY_PATH.
# shellcheck disable=SC2016 # $ORIGIN is for the dynamic linker
if ! cmake -S "$top" -B "$build" -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF \
     -DCLOVE_BUILD_BENCH=ON -DCLOVE_BUILD_TESTS=OFF -DCLOVE_BUILD_EXAMPLES=OFF \
     -DCLOVE_INSTALL=OFF -DCMAKE_BUILD_WITH_INSTALL_RPATH=ON \
     '-DCMAKE_INSTALL_RPATH=$ORIGIN/../lib' -DCMAKE_INSTALL_RPATH_USE_LINK_PATH=OFF \
     -DCMAKE_EXE_LINKER_FLAGS=-Wl,--disable-new-dtags >"$build/scale-configure.log" 2>&1; then
  cat "$build/scale-configure.log" >&2
  echo "scale.sh: cmake configure failed" >&2
  exit 1
fi
grep 'clove bench: peer' "$build/scale-configure.log" | sed 's/^-- /scale.sh: /' || true
benches=(tree_sum fib uts nqueens loops sort)
echo "scale.sh: building ${benches[*]} (-j $jobs)"
cmake --build "$build" -j "$jobs" --target "${benches[@]}" >"$build/scale-build.log" 2>&1 || {
  tail -n 40 "$build/scale-build.log" >&2
  echo "scale.sh: build failed (whole log: $build/scale-build.log)" >&2
  exit 1
}

# The Rayon companion (scripts/rayon.sh), as scripts/bench.sh builds it.
. "$top/scripts/rayon.sh"
rayon_bin="" rayon_note=""
if ((quick_size)); then
  rayon_note="left out (--quick-size)"
elif ! rayon_build "$build/bench-rayon" "scale.sh"; then
  rayon_note=$rayon_why
fi
[ -z "$rayon_note" ] || echo "scale.sh: note: Rayon companion not built: $rayon_note"

echo "scale.sh: assembling $dir"
rm -rf "${dir:?}/bin" "${dir:?}/lib"
mkdir -p "$dir/bin" "$dir/lib"
for b in "${benches[@]}"; do
  cp "$build/bench/$b" "$dir/bin/$b"
done
[ -z "$rayon_bin" ] || cp "$rayon_bin" "$dir/bin/clove-rayon-bench"
for f in run.sh plot.sh plot.py README.md; do
  cp "$top/bench/kit/$f" "$dir/$f"
done
chmod +x "$dir/run.sh" "$dir/plot.sh"

# ldd_deps FILE: "NAME PATH" for each library FILE loads by name.
ldd_deps() {
  env -u LD_LIBRARY_PATH -u LD_PRELOAD ldd "$1" 2>/dev/null |
    awk '$2 == "=>" && $3 ~ /^\// { print $1, $3 }'
}
# Copy every non-runtime library the binaries (and those libraries) load
# into DIR/lib under the name they ask for, until nothing new turns up.
changed=1
while ((changed)); do
  changed=0
  for f in "$dir"/bin/* "$dir"/lib/*; do
    [ -f "$f" ] || continue
    while read -r name path; do
      [[ $name =~ $runtime_re ]] && continue
      [ -e "$dir/lib/$name" ] && continue
      cp -L "$path" "$dir/lib/$name"
      chmod u+w "$dir/lib/$name"
      echo "scale.sh: lib/$name <- $path"
      changed=1
    done < <(ldd_deps "$f")
  done
done
# A copied library with dependencies of its own outside the runtime must
# find them next to it: RPATH $ORIGIN. Only patchelf can add that to a
# library built elsewhere; without it, the check below says so.
if command -v patchelf >/dev/null 2>&1; then
  for f in "$dir"/lib/*; do
    [ -f "$f" ] || continue
    if ldd_deps "$f" | awk -v re="$runtime_re" '$1 !~ re { found = 1 } END { exit !found }'; then
      # shellcheck disable=SC2016
      patchelf --set-rpath '$ORIGIN' "$f"
    fi
  done
fi

# What was built, for run.sh and for the results' machine.txt.
peers=""
grep -q 'clove bench: peer omp .* built' "$build/scale-configure.log" && peers="omp"
grep -q 'clove bench: peer tbb .* built' "$build/scale-configure.log" && peers="${peers:+$peers }tbb"
uts_loop=0
if "$dir/bin/uts" --help 2>&1 | grep -q -- '--shape' ||
   "$dir/bin/uts" --shape loop --quick -n 1 -t 1 >/dev/null 2>&1; then
  uts_loop=1
fi
commit=$(git -C "$top" rev-parse --short HEAD 2>/dev/null || echo unknown)
if [ "$commit" != unknown ] && ! git -C "$top" diff --quiet HEAD -- 2>/dev/null; then
  commit="$commit+changes"
fi
version=$(awk '/^#define CLOVE_VERSION_(MAJOR|MINOR|PATCH) / { v = v (v ? "." : "") $3 } END { print v }' \
  "$top/include/clove.h")
tbb_v=$(sed -n 's/.*peer tbb (oneTBB \(.*\)) built.*/\1/p' "$build/scale-configure.log")
omp_v=$(sed -n 's/.*peer omp (OpenMP \(.*\)) built.*/\1/p' "$build/scale-configure.log")
cc_v=$(sed -n 's/^CMAKE_C_COMPILER:[A-Z]*=//p' "$build/CMakeCache.txt")
cc_v=$("${cc_v:-cc}" --version 2>/dev/null | head -n 1)
glibc_v=$(getconf GNU_LIBC_VERSION 2>/dev/null || echo unknown)
kv() { printf "%s='%s'\n" "$1" "${2//\'/}"; }
{
  echo "# SPDX-License-Identifier: MIT"
  echo "# Written by scripts/scale.sh: what this kit holds; read by run.sh."
  kv clove_version "$version"
  kv clove_commit "$commit"
  kv built_with "$cc_v, $glibc_v"
  kv peers "$peers"
  kv omp_version "${omp_v:+OpenMP $omp_v (libgomp)}"
  kv tbb_version "${tbb_v:+oneTBB $tbb_v}"
  if [ -n "$rayon_bin" ]; then
    kv rayon 1
    crate=$(compgen -G "/usr/share/cargo/registry/rayon-[0-9]*" | head -n 1)
    kv rayon_version "${crate##*/} (Debian librust-rayon-dev), $rayon_rustc"
  else
    kv rayon 0
    kv rayon_version "not built: $rayon_note"
  fi
  kv uts_loop "$uts_loop"
  kv default_mode "$( ((quick_size)) && echo smoke || echo full)"
} >"$dir/kit.conf"

# The check: everything in DIR resolves to the runtime or to DIR itself.
bad=0
for f in "$dir"/bin/* "$dir"/lib/*; do
  [ -f "$f" ] || continue
  out=$(env -u LD_LIBRARY_PATH -u LD_PRELOAD ldd "$f" 2>&1) || {
    echo "scale.sh: ldd $f failed: $out" >&2
    bad=1
    continue
  }
  while read -r line; do
    problem=$(awk -v re="$runtime_re" -v dir="$dir/" '
      /not found/ { print "not found: " $1; exit }
      $2 == "=>" && $3 ~ /^\// {
        if ($1 ~ re || index($3, dir) == 1) exit
        print $1 " resolves to " $3 " (outside the kit)"; exit }
      $1 ~ /^\// && $1 !~ /ld-linux/ && index($1, dir) != 1 { print $1 " is outside the kit" }
    ' <<<"$line")
    if [ -n "$problem" ]; then
      echo "scale.sh: ${f#"$dir"/}: $problem" >&2
      bad=1
    fi
  done <<<"$out"
done
if ((bad)); then
  echo "scale.sh: FAILED: the kit in $dir needs libraries outside it (above)." >&2
  echo "  Binaries must carry RPATH \$ORIGIN/../lib; a copied library with dependencies" >&2
  echo "  beyond the C/C++ runtime needs RPATH \$ORIGIN, which needs patchelf." >&2
  exit 1
fi
echo "scale.sh: ldd check passed: every binary and library resolves to the C/C++ runtime or to $dir"
echo "scale.sh: bin: $(cd "$dir/bin" && echo *)"
echo "scale.sh: lib: $(cd "$dir/lib" && echo *)"
echo "scale.sh: peers: ${peers:-none}; Rayon: $([ -n "$rayon_bin" ] && echo built || echo "not built ($rayon_note)")"
echo "scale.sh: kit ready in $dir ($(du -sh "$dir" | cut -f1), $((SECONDS - start)) s); copy it and run $(basename "$dir")/run.sh"
