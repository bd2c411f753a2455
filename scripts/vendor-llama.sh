#!/usr/bin/env bash
# Re-creates vendor/llama-cpp-sys-2 (the llama-cpp-sys-2 crate bmoe builds against, used through
# [patch.crates-io] in Cargo.toml) from the crates.io crate of the same version plus the patches
# in patches/llama-cpp-sys-2/, applied in name order. Run it after changing a patch or the
# version; `--check` re-creates it in a scratch folder and compares it with the committed tree.
# The crate comes from cargo's registry cache, fetched through a scratch cargo project if absent.
set -euo pipefail
cd "$(dirname "$0")/.."
version=0.1.161
dest=vendor/llama-cpp-sys-2
check=0
[ "${1:-}" = --check ] && check=1
registry="${CARGO_HOME:-$HOME/.cargo}/registry/src"
cleanup=()
trap 'rm -rf "${cleanup[@]}"' EXIT
find_src() { ls -d "$registry"/*/llama-cpp-sys-2-$version 2>/dev/null | head -n 1 || true; }
src=$(find_src)
if [ -z "$src" ]; then
  echo "vendor-llama: fetching llama-cpp-sys-2 $version from crates.io" >&2
  scratch=$(mktemp -d)
  cleanup+=("$scratch")
  mkdir -p "$scratch/src" && : > "$scratch/src/lib.rs"
  printf '[package]\nname = "fetch"\nversion = "0.0.0"\nedition = "2021"\n[dependencies]\nllama-cpp-sys-2 = "=%s"\n' \
    "$version" > "$scratch/Cargo.toml"
  (cd "$scratch" && cargo fetch -q)
  src=$(find_src)
  [ -n "$src" ] || { echo "vendor-llama: llama-cpp-sys-2 $version is not in $registry after the fetch" >&2; exit 1; }
fi
out=$dest
if [ $check = 1 ]; then
  tmp=$(mktemp -d)
  cleanup+=("$tmp")
  out=$tmp/llama-cpp-sys-2
fi
rm -rf "$out"
mkdir -p "$(dirname "$out")"
cp -r "$src" "$out"
rm -f "$out/.cargo-ok"
for p in patches/llama-cpp-sys-2/*.patch; do
  patch -s -p1 -d "$out" < "$p"
done
if [ $check = 1 ]; then
  if diff -r "$out" "$dest" > /dev/null; then
    echo "vendor-llama: $dest is llama-cpp-sys-2 $version plus $(ls patches/llama-cpp-sys-2/*.patch | wc -l) patch(es)"
  else
    echo "vendor-llama: $dest differs from llama-cpp-sys-2 $version plus its patches (diff -r $out $dest)" >&2
    exit 1
  fi
else
  echo "vendor-llama: $dest re-created from llama-cpp-sys-2 $version plus patches/llama-cpp-sys-2/"
fi
