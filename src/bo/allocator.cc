#include "bo/allocator.h"

#include <cstdlib>  // defines __GLIBC__ on glibc systems

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace advbo::bo {

void ConfigureAllocatorForLargeMatrices() {
#if defined(__GLIBC__)
  // Setting any of these disables glibc's dynamic mmap threshold, so all three are needed.
  mallopt(M_MMAP_THRESHOLD, 32 << 20);  // glibc's maximum on 64-bit
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  mallopt(M_TOP_PAD, 256 << 20);
#endif
}

void ConfigureAllocatorForServer() {
#if defined(__GLIBC__)
  mallopt(M_MMAP_THRESHOLD, 1 << 20);
#endif
}

}  // namespace advbo::bo
