// A single-line progress bar on stderr for long attack runs (instances done, running ASR,
// queries, ETA). On a non-terminal stderr it prints one plain line per finished instance.
#pragma once

#include <chrono>
#include <string>

namespace advbo::cli {

/// Progress over `total` work items; disabled bars print nothing.
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
