// SIGINT / SIGTERM handling for the whole process, in one place: a SignalScope runs an
// async-signal-safe action when either signal arrives while it lives -- print where the
// records are (cli/interrupt_hint.h), kill a running objective command's process group
// (subprocess.h), wake a server's stop watcher (serve/server.h) -- and then either ends the
// process as the signal would have or lets it go on.
#pragma once

namespace advbo::process {

/// What a live SignalScope does on SIGINT / SIGTERM. Scopes may nest and overlap (several
/// threads each running an objective command): the one handler runs every live scope's
/// action, the newest first, and then, if any live scope was made with Then::kDie, restores
/// the signal's default action and re-raises it, so exit statuses (130, 143) and staged
/// .partial files are as without advbo's handlers; with only Then::kContinue scopes the
/// process goes on. The handlers are installed while at least one scope lives, and the
/// previous ones restored after the last.
class SignalScope {
 public:
  /// After the actions: end the process (default action, re-raised) or continue.
  enum class Then { kDie, kContinue };
  /// Runs in the signal handler with the signal number and `data`: only async-signal-safe
  /// calls (write(2), kill(2)); `data` must outlive the scope.
  using Action = void (*)(int signal, void* data);

  /// Throws std::runtime_error when more than kMaxScopes scopes would be alive at once.
  SignalScope(Action action, void* data, Then then);
  ~SignalScope();
  SignalScope(const SignalScope&) = delete;
  SignalScope& operator=(const SignalScope&) = delete;

  /// Largest number of scopes alive at once (objective commands run concurrently by a batch).
  static constexpr int kMaxScopes = 256;

 private:
  int slot_ = -1;
};

}  // namespace advbo::process
