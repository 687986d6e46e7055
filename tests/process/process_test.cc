// Processes and signals (src/process): shell quoting round trips through /bin/sh, exit
// statuses and signals are reported as the shell gives them, time limits kill the whole process
// group, streamed lines arrive in order and a stop terminates the command, the objective
// command's failures are evaluation errors, and signal scopes run their actions newest first.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <Eigen/Dense>
#include <chrono>
#include <csignal>
#include <string>
#include <vector>

#include "bo/bo_loop.h"
#include "process/signals.h"
#include "process/subprocess.h"

namespace advbo::process {
namespace {

TEST(ShellQuote, RoundTripsEveryByteThroughTheShell) {
  for (const std::string s : {"plain", "two words", "it's", "'", "$HOME `x` \"q\" \\ ;|&", ""}) {
    const ShellResult r = RunShell("printf %s " + ShellQuote(s), 10);
    EXPECT_EQ(r.exit_status, 0) << s;
    EXPECT_EQ(r.out, s);
  }
}

TEST(RunShell, ReportsExitStatusesAndSignals) {
  EXPECT_EQ(RunShell("exit 7", 10).exit_status, 7);
  const ShellResult killed = RunShell("kill -TERM $$", 10);
  EXPECT_EQ(killed.exit_status, -1);
  EXPECT_EQ(killed.signal, SIGTERM);
  EXPECT_EQ(RunShell("echo a; echo b", 10).out, "a\nb\n");
  // stdin is /dev/null: a command reading it ends at once.
  EXPECT_EQ(RunShell("cat", 10).out, "");
}

TEST(RunShell, TheTimeLimitKillsTheWholeGroup) {
  // A background child of the shell would outlive a kill of the shell alone; the group kill
  // ends it too, so the marker file is never written.
  char dir[] = "/tmp/advbo_process_XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string marker = std::string(dir) + "/late";
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_THROW(RunShell("(sleep 2; touch " + marker + ") & sleep 30", 0.5), ShellTimeout);
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_LT(took, 10.0);
  sleep(3);
  EXPECT_NE(access(marker.c_str(), F_OK), 0) << "the background child survived the kill";
  rmdir(dir);
}

TEST(RunShellLines, LinesArriveInOrderAndAStopTerminatesTheCommand) {
  std::vector<std::string> lines;
  const StreamResult all = RunShellLines("printf 'a\\nb\\nlast'", 10, [&](const std::string& l) {
    lines.push_back(l);
    return true;
  });
  EXPECT_EQ(all.exit_status, 0);
  EXPECT_FALSE(all.stopped);
  EXPECT_EQ(lines, (std::vector<std::string>{"a", "b", "last"}));  // the unterminated one too
  lines.clear();
  const auto t0 = std::chrono::steady_clock::now();
  const StreamResult stopped = RunShellLines(
      "i=0; while true; do echo $i; i=$((i+1)); sleep 0.01; done", 30, [&](const std::string& l) {
        lines.push_back(l);
        return lines.size() < 3;
      });
  EXPECT_TRUE(stopped.stopped);
  EXPECT_EQ(lines, (std::vector<std::string>{"0", "1", "2"}));
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 10.0);
}

TEST(RunObjectiveCommand, PassesXAndReadsTheLastLine) {
  Eigen::VectorXd x(2);
  x << 0.5, -2;
  // f(x) = x1 + 10 x2 from the arguments, and the same from $ADVBO_X.
  EXPECT_DOUBLE_EQ(
      RunObjectiveCommand("echo noise; awk 'BEGIN{print ARGV[1] + 10 * ARGV[2]}'", "", x, 10),
      -19.5);
  EXPECT_DOUBLE_EQ(
      RunObjectiveCommand("set -- $ADVBO_X; awk -v a=$1 -v b=$2 'BEGIN{print a*b}'; :", "", x, 10),
      -1.0);
  EXPECT_DOUBLE_EQ(RunObjectiveCommand("echo $ADVBO_AGENT; :", "3", x, 10), 3.0);
  for (const char* bad : {"exit 2", "echo not-a-number; :", "kill -KILL $$; :", "sleep 30; :"})
    EXPECT_THROW(RunObjectiveCommand(bad, "", x, 0.5), bo::EvaluationError) << bad;
}

struct Calls {
  std::vector<int> order;
};

void First(int, void* data) { static_cast<Calls*>(data)->order.push_back(1); }
void Second(int, void* data) { static_cast<Calls*>(data)->order.push_back(2); }

TEST(SignalScope, ActionsRunNewestFirstAndTheHandlerGoesWithTheLastScope) {
  Calls calls;
  {
    SignalScope a(First, &calls, SignalScope::Then::kContinue);
    SignalScope b(Second, &calls, SignalScope::Then::kContinue);
    raise(SIGTERM);  // kContinue: the process goes on
    EXPECT_EQ(calls.order, (std::vector<int>{2, 1}));
  }
  // Both scopes gone: the previous (default) disposition is back.
  struct sigaction now {};
  sigaction(SIGTERM, nullptr, &now);
  EXPECT_EQ(now.sa_handler, SIG_DFL);
}

TEST(SignalScope, ADyingScopeEndsTheProcessWithTheSignal) {
  EXPECT_EXIT(
      {
        Calls calls;
        SignalScope s(First, &calls, SignalScope::Then::kDie);
        raise(SIGINT);
      },
      ::testing::KilledBySignal(SIGINT), "");
}

}  // namespace
}  // namespace advbo::process
