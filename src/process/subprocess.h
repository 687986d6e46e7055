// Running an external objective command for `advbo bo --command`: /bin/sh in its own
// process group, stdout captured, an optional wall-time limit that kills the whole group,
// and SIGINT/SIGTERM to advbo killing the group too (no orphaned objective processes).
#pragma once

#include <Eigen/Dense>
#include <functional>
#include <stdexcept>
#include <string>

namespace advbo::process {

/// `s` single-quoted for /bin/sh (embedded quotes escaped as '\'').
std::string ShellQuote(const std::string& s);

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

/// Like RunShell, but hands every complete stdout line (without its newline) to `on_line` as
/// it arrives. When on_line returns false the command's whole process group gets SIGTERM
/// (and SIGKILL if it is still alive 5 s later), and the result has stopped = true (the
/// stop is not a failure: BO-BOS early-stopping a training script). A last line without a
/// newline is passed too. Exceptions from on_line kill the group (SIGKILL) and propagate.
/// Same timeout, signal forwarding and errors as RunShell.
struct StreamResult {
  int exit_status = 0;  ///< as ShellResult
  /// Signal that ended the process (0: it exited).
  int signal = 0;
  bool stopped = false;  ///< on_line asked to stop and the group was terminated
};
StreamResult RunShellLines(const std::string& script, double timeout_seconds,
                           const std::function<bool(const std::string& line)>& on_line);

/// Runs `command [lead] x_1 ... x_d` through /bin/sh (x also exported as ADVBO_X, lead as
/// ADVBO_AGENT when non-empty: `advbo fbo` passes the agent index) with the wall-time limit
/// timeout_seconds (0 = none); the last non-empty stdout line must be the objective value.
/// Every failure (timeout, signal, non-zero exit status, no number) throws
/// bo::EvaluationError naming it, i.e. a failed evaluation for the caller's policy.
double RunObjectiveCommand(const std::string& command, const std::string& lead,
                           const Eigen::VectorXd& x, double timeout_seconds);

}  // namespace advbo::process
