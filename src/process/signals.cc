#include "process/signals.h"

#include <signal.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <stdexcept>
#include <string>

namespace advbo::process {
namespace {

// What the handler may read: fixed slots, written under g_mutex before a slot is published
// (its sequence number set last) and unpublished first when the scope ends.
struct Slot {
  std::atomic<uint64_t> seq{0};  // 0 = free; larger = newer
  SignalScope::Action action = nullptr;
  void* data = nullptr;
  bool die = false;
};
Slot g_slots[SignalScope::kMaxScopes];
std::mutex g_mutex;
uint64_t g_next_seq = 1;
int g_alive = 0;
struct sigaction g_old_int {
}, g_old_term{};

extern "C" void OnSignal(int sig) {
  bool die = false;
  // Newest first: repeatedly the live slot with the largest sequence number below the last.
  uint64_t below = UINT64_MAX;
  for (;;) {
    int best = -1;
    uint64_t best_seq = 0;
    for (int i = 0; i < SignalScope::kMaxScopes; ++i) {
      const uint64_t s = g_slots[i].seq.load(std::memory_order_acquire);
      if (s != 0 && s < below && s > best_seq) best = i, best_seq = s;
    }
    if (best < 0) break;
    g_slots[best].action(sig, g_slots[best].data);
    die |= g_slots[best].die;
    below = best_seq;
  }
  if (die) {
    signal(sig, SIG_DFL);
    raise(sig);
  }
}

}  // namespace

SignalScope::SignalScope(Action action, void* data, Then then) {
  std::lock_guard<std::mutex> lock(g_mutex);
  for (int i = 0; i < kMaxScopes && slot_ < 0; ++i)
    if (g_slots[i].seq.load(std::memory_order_relaxed) == 0) slot_ = i;
  if (slot_ < 0)
    throw std::runtime_error("more than " + std::to_string(kMaxScopes) +
                             " signal scopes at once (objective commands running concurrently)");
  Slot& s = g_slots[slot_];
  s.action = action;
  s.data = data;
  s.die = then == Then::kDie;
  s.seq.store(g_next_seq++, std::memory_order_release);
  if (g_alive++ == 0) {
    struct sigaction sa {};
    sa.sa_handler = OnSignal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &g_old_int);
    sigaction(SIGTERM, &sa, &g_old_term);
  }
}

SignalScope::~SignalScope() {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_slots[slot_].seq.store(0, std::memory_order_release);
  if (--g_alive == 0) {
    sigaction(SIGINT, &g_old_int, nullptr);
    sigaction(SIGTERM, &g_old_term, nullptr);
  }
}

}  // namespace advbo::process
