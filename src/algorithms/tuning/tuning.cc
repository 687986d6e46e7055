#include "algorithms/tuning/tuning.h"

#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "bo/bo_loop.h"
#include "bo/clock.h"

#ifndef ADVBO_SOURCE_DIR
#define ADVBO_SOURCE_DIR "."
#endif

namespace advbo::algorithms {
namespace {

nlohmann::json FiniteOrNull(double v) { return std::isfinite(v) ? nlohmann::json(v) : nullptr; }

std::string Status(double best_error, int runs) {
  char b[96];
  std::snprintf(b, sizeof b, "best error=%.4f runs=%d", best_error, runs);
  return b;
}

nlohmann::json BoBosConfig(const BoBosOptions& o, const TuneOptions& t, const TuneSettings& s) {
  return {{"epochs", o.max_epochs},
          {"warmup", o.warmup_epochs},
          {"gamma", t.gamma},
          {"kappa", t.kappa},
          {"k1_first", o.k1_first},
          {"k2", o.k2},
          {"cost", o.cost},
          {"bos_paths", t.bos_paths},
          {"initial_points", o.initial_points},
          {"beta", s.beta},
          {"intermediate_epochs", o.intermediate_epochs},
          {"max_evaluations", s.max_evaluations}};
}

BoBosOptions CheckedBoBosOptions(const TuneProblem& p, const TuneOptions& t,
                                 const TuneSettings& s) {
  BoBosOptions o;
  o.max_epochs = t.epochs > 0 ? t.epochs : p.task ? p.task->default_epochs() : 50;
  o.warmup_epochs = t.warmup;
  o.gamma = t.gamma;
  o.kappa = t.kappa;
  o.num_paths = t.bos_paths;
  o.epoch_budget = t.epoch_budget;
  o.max_evaluations = s.max_evaluations;
  o.beta = bo::ParseExplorationWeight(s.beta);
  // N is known only now; RunBoBos validates the rest (and t.Validate() the CLI ranges).
  if (o.warmup_epochs >= o.max_epochs)
    throw std::invalid_argument("--warmup must satisfy 2 <= N0 < --epochs");
  o.intermediate_epochs.clear();  // 1, 10, 20, ... below N (App. A.4's 1,10,..,40)
  for (int e = 1; e < o.max_epochs; e = e == 1 ? 10 : e + 10) o.intermediate_epochs.push_back(e);
  return o;
}

// The common fields of a BoBosResult or HyperbandResult.
template <typename Result>
void TakeResult(const Result& res, TuneOutcome* out) {
  out->evaluations = static_cast<int>(res.records.size());
  out->best_error = res.best_error;
  out->best_x = res.best_x;
  out->epochs_used = res.epochs_used;
  out->stop_reason = res.stop_reason;
}

void RunBoBosTune(const TuneProblem& p, const PreparedTune& prep, bo::Rng& rng,
                  bo::JsonlTrace* trace, const TuneProgress& progress, TuneOutcome* out) {
  const auto res = RunBoBos(p.curve, p.lb, p.ub, prep.bo_bos, rng, [&](const BoBosRecord& s) {
    out->early_stopped += s.early_stopped;
    if (trace)
      trace->Write({{"type", "training"},
                    {"evaluation", s.evaluation},
                    {"phase", s.phase},
                    {"bo_iteration", s.bo_iteration},
                    {"x", bo::JsonArray(s.x)},
                    {"params", TaskParams(p.task.get(), s.x)},
                    {"epochs", s.epochs},
                    {"error", s.error},
                    {"curve", s.curve},
                    {"early_stopped", s.early_stopped},
                    {"budget_cut", s.budget_cut},
                    {"k1", FiniteOrNull(s.k1)},
                    {"threshold", FiniteOrNull(s.threshold)},
                    {"prior_success", FiniteOrNull(s.prior_success)},
                    {"beta", FiniteOrNull(s.beta)},
                    {"epochs_total", s.epochs_total},
                    {"best_error", s.best_error},
                    {"seconds_train", s.seconds_train},
                    {"seconds_bo", s.seconds_bo}});
    if (progress)
      progress(s.epochs_total, Status(s.best_error, s.evaluation) +
                                   " stopped=" + std::to_string(out->early_stopped));
    return true;
  });
  TakeResult(res, out);
}

void RunHyperbandTune(const TuneProblem& p, const PreparedTune& prep, bo::Rng& rng,
                      bo::JsonlTrace* trace, const TuneProgress& progress, TuneOutcome* out) {
  const auto res =
      RunHyperband(p.curve, p.lb, p.ub, prep.hyperband, rng, [&](const HyperbandRecord& s) {
        if (trace)
          trace->Write({{"type", "training"},
                        {"evaluation", s.evaluation},
                        {"round", s.round},
                        {"bracket", s.bracket},
                        {"rung", s.rung},
                        {"config", s.config},
                        {"x", bo::JsonArray(s.x)},
                        {"params", TaskParams(p.task.get(), s.x)},
                        {"epochs", s.epochs},
                        {"epochs_charged", s.epochs_charged},
                        {"error", s.error},
                        {"epochs_total", s.epochs_total},
                        {"best_error", s.best_error},
                        {"seconds_train", s.seconds_train}});
        if (progress) progress(s.epochs_total, Status(s.best_error, s.evaluation));
        return true;
      });
  TakeResult(res, out);
}

}  // namespace

bool IsEpochAlgorithm(const std::string& algo) { return algo == "bo-bos" || algo == "hyperband"; }

std::shared_ptr<hpo::HpoTask> MakeTuneTask(const TuneOptions& t) {
  t.Validate();
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

int TaskEpochs(const TuneOptions& t, const hpo::HpoTask& task) {
  return t.epochs > 0 ? t.epochs : task.default_epochs();
}

nlohmann::json TaskConfig(const TuneOptions& t, const hpo::HpoTask& task) {
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

nlohmann::json TaskParams(const hpo::HpoTask* task, const Eigen::VectorXd& z) {
  if (!task) return nullptr;
  const Eigen::VectorXd x = task->ToNatural(z);
  nlohmann::json p = nlohmann::json::object();
  for (int i = 0; i < task->dim(); ++i) p[task->params()[i].name] = x(i);
  return p;
}

TuneProblem TaskProblem(const TuneOptions& t) {
  TuneProblem p;
  p.task = MakeTuneTask(t);
  p.lb = p.task->SearchLower();
  p.ub = p.task->SearchUpper();
  p.curve = [task = p.task](const Eigen::VectorXd& z, int max_epochs, const EpochReport& rep) {
    task->Evaluate(task->ToNatural(z), max_epochs, rep);
  };
  return p;
}

void TuneOptions::Validate() const {
  auto bad = [](const std::string& m) { throw std::invalid_argument(m); };
  if (task_examples < 0 || task_offset < 0) bad("--task-examples and --task-offset must be >= 0");
  if (epochs < 0) bad("--epochs must be >= 0 (0 = the default)");
  if (epoch_budget < 1) bad("--epoch-budget must be >= 1");
  if (!(gamma > 0 && gamma <= 1)) bad("--gamma must be in (0, 1]");
  if (!(kappa >= 1) || !std::isfinite(kappa)) bad("--kappa must be a finite value >= 1");
  if (bos_paths < 100) bad("--bos-paths must be >= 100");
  if (warmup < 2) bad("--warmup must satisfy 2 <= N0 < --epochs");
  if (!(eta > 1) || !std::isfinite(eta)) bad("--eta must be > 1");
}

PreparedTune PrepareTune(const TuneProblem& p, const TuneOptions& t, const TuneSettings& s) {
  t.Validate();
  PreparedTune prep;
  prep.config = {
      {"type", "config"},
      {"algo", s.algo},
      {"objective", p.task ? p.task->name() : "command"},
      {"command", p.command.empty() ? nlohmann::json(nullptr) : nlohmann::json(p.command)},
      {"dim", p.lb.size()},
      {"lb", bo::JsonArray(p.lb)},
      {"ub", bo::JsonArray(p.ub)},
      {"goal", "min"},
      {"metric", "validation error"},
      {"epoch_budget", t.epoch_budget},
      {"seed", s.seed}};
  if (p.task) prep.config.update(TaskConfig(t, *p.task));
  if (s.algo == "bo-bos") {
    prep.bo_bos = CheckedBoBosOptions(p, t, s);
    prep.config.update(BoBosConfig(prep.bo_bos, t, s));
  } else if (s.algo == "hyperband") {
    prep.hyperband.max_epochs = t.epochs > 0 ? t.epochs : 80;
    prep.hyperband.eta = t.eta;
    prep.hyperband.epoch_budget = t.epoch_budget;
    prep.config.update({{"max_epochs_R", prep.hyperband.max_epochs},
                        {"eta", t.eta},
                        {"resume", prep.hyperband.resume}});
  } else {
    throw std::invalid_argument("--algo " + s.algo + " is not an epoch-aware tuner");
  }
  return prep;
}

TuneOutcome RunTune(const TuneProblem& p, const TuneSettings& s, const PreparedTune& prep,
                    bo::JsonlTrace* trace, const TuneProgress& progress) {
  bo::Rng rng(s.seed);
  const auto t0 = bo::Clock::now();
  TuneOutcome out;
  try {
    if (s.algo == "bo-bos")
      RunBoBosTune(p, prep, rng, trace, progress, &out);
    else
      RunHyperbandTune(p, prep, rng, trace, progress, &out);
  } catch (const bo::EvaluationError& e) {
    out.failure = e.what();
    out.stop_reason = "evaluation failed";
  }
  out.seconds = bo::SecondsSince(t0);
  if (trace)
    trace->Write(
        {{"type", "summary"},
         {"algo", s.algo},
         {"evaluations", out.evaluations},
         {"early_stopped", out.early_stopped},
         {"epochs_used", out.epochs_used},
         {"best_x", out.best_x.size() ? bo::JsonArray(out.best_x) : nlohmann::json(nullptr)},
         {"best_params", out.best_x.size() ? TaskParams(p.task.get(), out.best_x) : nullptr},
         {"best_error", FiniteOrNull(out.best_error)},
         {"stop_reason", out.stop_reason},
         {"error", out.failure.empty() ? nlohmann::json(nullptr) : nlohmann::json(out.failure)},
         {"seconds_total", out.seconds},
         {"seed", s.seed}});
  return out;
}

}  // namespace advbo::algorithms
