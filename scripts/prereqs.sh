#!/usr/bin/env bash
# Installs what building bmoe needs beyond the Rust toolchain: cmake and libclang
# (llama-cpp-sys-2 builds ggml/llama.cpp with cmake and generates its bindings
# with bindgen, which loads libclang at run time through clang-sys). Uses apt-get when
# run as root on Debian or Ubuntu; otherwise says exactly which packages to install.
# Run by scripts/demo.sh and scripts/test.sh; idempotent and quiet when all is present.
#
#   scripts/prereqs.sh                     check, install what is missing
#   scripts/prereqs.sh --test              also what scripts/test.sh needs: curl, python3-venv,
#                                          and (optional) the cross compilers and emulators
#                                          scripts/cross-run.sh runs aarch64 and Windows with
#   scripts/prereqs.sh --find-libclang     print the libclang bindgen would load, exit 1 if none
#
# libclang is found the way clang-sys (bindgen's loader) finds it: when LIBCLANG_PATH is set,
# only there (a directory, or the file itself); otherwise in `llvm-config --prefix`'s bin/lib/
# lib64, the LD_LIBRARY_PATH directories and /usr/lib*, /usr/lib*/*, /usr/lib*/*/*,
# /usr/local/lib*, /usr/local/lib*/*, /usr/local/lib*/*/*, /usr/local/llvm*/lib*. The names are
# libclang.so, libclang-*.so, libclang.so.*, libclang-*.so.*, never a name with `-cpp.` in it
# (libclang-cpp is clang's C++ library, which bindgen cannot use; Debian ships it without
# libclang itself), and the file must be an ELF shared object of this machine's word size.
set -euo pipefail

# Prints the first libclang clang-sys would accept in directory $1 (nothing if none).
libclang_in_dir() {
  local dir=$1 f name
  [ -d "$dir" ] || return 0
  for f in "$dir"/libclang.so "$dir"/libclang-*.so "$dir"/libclang.so.* "$dir"/libclang-*.so.*; do
    [ -e "$f" ] || continue
    name=${f##*/}
    case "$name" in *-cpp.*) continue ;; esac
    valid_elf "$f" && { echo "$f"; return 0; }
  done
  return 0
}

# True when $1 starts with the ELF magic and its class matches this machine (64-bit: 2).
valid_elf() {
  local head want=2
  head=$(od -An -tx1 -N5 "$1" 2>/dev/null | tr -d ' \n') || return 1
  [ "$(getconf LONG_BIT 2>/dev/null || echo 64)" = 32 ] && want=1
  [ "$head" = "7f454c460$want" ]
}

find_libclang() {
  local d found prefix
  if [ -n "${LIBCLANG_PATH:-}" ]; then
    # clang-sys looks only here when the variable is set: a file or a directory.
    if [ -f "$LIBCLANG_PATH" ]; then
      case "${LIBCLANG_PATH##*/}" in
        *-cpp.*) ;;
        libclang.so | libclang-*.so | libclang.so.* | libclang-*.so.*)
          valid_elf "$LIBCLANG_PATH" && { echo "$LIBCLANG_PATH"; return 0; } ;;
      esac
      return 1
    fi
    found=$(libclang_in_dir "$LIBCLANG_PATH")
    [ -n "$found" ] && { echo "$found"; return 0; }
    return 1
  fi
  if prefix=$(llvm-config --prefix 2>/dev/null); then
    for d in "$prefix/bin" "$prefix/lib" "$prefix/lib64"; do
      found=$(libclang_in_dir "$d")
      [ -n "$found" ] && { echo "$found"; return 0; }
    done
  fi
  local IFS=:
  for d in ${LD_LIBRARY_PATH:-}; do
    found=$(libclang_in_dir "$d")
    [ -n "$found" ] && { echo "$found"; return 0; }
  done
  unset IFS
  shopt -s nullglob
  for d in /usr/lib* /usr/lib*/* /usr/lib*/*/* /usr/local/lib* /usr/local/lib*/* \
           /usr/local/lib*/*/* /usr/local/llvm*/lib*; do
    found=$(libclang_in_dir "$d")
    [ -n "$found" ] && { shopt -u nullglob; echo "$found"; return 0; }
  done
  shopt -u nullglob
  return 1
}

if [ "${1:-}" = "--find-libclang" ]; then
  if find_libclang; then exit 0; fi
  echo "prereqs: no libclang that bindgen can load (libclang-cpp does not count)" >&2
  exit 1
fi

missing=()
command -v cmake >/dev/null 2>&1 || missing+=(cmake)
find_libclang >/dev/null || missing+=(libclang-dev)
command -v c++ >/dev/null 2>&1 || missing+=(g++)
# `--test` (scripts/test.sh): also what the server's test drives it with (a Python virtual
# environment for the openai client, and curl), and what scripts/cross-run.sh runs the other
# platforms with: the aarch64 cross compilers and qemu-user, mingw-w64 (its POSIX-threads
# variant, which has C++ threads) and wine64. Those are optional: where they cannot be
# installed here (not root, no apt-get) cross-run.sh says on one line that it skipped and why.
optional=()
if [ "${1:-}" = "--test" ]; then
  command -v curl >/dev/null 2>&1 || missing+=(curl)
  python3 -c 'import venv, ensurepip' >/dev/null 2>&1 || missing+=(python3-venv)
  command -v aarch64-linux-gnu-gcc >/dev/null 2>&1 || optional+=(gcc-aarch64-linux-gnu)
  command -v aarch64-linux-gnu-g++ >/dev/null 2>&1 || optional+=(g++-aarch64-linux-gnu)
  command -v qemu-aarch64 >/dev/null 2>&1 || optional+=(qemu-user)
  command -v x86_64-w64-mingw32-gcc-posix >/dev/null 2>&1 || optional+=(gcc-mingw-w64-x86-64-posix)
  command -v wine64 >/dev/null 2>&1 || [ -x /usr/lib/wine/wine64 ] || optional+=(wine64)
fi

can_apt=0
[ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1 && can_apt=1
[ $can_apt -eq 1 ] && missing+=("${optional[@]}")

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

if [ $can_apt -eq 1 ]; then
  echo "prereqs: installing ${missing[*]} with apt-get" >&2
  export DEBIAN_FRONTEND=noninteractive
  log=$(mktemp "${TMPDIR:-/tmp}/bmoe-prereqs.XXXXXX")
  start=$(date +%s)
  if ! { apt-get update -qq && apt-get install -y -qq --no-install-recommends "${missing[@]}"; } >"$log" 2>&1; then
    cat "$log" >&2
    echo "prereqs: apt-get failed (its output above)" >&2
    exit 1
  fi
  rm -f "$log"
  if ! find_libclang >/dev/null; then
    echo "prereqs: libclang-dev installed but no libclang.so found; set LIBCLANG_PATH" >&2
    exit 1
  fi
  echo "prereqs: installed ${missing[*]} in $(( $(date +%s) - start )) s" >&2
else
  echo "prereqs: missing ${missing[*]}." >&2
  echo "prereqs: install them first, e.g.: sudo apt-get install ${missing[*]}" >&2
  echo "prereqs: (Fedora: cmake clang-devel gcc-c++; macOS: brew install cmake llvm)" >&2
  exit 1
fi
