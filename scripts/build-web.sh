#!/usr/bin/env bash
# Builds the page's wasm and its JS glue into Trunk's staging directory (Trunk's post_build hook,
# see Trunk.toml). index.html loads ./main.js.
#
# Why not Trunk's own Rust pipeline: the release page is split. wasm-split cuts Kafka's and
# Pulsar's code (the split points in src/ui/parts.rs) out of the first download into chunks
# fetched on demand, and that step runs between `cargo build` and `wasm-bindgen`, where Trunk 0.21
# has no hook. Debug builds (`trunk serve`) skip the split: one wasm, built fast.
#
# The files go into a directory named by their content hash (app-<hash>/), and index.html is
# pointed at it: a redeployed site never pairs a cached glue file or chunk with a new wasm (the
# glue must match its wasm exactly). Chunks are fetched relative to __wasm_split.js, so they
# follow.
#
# Outside Trunk: TRUNK_STAGING_DIR=out TRUNK_PROFILE=release bash scripts/build-web.sh
set -euo pipefail
cd "${TRUNK_SOURCE_DIR:-$(dirname "$0")/..}"
out="${TRUNK_STAGING_DIR:?run by trunk (or set TRUNK_STAGING_DIR)}"
profile="${TRUNK_PROFILE:-debug}"
target_dir="$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')"
tmp="$target_dir/web-split"
rm -rf "$tmp" && mkdir -p "$tmp"

# .cargo/config.toml's flags for wasm32 are replaced by RUSTFLAGS, so they are restated here.
flags="-C target-feature=+simd128 --cfg erase_components"

# Moves the built files from $tmp/app into $out/app-<hash>/ and points index.html there.
publish() {
  local hash
  hash="$(cat "$tmp/app"/* | sha256sum | cut -c1-16)"
  mkdir -p "$out/app-$hash"
  mv "$tmp/app"/* "$out/app-$hash/"
  sed -i "s|\./main\.js|./app-$hash/main.js|; s|\./main_bg\.wasm|./app-$hash/main_bg.wasm|" "$out/index.html"
}
mkdir -p "$tmp/app"

if [ "$profile" != release ]; then
  RUSTFLAGS="$flags" cargo build --target wasm32-unknown-unknown --bin mqviz-web
  wasm-bindgen "$target_dir/wasm32-unknown-unknown/debug/mqviz-web.wasm" --out-dir "$tmp/app" --out-name main \
    --target web --no-typescript
  publish
  exit 0
fi

# --emit-relocs: wasm-split needs the relocations to move functions between modules.
RUSTFLAGS="$flags --cfg mqviz_split -C link-args=--emit-relocs" \
  cargo build --profile web --target wasm32-unknown-unknown --bin mqviz-web
wasm-split-cli --target web "$target_dir/wasm32-unknown-unknown/web/mqviz-web.wasm" "$tmp/split"
# The chunks import the main module's functions by their lld export names: keep them.
wasm-bindgen "$tmp/split/main.wasm" --out-dir "$tmp/bindgen" --target web --no-typescript --keep-lld-exports
cp "$tmp/split/__wasm_split.js" "$tmp/bindgen/"
for w in "$tmp/split"/*.wasm; do
  [ "$(basename "$w")" = main.wasm ] || cp "$w" "$tmp/bindgen/"
done
# The features rustc used (simd128 and its defaults); binaryen must accept them to optimise.
features="--enable-simd --enable-bulk-memory --enable-nontrapping-float-to-int --enable-sign-ext \
  --enable-mutable-globals --enable-reference-types --enable-multivalue"
for w in "$tmp/bindgen"/*.wasm; do
  # shellcheck disable=SC2086
  wasm-opt -Oz $features "$w" -o "$tmp/app/$(basename "$w")" 2>&1 | { grep -v "unknown name subsection" || true; }
done
cp "$tmp/bindgen"/*.js "$tmp/app/"
publish
