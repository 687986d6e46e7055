#include "cli/interrupt_hint.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <stdexcept>

namespace advbo::cli {
namespace {

// What a signal handler may touch: a fixed buffer written before the handlers are installed.
char g_text[1024];
size_t g_length = 0;
std::atomic<bool> g_alive{false};
struct sigaction g_old_int {
}, g_old_term{};

void OnSignal(int sig) {
  (void)!write(STDERR_FILENO, g_text, g_length);
  signal(sig, SIG_DFL);
  raise(sig);
}

}  // namespace

InterruptHint::InterruptHint(const std::string& text) {
  if (g_alive.exchange(true)) throw std::logic_error("InterruptHint: one is already installed");
  g_length = std::min(text.size(), sizeof(g_text));
  std::memcpy(g_text, text.data(), g_length);
  struct sigaction sa {};
  sa.sa_handler = OnSignal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, &g_old_int);
  sigaction(SIGTERM, &sa, &g_old_term);
}

InterruptHint::~InterruptHint() {
  sigaction(SIGINT, &g_old_int, nullptr);
  sigaction(SIGTERM, &g_old_term, nullptr);
  g_alive = false;
}

}  // namespace advbo::cli
