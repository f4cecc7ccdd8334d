# SPDX-License-Identifier: MIT
# rayon.sh - sourced by scripts/bench.sh and scripts/scale.sh (bash): the
# Rayon companion (bench/rayon), built offline against Debian's
# librust-rayon-dev (bench/rayon/.cargo/config.toml). cargo is never
# installed here (scripts/deps.sh rayon does that).

# rayon_build TARGET_DIR LABEL: build it into TARGET_DIR (an absolute path),
# LABEL prefixing the one line it prints. Sets rayon_bin to the binary and
# rayon_rustc to the compiler's version and returns 0, or sets rayon_bin=""
# and rayon_why to the reason and returns 1.
rayon_build() {
  local target=$1 label=$2 src
  src=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/bench/rayon
  rayon_bin="" rayon_why="" rayon_rustc=""
  if ! command -v cargo >/dev/null 2>&1; then
    rayon_why="cargo not found; scripts/deps.sh rayon installs it"
  elif ! compgen -G "/usr/share/cargo/registry/rayon-[0-9]*" >/dev/null; then
    rayon_why="Debian's librust-rayon-dev is not installed; scripts/deps.sh rayon"
  else
    rayon_rustc=$(rustc --version 2>/dev/null || echo "rustc ?")
    echo "$label: building bench/rayon with $(cargo --version), $rayon_rustc"
    if (cd "$src" && CLOVE_RUSTC_VERSION="$rayon_rustc" \
        cargo build --release --offline --quiet --target-dir "$target"); then
      rayon_bin=$target/release/clove-rayon-bench
      return 0
    fi
    rayon_why="cargo build --release --offline failed (see above)"
  fi
  return 1
}
