// A single-line progress bar on stderr for long attack runs (instances done, running ASR,
// queries, ETA). On a non-terminal stderr it prints one plain line per finished instance.
#pragma once

#include <chrono>
#include <string>

namespace advbo::cli {

/// The bar's line: "[####....] done/total STATUS | Ns elapsed, ETA Ns", at most
/// `columns` - 1 characters when `columns` > 0 (the bar narrows to 10 cells first, then the
/// status is cut), so a redraw never wraps onto a second terminal line; `columns` <= 0 =
/// no limit. `total` >= 1, 0 <= `done` <= `total`; times in seconds.
std::string FormatProgressLine(long done, long total, const std::string& status, double elapsed,
                               double eta, int columns);

/// Progress over `total` work items; disabled bars print nothing. On a terminal the line is
/// clipped to its width (read at every redraw, so resizing is followed).
class ProgressBar {
 public:
  ProgressBar(long total, bool enabled);
  /// Redraws with `done` items finished and a free-form status (e.g. "ASR 95% q=123").
  /// `item_finished` marks a completed item (non-terminal output prints only these).
  void Update(long done, const std::string& status, bool item_finished);
  /// Ends the bar's line.
  void Finish();

 private:
  long total_;
  bool enabled_, tty_;
  std::chrono::steady_clock::time_point start_, last_draw_;
};

}  // namespace advbo::cli
