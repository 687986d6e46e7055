#include "cli/interrupt_hint.h"

#include <unistd.h>

namespace advbo::cli {
namespace {

void PrintHint(int, void* text) {
  const auto* s = static_cast<const std::string*>(text);
  (void)!write(STDERR_FILENO, s->data(), s->size());
}

}  // namespace

InterruptHint::InterruptHint(const std::string& text)
    : text_(text), scope_(PrintHint, &text_, process::SignalScope::Then::kDie) {}

}  // namespace advbo::cli
