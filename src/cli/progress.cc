#include "cli/progress.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

namespace advbo::cli {

std::string FormatProgressLine(long done, long total, const std::string& status, double elapsed,
                               double eta, int columns) {
  char tail[96];
  std::snprintf(tail, sizeof(tail), " | %.0fs elapsed, ETA %.0fs", elapsed, eta);
  const std::string count = " " + std::to_string(done) + "/" + std::to_string(total) + " ";
  int width = 28;
  if (columns > 0) {
    const int fixed = static_cast<int>(count.size() + status.size() + std::strlen(tail)) + 2;
    width = std::clamp(columns - 1 - fixed, 10, 28);
  }
  const int filled = static_cast<int>(width * std::clamp(done, 0L, total) / std::max(total, 1L));
  std::string line = "[" + std::string(filled, '#') + std::string(width - filled, '.') + "]" +
                     count + status + tail;
  if (columns > 0 && static_cast<int>(line.size()) > columns - 1)
    line.resize(static_cast<size_t>(std::max(columns - 1, 0)));
  return line;
}

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
  int columns = 0;
  winsize ws{};
  if (tty_ && ioctl(fileno(stderr), TIOCGWINSZ, &ws) == 0) columns = ws.ws_col;
  const std::string text = FormatProgressLine(done, total_, status, elapsed, eta, columns);
  const char* line = text.c_str();
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
