#!/usr/bin/env bash
# Checks scripts/prereqs.sh's libclang detection against what bindgen's loader (clang-sys)
# accepts: a directory holding only libclang-cpp.so.14 (clang's C++ library, which Debian ships
# without libclang) has no libclang; one holding libclang.so.1 has. LIBCLANG_PATH points the
# detection at the directory, as it points clang-sys there. Run by scripts/test.sh.
set -euo pipefail
cd "$(dirname "$0")/../.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# The first bytes of a 64-bit ELF shared object: what both loaders look at first.
elf64() { printf '\177ELF\002\001\001\000\000\000\000\000\000\000\000\000\003\000' >"$1"; }
fail=0
check() {
  local what=$1 want=$2 dir=$3 got rc=0 path
  path=$dir${4:+/$4}
  got=$(LIBCLANG_PATH=$dir ./scripts/prereqs.sh --find-libclang 2>/dev/null) || rc=$?
  if [ "$want" = missing ] && [ $rc -ne 0 ]; then
    echo "ok: $what: libclang reported missing"
  elif [ "$want" = found ] && [ $rc -eq 0 ] && [ "$got" = "$path" ]; then
    echo "ok: $what: found $got"
  else
    echo "FAIL: $what: expected $want, got rc=$rc '${got}'" >&2
    fail=1
  fi
}
mkdir "$tmp/cpp-only" "$tmp/soname" "$tmp/versioned" "$tmp/not-elf" "$tmp/elf32"
elf64 "$tmp/cpp-only/libclang-cpp.so.14"
check "only libclang-cpp.so.14" missing "$tmp/cpp-only"
elf64 "$tmp/soname/libclang.so.1"
check "libclang.so.1" found "$tmp/soname" libclang.so.1
elf64 "$tmp/versioned/libclang-cpp.so.14"
elf64 "$tmp/versioned/libclang-14.so.1"
check "libclang-14.so.1 beside libclang-cpp" found "$tmp/versioned" libclang-14.so.1
echo "not a library" >"$tmp/not-elf/libclang.so"
check "libclang.so that is not ELF" missing "$tmp/not-elf"
printf '\177ELF\001\001\001\000' >"$tmp/elf32/libclang.so"
check "32-bit libclang.so" missing "$tmp/elf32"
check "LIBCLANG_PATH naming the file itself" found "$tmp/soname/libclang.so.1" ""
exit $fail
