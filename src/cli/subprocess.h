// Running an external objective command for `advbo bo --command`: /bin/sh in its own
// process group, stdout captured, an optional wall-time limit that kills the whole group,
// and SIGINT/SIGTERM to advbo killing the group too (no orphaned objective processes).
#pragma once

#include <stdexcept>
#include <string>

namespace advbo::cli {

/// Outcome of a shell command that ran to its end.
struct ShellResult {
  std::string out;      ///< everything it wrote to stdout
  int exit_status = 0;  ///< its exit status (0..255), or -1 when killed by a signal
  int signal = 0;       ///< the killing signal when exit_status == -1
};

/// The command exceeded its time limit; its process group was killed (SIGKILL).
struct ShellTimeout : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Runs `script` with /bin/sh -c in a new process group, stdin from /dev/null, stderr
/// inherited. timeout_seconds > 0 limits its wall time: when exceeded the whole group is
/// killed and ShellTimeout thrown. While it runs, SIGINT and SIGTERM to advbo kill the
/// group and then advbo (default action). Thread-safe: up to 256 commands may run at once
/// (a batch evaluated concurrently); a signal kills every running group. Throws
/// std::runtime_error when the command cannot be started.
ShellResult RunShell(const std::string& script, double timeout_seconds);

}  // namespace advbo::cli
