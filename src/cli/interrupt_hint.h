// A message for Ctrl-C: while an InterruptHint lives, SIGINT and SIGTERM first print its
// text to stderr (e.g. where the records so far are and that the same command resumes),
// then end the process as the signal would have (default action, re-raised), so exit
// statuses and the staged .partial files are exactly as without it
// (process::SignalScope, Then::kDie).
#pragma once

#include <string>

#include "process/signals.h"

namespace advbo::cli {

/// Prints `text` on SIGINT / SIGTERM while it lives (and then the process ends).
class InterruptHint {
 public:
  explicit InterruptHint(const std::string& text);
  InterruptHint(const InterruptHint&) = delete;
  InterruptHint& operator=(const InterruptHint&) = delete;

 private:
  std::string text_;  // read by the signal handler: set before the scope, never changed
  process::SignalScope scope_;
};

}  // namespace advbo::cli
