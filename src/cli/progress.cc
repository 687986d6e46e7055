#include "cli/progress.h"

#include <unistd.h>

#include <cstdio>

namespace advbo::cli {

ProgressBar::ProgressBar(long total, bool enabled)
    : total_(total > 0 ? total : 1),
      enabled_(enabled),
      tty_(isatty(fileno(stderr))),
      start_(std::chrono::steady_clock::now()),
      last_draw_(start_) {}

void ProgressBar::Update(long done, const std::string& status, bool item_finished) {
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  if (!tty_ && !item_finished) return;
  if (tty_ && !item_finished && now - last_draw_ < std::chrono::milliseconds(100)) return;
  last_draw_ = now;
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  const double eta = done > 0 ? elapsed / done * (total_ - done) : 0.0;
  constexpr int kWidth = 28;
  const int filled = static_cast<int>(kWidth * done / total_);
  std::string bar(filled, '#');
  bar.append(kWidth - filled, '.');
  char line[512];
  std::snprintf(line, sizeof(line), "[%s] %ld/%ld %s | %.0fs elapsed, ETA %.0fs", bar.c_str(), done,
                total_, status.c_str(), elapsed, eta);
  if (tty_)
    std::fprintf(stderr, "\r%s\033[K", line);
  else
    std::fprintf(stderr, "%s\n", line);
  std::fflush(stderr);
}

void ProgressBar::Finish() {
  if (enabled_ && tty_) std::fprintf(stderr, "\n");
}

}  // namespace advbo::cli
