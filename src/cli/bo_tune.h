// `advbo bo` on training runs: the HPO tasks (--task, src/algorithms/hpo/) and the epoch-aware
// tuners BO-BOS (Dai 2021 thesis Alg. 4.1) and Hyperband (Li et al. 2017), on a task or on an
// external training command that prints one validation error per epoch.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "algorithms/hpo/hpo_task.h"
#include "algorithms/learning_curve.h"

namespace advbo::cli {

/// `advbo bo` options for training runs, with their defaults.
struct TuneArgs {
  std::string task;       ///< HPO task name (hpo::TaskNames()); "" = none
  std::string task_data;  ///< the task dataset's folder ("" = its default)
  int task_examples = 0;  ///< hpo::TaskOptions::examples (0 = the task's default)
  int task_offset = 0;    ///< hpo::TaskOptions::offset
  std::string task_transform = "none";
  uint64_t task_seed = 0;   ///< training randomness of the task
  int epochs = 0;           ///< N (BO-BOS, --task) / R (Hyperband); 0 = 50 / 80
  int epoch_budget = 1500;  ///< bo-bos / hyperband: total epochs
  double gamma = 0.95;      ///< bo-bos: K_{1,t} = K_{1,t-1} / gamma
  double kappa = 2.0;       ///< bo-bos: C2 factor
  int bos_paths = 100000;   ///< bo-bos: forward-simulation paths
  int warmup = 8;           ///< bo-bos: N0
  double eta = 3.0;         ///< hyperband: successive-halving rate
};

/// Whether --algo names an epoch-aware tuner (bo-bos, hyperband).
bool IsEpochAlgorithm(const std::string& algo);

/// Builds the task of --task with the --task-* options; std::invalid_argument / TaskDataError
/// (naming the file) on bad options or data.
std::shared_ptr<hpo::HpoTask> MakeTuneTask(const TuneArgs& t);

/// Epochs N for a task run by the standard algorithms (--epochs or the task's default).
int TaskEpochs(const TuneArgs& t, const hpo::HpoTask& task);

/// The trace config fields of a task (name, description, parameter names and scales).
nlohmann::json TaskConfig(const TuneArgs& t, const hpo::HpoTask& task);

/// A learning-curve objective from an external command: `CMD x_1 ... x_d` through /bin/sh with
/// $ADVBO_X and $ADVBO_MAX_EPOCHS set, each non-empty stdout line the validation error in
/// [0, 1] of the next epoch. When the tuner stops the run, the command's process group gets
/// SIGTERM. A line that is not a number, a non-zero exit (unless stopped), a signal or the
/// timeout is an error (bo::EvaluationError) naming the problem.
algorithms::CurveObjective CommandCurve(const std::string& command, double timeout_seconds);

/// Everything of `advbo bo` a tuning run needs besides TuneArgs.
struct TuneRun {
  std::string algo, command, bounds, out, beta;
  int dim = 0, max_evaluations = 0;
  uint64_t seed = 0;
  double eval_timeout = 0;
  bool quiet = false;
};

/// Runs --algo bo-bos | hyperband on --task or --command (with --bounds; the box is the
/// search box, log10 units for a task's log-scaled parameters). Writes the JSONL trace (config,
/// one "training" record per trained configuration, summary) and prints a summary. Returns the
/// exit status (0; 2 when a training run failed). Throws std::invalid_argument on bad input
/// before anything runs or is written.
int RunTune(const TuneArgs& t, const TuneRun& r);

}  // namespace advbo::cli
