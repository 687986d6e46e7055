// LibTorch's CPU tensor allocator in the AddressSanitizer build (ADVBO_SANITIZE).
#pragma once

namespace advbo::oracle {

/// Makes LibTorch recycle its large CPU tensor buffers when advbo is built with
/// AddressSanitizer (ADVBO_SANITIZED); a no-op in every other build. Idempotent and
/// thread-safe; called before a TorchScript module is loaded.
///
/// Why: ASan serves every allocation above 128 KiB with a fresh mmap and returns it with
/// munmap, so each layer output of a forward pass page-faults its buffer in anew. Measured on
/// the shipped CIFAR-10 model (`advbo evaluate -n 10 --budget 150`, 3,646 queries): 74 s
/// under ASan, 32 % of it in the kernel's page-fault path, against 6.7 s in the -O2 build.
///
/// What it keeps: buffers of at least 64 KiB go to a per-size free list when LibTorch frees
/// them and are poisoned there (ASAN_POISON_MEMORY_REGION), so a read or write of a freed
/// tensor buffer is still reported (as use-after-poison), and each buffer is a heap block of
/// exactly the requested size, so an overflow still hits ASan's redzone. Smaller buffers
/// take ASan's ordinary path. At most 256 MiB is kept; beyond that buffers are freed.
void InstallSanitizerTensorAllocator();

}  // namespace advbo::oracle
