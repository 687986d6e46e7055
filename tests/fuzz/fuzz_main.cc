// libFuzzer entry point of one harness (ADVBO_FUZZ_TARGET, set per executable by CMake).
#include "fuzz_targets.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return ADVBO_FUZZ_TARGET(data, size);
}
