#include "process/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <stdexcept>

#include "bo/bo_loop.h"
#include "process/signals.h"
#include "text/numbers.h"

namespace advbo::process {
namespace {

// SIGINT / SIGTERM while a command runs: kill its whole process group (then advbo dies as
// the signal would have it; SignalScope runs every live scope's action first).
void KillGroup(int, void* group) {
  kill(-static_cast<pid_t>(reinterpret_cast<intptr_t>(group)), SIGKILL);
}

// Starts /bin/sh -c script in its own process group with stdout to a pipe; returns the pid
// and the read end in *out_fd.
pid_t Spawn(const std::string& script, int* out_fd) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0)
    throw std::runtime_error(std::string("cannot create a pipe: ") + std::strerror(errno));
  const pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    throw std::runtime_error(std::string("cannot start the objective command: ") +
                             std::strerror(errno));
  }
  if (pid == 0) {  // child: own process group, stdout to the pipe, stdin from /dev/null
    setpgid(0, 0);
    dup2(fds[1], STDOUT_FILENO);
    const int devnull = open("/dev/null", O_RDONLY);
    if (devnull >= 0) dup2(devnull, STDIN_FILENO);
    execl("/bin/sh", "sh", "-c", script.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  setpgid(pid, pid);  // also here: no race with a kill before the child's own setpgid
  close(fds[1]);
  *out_fd = fds[0];
  return pid;
}

// Waits for the child (after SIGKILL to its group when it timed out) and sets its exit status
// (-1 and the signal when killed); throws ShellTimeout after a timeout.
void Reap(pid_t pid, bool timed_out, double timeout_seconds, int* exit_status, int* signal) {
  if (timed_out) kill(-pid, SIGKILL);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (timed_out) {
    char msg[96];
    std::snprintf(msg, sizeof msg, "objective command exceeded --eval-timeout %gs and was killed",
                  timeout_seconds);
    throw ShellTimeout(msg);
  }
  if (WIFSIGNALED(status)) {
    *exit_status = -1;
    *signal = WTERMSIG(status);
  } else {
    *exit_status = WEXITSTATUS(status);
  }
}

}  // namespace

std::string ShellQuote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

ShellResult RunShell(const std::string& script, double timeout_seconds) {
  int fd = -1;
  const pid_t pid = Spawn(script, &fd);
  SignalScope forwarding(KillGroup, reinterpret_cast<void*>(static_cast<intptr_t>(pid)),
                         SignalScope::Then::kDie);
  ShellResult res;
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::duration<double>(timeout_seconds > 0 ? timeout_seconds : 0);
  bool timed_out = false;
  char buf[4096];
  for (;;) {
    int wait_ms = -1;
    if (timeout_seconds > 0) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                            deadline - std::chrono::steady_clock::now())
                            .count();
      if (left <= 0) {
        timed_out = true;
        break;
      }
      wait_ms = static_cast<int>(std::min<long long>(left, 1000));
    }
    pollfd pfd{fd, POLLIN, 0};
    const int r = poll(&pfd, 1, wait_ms);
    if (r < 0 && errno == EINTR) continue;
    if (r == 0) continue;  // re-check the deadline
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // EOF: the group closed stdout (normally: it exited)
    res.out.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  Reap(pid, timed_out, timeout_seconds, &res.exit_status, &res.signal);
  return res;
}

StreamResult RunShellLines(const std::string& script, double timeout_seconds,
                           const std::function<bool(const std::string&)>& on_line) {
  int fd = -1;
  const pid_t pid = Spawn(script, &fd);
  SignalScope forwarding(KillGroup, reinterpret_cast<void*>(static_cast<intptr_t>(pid)),
                         SignalScope::Then::kDie);
  StreamResult res;
  using SteadyClock = std::chrono::steady_clock;
  const auto deadline =
      SteadyClock::now() + std::chrono::duration<double>(timeout_seconds > 0 ? timeout_seconds : 0);
  SteadyClock::time_point kill_at{};
  bool timed_out = false, terminated = false;
  std::string pending;
  char buf[4096];
  auto deliver = [&](const std::string& line) {
    if (res.stopped) return;
    bool go = true;
    try {
      go = on_line(line);
    } catch (...) {
      kill(-pid, SIGKILL);
      close(fd);
      int st = 0;
      while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
      }
      throw;
    }
    if (!go) {
      res.stopped = true;
      kill(-pid, SIGTERM);
      kill_at = SteadyClock::now() + std::chrono::seconds(5);
    }
  };
  for (;;) {
    const auto now = SteadyClock::now();
    if (res.stopped && !terminated && now >= kill_at) {
      kill(-pid, SIGKILL);
      terminated = true;
    }
    if (!res.stopped && timeout_seconds > 0 && now >= deadline) {
      timed_out = true;
      break;
    }
    int wait_ms = res.stopped ? 200 : (timeout_seconds > 0 ? 1000 : -1);
    pollfd pfd{fd, POLLIN, 0};
    const int r = poll(&pfd, 1, wait_ms);
    if (r < 0 && errno == EINTR) continue;
    if (r == 0) continue;
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    pending.append(buf, static_cast<size_t>(n));
    size_t pos;
    while ((pos = pending.find('\n')) != std::string::npos) {
      const std::string line = pending.substr(0, pos);
      pending.erase(0, pos + 1);
      deliver(line);
    }
  }
  if (!timed_out && !pending.empty()) deliver(pending);
  close(fd);
  Reap(pid, timed_out, timeout_seconds, &res.exit_status, &res.signal);
  return res;
}

double RunObjectiveCommand(const std::string& command, const std::string& lead,
                           const Eigen::VectorXd& x, double timeout_seconds) {
  const std::string xs = text::JoinG(x.data(), x.size(), " ");
  std::string args = lead.empty() ? "" : " " + ShellQuote(lead);
  if (x.size() > 0) args += " " + xs;
  std::string full = "export ADVBO_X=" + ShellQuote(xs) + "; ";
  if (!lead.empty()) full += "export ADVBO_AGENT=" + ShellQuote(lead) + "; ";
  full += command + args;
  ShellResult res;
  try {
    res = RunShell(full, timeout_seconds);
  } catch (const std::runtime_error& e) {  // ShellTimeout included
    throw bo::EvaluationError(e.what());
  }
  if (res.exit_status < 0)
    throw bo::EvaluationError("objective command killed by signal " + std::to_string(res.signal));
  if (res.exit_status != 0)
    throw bo::EvaluationError("objective command exited with status " +
                              std::to_string(res.exit_status));
  std::istringstream lines(res.out);
  std::string line, last;
  while (std::getline(lines, line))
    if (line.find_first_not_of(" \t\r") != std::string::npos) last = line;
  const char* s = last.c_str();
  char* end = nullptr;
  const double v = std::strtod(s, &end);
  while (end && (*end == ' ' || *end == '\t' || *end == '\r')) ++end;
  if (last.empty() || end == s || (end && *end != '\0'))
    throw bo::EvaluationError("objective command printed '" + last.substr(0, 60) +
                              "' as its last line, not a number");
  return v;
}

}  // namespace advbo::process
