#!/usr/bin/env bash
# Runs bmoe on two platforms besides this one, on emulators Debian ships, as the README's test
# command's part after the cross-target checks:
#
#   aarch64 Linux (the phones' CPU): bmoe cross-built with gcc-aarch64-linux-gnu (ggml and
#     llama.cpp too, by llama-cpp-sys-2's CMake build) and run under qemu-aarch64 (qemu-user):
#     `bmoe --version`, `bmoe selfcheck`, `bmoe synth` of a tiny model, the demo's check
#     (streamed == resident, byte for byte, with the mode line), then the bmoe-uring-io test
#     suite through cargo's target runner.
#   Windows x86_64: the bmoe-uring-io test suite built with mingw-w64 and run under wine64
#     through cargo's target runner (the pread backend on FILE_FLAG_NO_BUFFERING handles).
#     The engine is not built for Windows: docs/io.md says what stops it.
#
# A platform whose tools are missing (scripts/prereqs.sh --test installs them with apt-get when
# run as root on Debian) is reported on one `cross-run: SKIPPED` line with the reason; a run
# that fails fails this script. Run by scripts/test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
out=$root/target/cross-run
mkdir -p "$out"

# Prints the first of the named tools that is not on PATH (and succeeds), or fails.
missing_tool() {
  local t
  for t in "$@"; do
    command -v "$t" >/dev/null 2>&1 || { echo "$t"; return 0; }
  done
  return 1
}

# Why a tool is missing: prereqs.sh installs the packages $1 only as root with apt-get.
why_missing() {
  if [ "$(id -u)" -ne 0 ]; then
    echo "not root, so scripts/prereqs.sh --test could not install $1"
  elif ! command -v apt-get >/dev/null 2>&1; then
    echo "no apt-get (not Debian), so scripts/prereqs.sh --test could not install $1"
  else
    echo "scripts/prereqs.sh --test (which scripts/test.sh runs first) installs $1"
  fi
}

# Adds the rustup std target $1 if needed; prints a SKIPPED line and fails if it cannot.
have_target() {
  local out
  rustup target list --installed 2>/dev/null | grep -qx "$1" && return 0
  if ! out=$(rustup target add "$1" 2>&1); then
    echo "cross-run: SKIPPED $1: rustup could not add the target: $(tail -n1 <<<"$out")"
    return 1
  fi
}

# Sums cargo test's `test result:` lines of log $1: "P passed, F failed, I ignored in B test binaries".
test_counts() {
  awk '/^test result:/ { for (i = 1; i <= NF; i++) { if ($(i) ~ /^passed;/) p += $(i-1);
         if ($(i) ~ /^failed;/) f += $(i-1); if ($(i) ~ /^ignored;/) g += $(i-1) } b++ }
       END { printf "%d passed, %d failed, %d ignored in %d test binaries", p, f, g, b }' "$1"
}

# The bmoe-uring-io test suite for target $1 through its runner (set by the caller), with the
# tests' own lines (the backend `auto` chose and why, the cases that skipped themselves).
uring_io_tests() {
  local t=$1 what=$2 log=$out/$1-uring-io.log start rc=0
  start=$(date +%s)
  cargo test -q -p bmoe-uring-io --target "$t" -- --nocapture >"$log" 2>&1 || rc=$?
  if [ $rc -ne 0 ]; then
    tail -n 60 "$log"
    echo "cross-run: $t: bmoe-uring-io tests FAILED under $what (log above, whole in $log)" >&2
    return 1
  fi
  grep -m1 '^auto chose' "$log" | sed "s/^/cross-run: $t: read engine: /" || true
  grep -o 'no_uring: .*' "$log" | sed "s/^/cross-run: $t: /" || true
  grep -o 'SKIP .*' "$log" | sort | uniq -c | sed "s/^ *\([0-9]*\) /cross-run: $t: \1x /" || true
  echo "cross-run: $t: bmoe-uring-io tests under $what: $(test_counts "$log") ($(( $(date +%s) - start )) s with the build)"
}

