#include "cli/bo_tune.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#include "bo/bo_loop.h"
#include "bo/clock.h"
#include "bo/trace.h"
#include "cli/format.h"
#include "cli/parse.h"
#include "cli/progress.h"
#include "process/subprocess.h"
#include "text/numbers.h"

namespace advbo::cli {
namespace {

std::string Args(const Eigen::VectorXd& x) { return text::JoinG(x.data(), x.size(), " "); }

std::string G(double v) { return text::FormatG(v, 4); }

void PrintTuneSummary(const TuneArgs& t, const TuneRun& r, const algorithms::TuneProblem& p,
                      const algorithms::PreparedTune& prep, const algorithms::TuneOutcome& o) {
  const bool bobos = r.algo == "bo-bos";
  if (!o.failure.empty())
    std::fprintf(stderr, "advbo bo: training run failed: %s\n", o.failure.c_str());
  std::printf("\n%-22s %s\n", "objective", p.task ? p.task->name().c_str() : r.command.c_str());
  std::printf(
      "%-22s %s, seed %llu\n", "tuner",
      bobos ? ("BO-BOS (gamma " + Fmt(t.gamma, 2) + ", kappa " + Fmt(t.kappa, 1) + ")").c_str()
            : ("Hyperband (eta " + Fmt(t.eta, 1) + ", R " +
               std::to_string(prep.hyperband.max_epochs) + ")")
                  .c_str(),
      static_cast<unsigned long long>(r.seed));
  std::printf("%-22s %d of %d epochs, %d training runs", "budget", o.epochs_used, t.epoch_budget,
              o.evaluations);
  if (bobos) std::printf(" (%d early-stopped)", o.early_stopped);
  std::printf(", stopped by %s\n", o.stop_reason.c_str());
  std::printf("%-22s %s\n", "best validation error", Fmt(o.best_error, 4).c_str());
  if (o.best_x.size()) {
    std::string s;
    if (p.task) {
      const Eigen::VectorXd x = p.task->ToNatural(o.best_x);
      for (int i = 0; i < p.task->dim(); ++i)
        s += (i ? ", " : "") + p.task->params()[i].name + "=" + G(x(i));
    } else {
      s = Args(o.best_x);
    }
    std::printf("%-22s %s\n", "best hyperparameters", s.c_str());
  }
  std::printf("%-22s %s s\n", "time", Fmt(o.seconds, 1).c_str());
  if (!r.out.empty()) std::printf("%-22s %s\n", "trace", r.out.c_str());
}

}  // namespace

algorithms::CurveObjective CommandCurve(const std::string& command, double timeout_seconds) {
  return [command, timeout_seconds](const Eigen::VectorXd& x, int max_epochs,
                                    const algorithms::EpochReport& report) {
    const std::string full = "export ADVBO_X=" + process::ShellQuote(Args(x)) +
                             " ADVBO_MAX_EPOCHS=" + std::to_string(max_epochs) + "; " + command +
                             " " + Args(x);
    int epoch = 0;
    process::StreamResult res;
    try {
      res = process::RunShellLines(full, timeout_seconds, [&](const std::string& line) {
        if (line.find_first_not_of(" \t\r") == std::string::npos) return true;
        const char* s = line.c_str();
        char* end = nullptr;
        const double v = std::strtod(s, &end);
        while (end && (*end == ' ' || *end == '\t' || *end == '\r')) ++end;
        if (end == s || (end && *end != '\0'))
          throw bo::EvaluationError("training command printed '" + line.substr(0, 60) +
                                    "' for epoch " + std::to_string(epoch + 1) +
                                    ", not a validation error");
        if (!(v >= 0 && v <= 1))
          throw bo::EvaluationError("training command printed " + line.substr(0, 30) +
                                    " for epoch " + std::to_string(epoch + 1) +
                                    ": a validation error must lie in [0, 1]");
        return report(++epoch, v) && epoch < max_epochs;
      });
    } catch (const process::ShellTimeout& e) {
      throw bo::EvaluationError(e.what());
    }
    if (res.stopped) return;
    if (res.exit_status < 0)
      throw bo::EvaluationError("training command killed by signal " + std::to_string(res.signal));
    if (res.exit_status != 0)
      throw bo::EvaluationError("training command exited with status " +
                                std::to_string(res.exit_status));
    if (epoch == 0) throw bo::EvaluationError("training command printed no validation error");
  };
}

int RunTune(const TuneArgs& t, const TuneRun& r) {
  // ---- Validate everything before anything runs or is written.
  if (t.task.empty() == r.command.empty())
    throw std::invalid_argument("--algo " + r.algo +
                                " needs exactly one of --task NAME or "
                                "--command CMD (a training script printing one validation "
                                "error per epoch)");
  algorithms::TuneProblem p;
  if (!t.task.empty()) {
    if (!r.bounds.empty())
      throw std::invalid_argument("--bounds is for --command; a --task has its own search box");
    p = algorithms::TaskProblem(t);
  } else {
    if (r.bounds.empty()) throw std::invalid_argument("--command needs --bounds LO:HI[,LO:HI...]");
    ParseBounds(r.bounds, r.dim, &p.lb, &p.ub);
    p.curve = CommandCurve(r.command, r.eval_timeout);
    p.command = r.command;
  }
  algorithms::TuneSettings s;
  s.algo = r.algo;
  s.beta = r.beta;
  s.max_evaluations = r.max_evaluations;
  s.seed = r.seed;
  const algorithms::PreparedTune prep = algorithms::PrepareTune(p, t, s);
  // ---- Run.
  std::unique_ptr<bo::JsonlTrace> trace;
  if (!r.out.empty()) {
    trace = std::make_unique<bo::JsonlTrace>(r.out);
    trace->Write(prep.config);
  }
  if (p.task && !r.quiet) std::fprintf(stderr, "%s\n", p.task->Describe().c_str());
  ProgressBar bar(t.epoch_budget, !r.quiet);
  const algorithms::TuneOutcome o = algorithms::RunTune(
      p, s, prep, trace.get(),
      [&bar](int epochs, const std::string& status) { bar.Update(epochs, status, true); });
  bar.Finish();
  if (trace) trace->Commit();
  PrintTuneSummary(t, r, p, prep, o);
  return o.failure.empty() && o.best_x.size() ? 0 : 2;
}

}  // namespace advbo::cli
