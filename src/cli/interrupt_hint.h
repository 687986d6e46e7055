// A message for Ctrl-C: while an InterruptHint lives, SIGINT and SIGTERM first print its
// text to stderr (e.g. where the records so far are and that the same command resumes),
// then end the process as the signal would have (default action, re-raised), so exit
// statuses and the staged .partial files are exactly as without it.
#pragma once

#include <string>

namespace advbo::cli {

/// Installs the handlers; the destructor restores the previous ones. Only one may be alive
/// at a time (the text lives in process-wide storage a signal handler can reach); a second
/// one throws std::logic_error.
class InterruptHint {
 public:
  explicit InterruptHint(const std::string& text);
  ~InterruptHint();
  InterruptHint(const InterruptHint&) = delete;
  InterruptHint& operator=(const InterruptHint&) = delete;
};

}  // namespace advbo::cli
