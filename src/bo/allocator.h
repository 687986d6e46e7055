// Process-wide malloc tuning for the BO core's large temporaries.
//
// The GP code creates and frees many [N, N] and [N, M] Eigen temporaries (megabytes each).
// With glibc's defaults such blocks are mmap'ed and returned to the kernel on free, so every
// likelihood evaluation pays fresh page faults; on virtualised machines this cost more than
// the arithmetic itself (measured: ML-II fit at n = 500, d = 10 took 9.3 s with the
// defaults and 1.8 s tuned, bit-identical results). Call once at the start of main();
// library code never calls it.
#pragma once

namespace advbo::bo {

/// Keeps blocks up to 32 MiB (glibc's maximum) on the heap and stops the heap from being trimmed
/// below 1 GiB, growing it 256 MiB at a time (glibc mallopt M_MMAP_THRESHOLD / M_TRIM_THRESHOLD /
/// M_TOP_PAD). No-op on other C
/// libraries. Affects the whole process.
void ConfigureAllocatorForLargeMatrices();

/// The profile of `advbo serve`, called after ConfigureAllocatorForLargeMatrices: blocks of
/// 1 MiB and more are mapped and unmapped directly. A server's connection threads each get a
/// malloc arena, and blocks freed by one thread stay in its arena: one r2b2:jpeg+noise session
/// of 3,000 queries grew the server to 2.6 GB that way while its GP held 73 MB; with this
/// profile, 525 MB. No-op on other C libraries. Affects the whole process.
void ConfigureAllocatorForServer();

}  // namespace advbo::bo
