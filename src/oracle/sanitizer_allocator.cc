// A recycling CPU allocator for LibTorch in the AddressSanitizer build (sanitizer_allocator.h).
#include "oracle/sanitizer_allocator.h"

#ifdef ADVBO_SANITIZED
#include <c10/core/Allocator.h>
#include <c10/core/CPUAllocator.h>
#include <sanitizer/asan_interface.h>

#include <cstdlib>
#include <mutex>
#include <new>
#include <unordered_map>
#include <vector>
#endif

namespace advbo::oracle {

#ifdef ADVBO_SANITIZED
namespace {

constexpr size_t kMinRecycled = size_t{64} << 10;  // smaller blocks: ASan's own path
constexpr size_t kMaxKept = size_t{256} << 20;     // bytes kept in the free lists at most
constexpr size_t kAlignment = 64;                  // as c10's default CPU allocator

class RecyclingAllocator final : public c10::Allocator {
 public:
  c10::DataPtr allocate(size_t n) const override {
    if (n == 0) return {nullptr, nullptr, &Delete, c10::Device(c10::DeviceType::CPU)};
    void* p = nullptr;
    if (n >= kMinRecycled) {
      std::lock_guard<std::mutex> lock(mutex_);
      if (auto it = free_.find(n); it != free_.end() && !it->second.empty()) {
        p = it->second.back();
        it->second.pop_back();
        kept_ -= n;
        ASAN_UNPOISON_MEMORY_REGION(p, n);
        size_of_[p] = n;
        return {p, p, &Delete, c10::Device(c10::DeviceType::CPU)};
      }
    }
    if (posix_memalign(&p, kAlignment, n) != 0) throw std::bad_alloc();
    if (n >= kMinRecycled) {
      std::lock_guard<std::mutex> lock(mutex_);
      size_of_[p] = n;
    }
    return {p, p, &Delete, c10::Device(c10::DeviceType::CPU)};
  }

  c10::DeleterFnPtr raw_deleter() const override { return &Delete; }

  static RecyclingAllocator& Instance() {
    static auto* a = new RecyclingAllocator;  // lives as long as LibTorch's tensors
    return *a;
  }

 private:
  static void Delete(void* p) {
    if (p) Instance().Release(p);
  }

  void Release(void* p) const {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto it = size_of_.find(p);
      if (it != size_of_.end()) {
        const size_t n = it->second;
        size_of_.erase(it);
        if (kept_ + n <= kMaxKept) {
          ASAN_POISON_MEMORY_REGION(p, n);
          free_[n].push_back(p);
          kept_ += n;
          return;
        }
      }
    }
    std::free(p);
  }

  mutable std::mutex mutex_;
  mutable std::unordered_map<size_t, std::vector<void*>> free_;  // size -> poisoned blocks
  mutable std::unordered_map<void*, size_t> size_of_;            // live recycled blocks
  mutable size_t kept_ = 0;
};

}  // namespace

void InstallSanitizerTensorAllocator() {
  static std::once_flag once;
  std::call_once(once, [] { c10::SetCPUAllocator(&RecyclingAllocator::Instance(), 1); });
}
#else
void InstallSanitizerTensorAllocator() {}
#endif

}  // namespace advbo::oracle
