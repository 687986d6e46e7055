#include "cli/bo_tune.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#include "algorithms/bo_bos/bo_bos.h"
#include "algorithms/hyperband/hyperband.h"
#include "bo/bo_loop.h"
#include "bo/clock.h"
#include "bo/trace.h"
#include "cli/format.h"
#include "cli/parse.h"
#include "cli/progress.h"
#include "cli/subprocess.h"

namespace advbo::cli {
namespace {

std::string Args(const Eigen::VectorXd& x, const char* sep) {
  std::string s;
  char b[40];
  for (Eigen::Index i = 0; i < x.size(); ++i) {
    std::snprintf(b, sizeof(b), "%s%.17g", i ? sep : "", x(i));
    s += b;
  }
  return s;
}

std::string G(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.4g", v);
  return b;
}

nlohmann::json Params(const hpo::HpoTask* task, const Eigen::VectorXd& z) {
  if (!task) return nullptr;
  const Eigen::VectorXd x = task->ToNatural(z);
  nlohmann::json p = nlohmann::json::object();
  for (int i = 0; i < task->dim(); ++i) p[task->params()[i].name] = x(i);
  return p;
}

}  // namespace

bool IsEpochAlgorithm(const std::string& algo) { return algo == "bo-bos" || algo == "hyperband"; }

std::shared_ptr<hpo::HpoTask> MakeTuneTask(const TuneArgs& t) {
  hpo::TaskOptions o;
  o.seed = t.task_seed;
  o.examples = t.task_examples;
  o.offset = t.task_offset;
  o.transform = t.task_transform;
  if (!t.task_data.empty()) {
    const std::string dataset = t.task.substr(0, t.task.find('-'));
    if (dataset == "mnist") o.mnist_dir = t.task_data;
    if (dataset == "fashion") o.fashion_dir = t.task_data;
    if (dataset == "cifar10") o.cifar10_dir = t.task_data;
  } else {
    // The shipped samples, wherever advbo is run from.
    o.mnist_dir = std::string(ADVBO_SOURCE_DIR) + "/data/mnist";
    o.cifar10_dir = std::string(ADVBO_SOURCE_DIR) + "/data/cifar10";
  }
  try {
    return std::shared_ptr<hpo::HpoTask>(hpo::MakeTask(t.task, o));
  } catch (const hpo::TaskDataError& e) {
    throw std::invalid_argument(std::string("--task ") + t.task + ": " + e.what());
  }
}

int TaskEpochs(const TuneArgs& t, const hpo::HpoTask& task) {
  return t.epochs > 0 ? t.epochs : task.default_epochs();
}

nlohmann::json TaskConfig(const TuneArgs& t, const hpo::HpoTask& task) {
  nlohmann::json names = nlohmann::json::array(), scales = nlohmann::json::array();
  for (const auto& p : task.params()) {
    names.push_back(p.name);
    scales.push_back(p.log_scale ? "log10" : "linear");
  }
  return {{"task", task.name()},
          {"task_description", task.Describe()},
          {"task_seed", t.task_seed},
          {"task_examples", t.task_examples},
          {"task_offset", t.task_offset},
          {"task_transform", t.task_transform},
          {"params", names},
          {"param_scales", scales}};
}

algorithms::CurveObjective CommandCurve(const std::string& command, double timeout_seconds) {
  return [command, timeout_seconds](const Eigen::VectorXd& x, int max_epochs,
                                    const algorithms::EpochReport& report) {
    const std::string full = "export ADVBO_X=" + ShellQuote(Args(x, " ")) +
                             " ADVBO_MAX_EPOCHS=" + std::to_string(max_epochs) + "; " + command +
                             " " + Args(x, " ");
    int epoch = 0;
    StreamResult res;
    try {
      res = RunShellLines(full, timeout_seconds, [&](const std::string& line) {
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
    } catch (const ShellTimeout& e) {
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
  if (t.epoch_budget < 1) throw std::invalid_argument("--epoch-budget must be >= 1");
  std::shared_ptr<hpo::HpoTask> task;
  Eigen::VectorXd lb, ub;
  algorithms::CurveObjective curve;
  if (!t.task.empty()) {
    if (!r.bounds.empty())
      throw std::invalid_argument("--bounds is for --command; a --task has its own search box");
    task = MakeTuneTask(t);
    lb = task->SearchLower();
    ub = task->SearchUpper();
    curve = [task](const Eigen::VectorXd& z, int max_epochs, const algorithms::EpochReport& rep) {
      task->Evaluate(task->ToNatural(z), max_epochs, rep);
    };
  } else {
    if (r.bounds.empty()) throw std::invalid_argument("--command needs --bounds LO:HI[,LO:HI...]");
    ParseBounds(r.bounds, r.dim, &lb, &ub);
    curve = CommandCurve(r.command, r.eval_timeout);
  }
  const bool bobos = r.algo == "bo-bos";
  algorithms::BoBosOptions bo_opt;
  algorithms::HyperbandOptions hb_opt;
  nlohmann::json cfg = {
      {"type", "config"},
      {"algo", r.algo},
      {"objective", task ? task->name() : "command"},
      {"command", r.command.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.command)},
      {"dim", lb.size()},
      {"lb", bo::JsonArray(lb)},
      {"ub", bo::JsonArray(ub)},
      {"goal", "min"},
      {"metric", "validation error"},
      {"epoch_budget", t.epoch_budget},
      {"seed", r.seed}};
  if (task) cfg.update(TaskConfig(t, *task));
  if (bobos) {
    bo_opt.max_epochs = t.epochs > 0 ? t.epochs : task ? task->default_epochs() : 50;
    bo_opt.warmup_epochs = t.warmup;
    bo_opt.gamma = t.gamma;
    bo_opt.kappa = t.kappa;
    bo_opt.num_paths = t.bos_paths;
    bo_opt.epoch_budget = t.epoch_budget;
    bo_opt.max_evaluations = r.max_evaluations;
    bo_opt.beta = bo::ParseExplorationWeight(r.beta);
    // RunBoBos validates the rest; check here too so nothing is written on bad input.
    if (bo_opt.warmup_epochs < 2 || bo_opt.warmup_epochs >= bo_opt.max_epochs)
      throw std::invalid_argument("--warmup must satisfy 2 <= N0 < --epochs");
    if (!(t.gamma > 0 && t.gamma <= 1)) throw std::invalid_argument("--gamma must be in (0, 1]");
    if (!(t.kappa >= 1) || !std::isfinite(t.kappa))
      throw std::invalid_argument("--kappa must be a finite value >= 1");
    if (t.bos_paths < 100) throw std::invalid_argument("--bos-paths must be >= 100");
    bo_opt.intermediate_epochs.clear();  // 1, 10, 20, ... below N (App. A.4's 1,10,..,40)
    for (int e = 1; e < bo_opt.max_epochs; e = e == 1 ? 10 : e + 10)
      bo_opt.intermediate_epochs.push_back(e);
    cfg.update({{"epochs", bo_opt.max_epochs},
                {"warmup", bo_opt.warmup_epochs},
                {"gamma", t.gamma},
                {"kappa", t.kappa},
                {"k1_first", bo_opt.k1_first},
                {"k2", bo_opt.k2},
                {"cost", bo_opt.cost},
                {"bos_paths", t.bos_paths},
                {"initial_points", bo_opt.initial_points},
                {"beta", r.beta},
                {"intermediate_epochs", bo_opt.intermediate_epochs},
                {"max_evaluations", r.max_evaluations}});
  } else {
    hb_opt.max_epochs = t.epochs > 0 ? t.epochs : 80;
    hb_opt.eta = t.eta;
    hb_opt.epoch_budget = t.epoch_budget;
    if (!(t.eta > 1) || !std::isfinite(t.eta)) throw std::invalid_argument("--eta must be > 1");
    cfg.update({{"max_epochs_R", hb_opt.max_epochs}, {"eta", t.eta}, {"resume", hb_opt.resume}});
  }
  std::unique_ptr<bo::JsonlTrace> trace;
  if (!r.out.empty()) {
    trace = std::make_unique<bo::JsonlTrace>(r.out);
    trace->Write(cfg);
  }
  if (task && !r.quiet) std::fprintf(stderr, "%s\n", task->Describe().c_str());

  ProgressBar bar(t.epoch_budget, !r.quiet);
  bo::Rng rng(r.seed);
  const auto t0 = bo::Clock::now();
  int early = 0, evaluations = 0;
  double best_error = NAN;
  Eigen::VectorXd best_x;
  int epochs_used = 0;
  std::string stop_reason, failure;
  auto take = [&](const auto& res) {  // BoBosResult or HyperbandResult
    evaluations = static_cast<int>(res.records.size());
    best_error = res.best_error;
    best_x = res.best_x;
    epochs_used = res.epochs_used;
    stop_reason = res.stop_reason;
  };
  try {
    if (bobos) {
      const auto res =
          algorithms::RunBoBos(curve, lb, ub, bo_opt, rng, [&](const algorithms::BoBosRecord& s) {
            early += s.early_stopped;
            if (trace)
              trace->Write(
                  {{"type", "training"},
                   {"evaluation", s.evaluation},
                   {"phase", s.phase},
                   {"bo_iteration", s.bo_iteration},
                   {"x", bo::JsonArray(s.x)},
                   {"params", Params(task.get(), s.x)},
                   {"epochs", s.epochs},
                   {"error", s.error},
                   {"curve", s.curve},
                   {"early_stopped", s.early_stopped},
                   {"budget_cut", s.budget_cut},
                   {"k1", std::isfinite(s.k1) ? nlohmann::json(s.k1) : nullptr},
                   {"threshold",
                    std::isfinite(s.threshold) ? nlohmann::json(s.threshold) : nullptr},
                   {"prior_success",
                    std::isfinite(s.prior_success) ? nlohmann::json(s.prior_success) : nullptr},
                   {"beta", std::isfinite(s.beta) ? nlohmann::json(s.beta) : nullptr},
                   {"epochs_total", s.epochs_total},
                   {"best_error", s.best_error},
                   {"seconds_train", s.seconds_train},
                   {"seconds_bo", s.seconds_bo}});
            bar.Update(s.epochs_total,
                       "best error=" + Fmt(s.best_error, 4) + " runs=" +
                           std::to_string(s.evaluation) + " stopped=" + std::to_string(early),
                       true);
            return true;
          });
      take(res);
    } else {
      const auto res = algorithms::RunHyperband(
          curve, lb, ub, hb_opt, rng, [&](const algorithms::HyperbandRecord& s) {
            if (trace)
              trace->Write({{"type", "training"},
                            {"evaluation", s.evaluation},
                            {"round", s.round},
                            {"bracket", s.bracket},
                            {"rung", s.rung},
                            {"config", s.config},
                            {"x", bo::JsonArray(s.x)},
                            {"params", Params(task.get(), s.x)},
                            {"epochs", s.epochs},
                            {"epochs_charged", s.epochs_charged},
                            {"error", s.error},
                            {"epochs_total", s.epochs_total},
                            {"best_error", s.best_error},
                            {"seconds_train", s.seconds_train}});
            bar.Update(
                s.epochs_total,
                "best error=" + Fmt(s.best_error, 4) + " runs=" + std::to_string(s.evaluation),
                true);
            return true;
          });
      take(res);
    }
  } catch (const bo::EvaluationError& e) {
    failure = e.what();
    stop_reason = "evaluation failed";
  }
  bar.Finish();
  const double seconds = bo::SecondsSince(t0);
  if (trace) {
    trace->Write({{"type", "summary"},
                  {"algo", r.algo},
                  {"evaluations", evaluations},
                  {"early_stopped", early},
                  {"epochs_used", epochs_used},
                  {"best_x", best_x.size() ? bo::JsonArray(best_x) : nlohmann::json(nullptr)},
                  {"best_params", best_x.size() ? Params(task.get(), best_x) : nullptr},
                  {"best_error", std::isfinite(best_error) ? nlohmann::json(best_error) : nullptr},
                  {"stop_reason", stop_reason},
                  {"error", failure.empty() ? nlohmann::json(nullptr) : nlohmann::json(failure)},
                  {"seconds_total", seconds},
                  {"seed", r.seed}});
    trace->Commit();
  }
  if (!failure.empty())
    std::fprintf(stderr, "advbo bo: training run failed: %s\n", failure.c_str());
  std::printf("\n%-22s %s\n", "objective", task ? task->name().c_str() : r.command.c_str());
  std::printf(
      "%-22s %s, seed %llu\n", "tuner",
      bobos ? ("BO-BOS (gamma " + Fmt(t.gamma, 2) + ", kappa " + Fmt(t.kappa, 1) + ")").c_str()
            : ("Hyperband (eta " + Fmt(t.eta, 1) + ", R " + std::to_string(hb_opt.max_epochs) + ")")
                  .c_str(),
      static_cast<unsigned long long>(r.seed));
  std::printf("%-22s %d of %d epochs, %d training runs", "budget", epochs_used, t.epoch_budget,
              evaluations);
  if (bobos) std::printf(" (%d early-stopped)", early);
  std::printf(", stopped by %s\n", stop_reason.c_str());
  std::printf("%-22s %s\n", "best validation error", Fmt(best_error, 4).c_str());
  if (best_x.size()) {
    std::string p;
    if (task) {
      const Eigen::VectorXd x = task->ToNatural(best_x);
      for (int i = 0; i < task->dim(); ++i)
        p += (i ? ", " : "") + task->params()[i].name + "=" + G(x(i));
    } else {
      p = Args(best_x, " ");
    }
    std::printf("%-22s %s\n", "best hyperparameters", p.c_str());
  }
  std::printf("%-22s %s s\n", "time", Fmt(seconds, 1).c_str());
  if (!r.out.empty()) std::printf("%-22s %s\n", "trace", r.out.c_str());
  return failure.empty() && best_x.size() ? 0 : 2;
}

}  // namespace advbo::cli