aarch64() {
  local t=aarch64-unknown-linux-gnu sysroot=/usr/aarch64-linux-gnu tool start
  if tool=$(missing_tool aarch64-linux-gnu-gcc aarch64-linux-gnu-g++ qemu-aarch64); then
    echo "cross-run: SKIPPED $t: no $tool: $(why_missing "gcc-aarch64-linux-gnu g++-aarch64-linux-gnu qemu-user")"
    return 0
  fi
  have_target "$t" || return 0
  local qemu="qemu-aarch64 -L $sysroot"
  export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER=aarch64-linux-gnu-gcc
  export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_RUNNER=$qemu
  export CC_aarch64_unknown_linux_gnu=aarch64-linux-gnu-gcc
  export CXX_aarch64_unknown_linux_gnu=aarch64-linux-gnu-g++
  export AR_aarch64_unknown_linux_gnu=aarch64-linux-gnu-ar
  # .cargo/config.toml builds aarch64 Linux for `target-cpu=native`, right on an aarch64 host,
  # wrong here (the native CPU is this x86_64 one). An empty RUSTFLAGS replaces the config's
  # flags for the target (not for build scripts): rustc builds for generic armv8-a, where NEON
  # is baseline, and llama-cpp-sys-2 then builds ggml with GGML_CPU_ARM_ARCH=armv8-a.
  export RUSTFLAGS=
  echo "cross-run: $t: $($qemu --version | head -n1), sysroot $sysroot, $(aarch64-linux-gnu-gcc --version | head -n1)"
  start=$(date +%s)
  cargo build -q -p bmoe-cli --target "$t"
  echo "cross-run: $t: bmoe (with ggml and llama.cpp) built in $(( $(date +%s) - start )) s"
  local exe=$root/target/$t/debug/bmoe
  bmoe_a64() { qemu-aarch64 -L "$sysroot" "$exe" "$@"; }
  aarch64-linux-gnu-readelf -h "$exe" | sed -n 's/^ *Machine: *\(.*\)/cross-run: '"$t"': binary: ELF for \1/p'
  bmoe_a64 --version | sed "s/^/cross-run: $t: /"
  bmoe_a64 selfcheck 2>&1 | sed "s/^/cross-run: $t: /"
  local model=$out/aarch64-tiny-q4_k_m.gguf
  start=$(date +%s)
  bmoe_a64 synth --shape tiny --quant q4_k_m --seed 1 -o "$model" --quiet 2>&1 | sed "s/^/cross-run: $t: /"
  # The demo's check (scripts/demo.sh) on the tiny model: streamed with a cache of a third of
  # its expert bytes, then resident, same sampler and seed, the texts compared byte for byte.
  local budget prompt="The engine reads only the experts each token routes to"
  budget=$(bmoe_a64 inspect "$model" --json | python3 -c 'import json,sys; print(max(1, json.load(sys.stdin)["expert_bytes"] // 3 // 2**20))')
  local args=(-p "$prompt" -n 48 --temp 0.8 --seed 7 -t 2)
  bmoe_a64 run -m "$model" "${args[@]}" --cache-mb "$budget" >"$out/aarch64-streamed.txt" 2>"$out/aarch64-streamed.err" ||
    { cat "$out/aarch64-streamed.err" >&2; echo "cross-run: $t: the streamed run FAILED" >&2; return 1; }
  bmoe_a64 run -m "$model" "${args[@]}" --moe-stream off >"$out/aarch64-resident.txt" 2>"$out/aarch64-resident.err" ||
    { cat "$out/aarch64-resident.err" >&2; echo "cross-run: $t: the resident run FAILED" >&2; return 1; }
  grep -E '^(mode|generation|moe-cache):' "$out/aarch64-streamed.err" | sed "s/^/cross-run: $t: streamed --cache-mb $budget: /"
  grep -E '^(mode|generation):' "$out/aarch64-resident.err" | sed "s/^/cross-run: $t: resident: /"
  if [ ! -s "$out/aarch64-streamed.txt" ] || ! cmp -s "$out/aarch64-streamed.txt" "$out/aarch64-resident.txt"; then
    echo "cross-run: $t: streamed and resident output DIFFER (or are empty): $out/aarch64-*.txt" >&2
    return 1
  fi
  echo "cross-run: $t: streamed == resident: identical ($(wc -c <"$out/aarch64-streamed.txt") bytes; synth and both runs in $(( $(date +%s) - start )) s under qemu)"
  uring_io_tests "$t" "$($qemu --version | head -n1 | cut -d' ' -f1-3)"
}

windows() {
  local t=x86_64-pc-windows-gnu tool wine
  if tool=$(missing_tool x86_64-w64-mingw32-gcc-posix); then
    echo "cross-run: SKIPPED $t: no $tool: $(why_missing "gcc-mingw-w64-x86-64-posix wine64")"
    return 0
  fi
  wine=$(command -v wine64 || true)
  [ -n "$wine" ] || { [ -x /usr/lib/wine/wine64 ] && wine=/usr/lib/wine/wine64; }
  if [ -z "$wine" ]; then
    echo "cross-run: SKIPPED $t: no wine64: $(why_missing "wine64")"
    return 0
  fi
  have_target "$t" || return 0
  export CARGO_TARGET_X86_64_PC_WINDOWS_GNU_LINKER=x86_64-w64-mingw32-gcc-posix
  export CARGO_TARGET_X86_64_PC_WINDOWS_GNU_RUNNER=$wine
  # A Wine prefix of our own, made on the first run; no Mono or Gecko install is attempted,
  # and Wine's own debug channels stay quiet.
  export WINEPREFIX=$out/wine WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml="
  echo "cross-run: $t: $("$wine" --version), $(x86_64-w64-mingw32-gcc-posix --version | head -n1)"
  # Wine 8.0 (Debian 12's) has no bcryptprimitives.dll, which every Rust program built for
  # Windows 10+ imports (ProcessPrng); scripts/wine/bcryptprimitives.c provides it.
  local start sys32=$WINEPREFIX/drive_c/windows/system32
  start=$(date +%s)
  [ -d "$sys32" ] || "$wine" wineboot --init >"$out/wineboot.log" 2>&1 ||
    { cat "$out/wineboot.log" >&2; echo "cross-run: $t: wineboot FAILED" >&2; return 1; }
  if ! "$wine" --version | grep -Eq '^wine-([9]|[1-9][0-9])\.'; then
    x86_64-w64-mingw32-gcc-posix -shared -O2 -Wall -Werror -o "$sys32/bcryptprimitives.dll" \
      scripts/wine/bcryptprimitives.c -ladvapi32
    echo "cross-run: $t: Wine prefix ready in $(( $(date +%s) - start )) s (with bcryptprimitives.dll from scripts/wine/)"
  fi
  local rc=0
  uring_io_tests "$t" "$("$wine" --version)" || rc=$?
  echo "cross-run: $t: the engine's tests are not run here: llama-cpp-sys-2 0.1.161 builds ggml for MinGW but links none of it, and bmoe-engine uses getrusage and madvise (docs/io.md)"
  # Wine's server lingers a few seconds after the last program; stop it now.
  "${wine%/*}/wineserver" -k 2>/dev/null || true
  return $rc
}

( aarch64 )
( windows )
