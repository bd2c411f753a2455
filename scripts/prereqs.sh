#!/usr/bin/env bash
# Installs what building bmoe needs beyond the Rust toolchain: cmake and libclang
# (llama-cpp-sys-2 builds ggml/llama.cpp with cmake and generates its bindings
# with bindgen, which loads libclang). Uses apt-get when run as root on Debian or
# Ubuntu; otherwise says exactly which packages to install. Sourced or run by
# scripts/demo.sh and scripts/test.sh; idempotent and quiet when all is present.
set -euo pipefail

have_libclang() {
  local pat
  for pat in "${LIBCLANG_PATH:-/nonexistent}"/libclang*.so* /usr/lib/llvm-*/lib/libclang.so* \
             /usr/lib/*/libclang*.so* /usr/lib/libclang*.so* /usr/local/lib/libclang*.so*; do
    [ -e "$pat" ] && return 0
  done
  return 1
}

missing=()
command -v cmake >/dev/null 2>&1 || missing+=(cmake)
have_libclang || missing+=(libclang-dev)
command -v c++ >/dev/null 2>&1 || missing+=(g++)

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "prereqs: installing ${missing[*]} with apt-get" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
  echo "prereqs: installed ${missing[*]}" >&2
else
  echo "prereqs: missing ${missing[*]}." >&2
  echo "prereqs: install them first, e.g.: sudo apt-get install ${missing[*]}" >&2
  echo "prereqs: (Fedora: cmake clang-devel gcc-c++; macOS: brew install cmake llvm)" >&2
  exit 1
fi
