/* bcryptprimitives.dll for Wine 8.0 (Debian 12's), which does not ship it. Rust's std (1.78
 * and later) imports ProcessPrng from it on Windows 10+ for its random keys, so without it no
 * Rust program starts under that Wine ("Library bcryptprimitives.dll ... not found"); Wine 9
 * has its own. This one fills the same contract (the bytes from the system's RNG, always
 * TRUE) over advapi32's RtlGenRandom, which Wine 8 implements. scripts/cross-run.sh builds it
 * with mingw-w64 and puts it in its own Wine prefix's system32; nothing of bmoe uses it. */
#include <windows.h>
#include <ntsecapi.h>

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len) {
  while (len > 0) {
    ULONG n = len > 0x10000000 ? 0x10000000 : (ULONG)len;
    if (!RtlGenRandom(data, n)) {
      /* ProcessPrng cannot fail on Windows; a failing RNG must not hand out zeros. */
      RaiseException(0xC00000E5 /* STATUS_INTERNAL_ERROR */, EXCEPTION_NONCONTINUABLE, 0, NULL);
    }
    data += n;
    len -= n;
  }
  return TRUE;
}
