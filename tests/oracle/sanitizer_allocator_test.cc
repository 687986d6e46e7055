// The recycling tensor allocator of the AddressSanitizer build (oracle/sanitizer_allocator.h):
// recycled buffers are reused and hold their own values, and ASan still reports a read of a
// freed buffer and a read past a live one. In other builds the installer is a no-op and only
// the value checks run.
#include "oracle/sanitizer_allocator.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

namespace advbo::oracle {
namespace {

constexpr int64_t kSide = 300;  // [300, 300] floats = 352 KiB: a recycled size

TEST(SanitizerAllocator, RecycledBuffersAreReusedAndHoldTheirOwnValues) {
  InstallSanitizerTensorAllocator();
  InstallSanitizerTensorAllocator();  // idempotent
  const void* first = nullptr;
  {
    torch::Tensor a = torch::full({kSide, kSide}, 1.0f);
    first = a.data_ptr();
    EXPECT_DOUBLE_EQ(a.sum().item<double>(), kSide * kSide);
  }
  torch::Tensor b = torch::full({kSide, kSide}, 2.0f);
  torch::Tensor c = torch::full({kSide, kSide}, 3.0f);  // live at once: another block
  EXPECT_NE(b.data_ptr(), c.data_ptr());
  EXPECT_DOUBLE_EQ(b.sum().item<double>(), 2.0 * kSide * kSide);
  EXPECT_DOUBLE_EQ(c.sum().item<double>(), 3.0 * kSide * kSide);
  torch::Tensor small = torch::full({10}, 4.0f);  // below the recycled size: ASan's own path
  EXPECT_DOUBLE_EQ(small.sum().item<double>(), 40.0);
#ifdef ADVBO_SANITIZED
  EXPECT_EQ(b.data_ptr(), first) << "a freed buffer of the same size is reused";
#else
  (void)first;
#endif
}

#ifdef ADVBO_SANITIZED
TEST(SanitizerAllocatorDeathTest, ReadsOfFreedAndPastTheEndBuffersAreStillReported) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");  // LibTorch starts threads
  InstallSanitizerTensorAllocator();
  EXPECT_DEATH(
      {
        const float* p = nullptr;
        {
          torch::Tensor t = torch::ones({kSide, kSide});
          p = t.data_ptr<float>();
        }
        volatile float v = p[kSide];  // the buffer now waits, poisoned, in a free list
        (void)v;
      },
      "use-after-poison");
  EXPECT_DEATH(
      {
        torch::Tensor t = torch::ones({kSide, kSide});
        volatile float v = t.data_ptr<float>()[kSide * kSide];  // one past the end
        (void)v;
      },
      "heap-buffer-overflow");
}
#endif

}  // namespace
}  // namespace advbo::oracle
