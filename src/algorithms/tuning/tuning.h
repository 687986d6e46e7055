// Epoch-aware hyperparameter tuning runs: BO-BOS (Dai 2021 thesis Alg. 4.1) and Hyperband
// (Li et al. 2017) on an HPO task (src/algorithms/hpo/) or on any learning-curve objective,
// with a JSONL trace (config, one "training" record per trained configuration, summary).
// `advbo bo --algo bo-bos|hyperband` parses into these options and prints the outcome.
#pragma once

#include <Eigen/Dense>
#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "algorithms/bo_bos/bo_bos.h"
#include "algorithms/hpo/hpo_task.h"
#include "algorithms/hyperband/hyperband.h"
#include "algorithms/learning_curve.h"
#include "bo/trace.h"

namespace advbo::algorithms {

/// Tuner and task options (the CLI's --task-*, --epochs, --epoch-budget, BO-BOS and
/// Hyperband options), with their defaults.
struct TuneOptions {
  std::string task;       ///< HPO task name (hpo::TaskNames()); "" = none
  std::string task_data;  ///< the task dataset's folder ("" = the shipped sample)
  int task_examples = 0;  ///< hpo::TaskOptions::examples (0 = the task's default)
  int task_offset = 0;    ///< hpo::TaskOptions::offset
  /// hpo::TaskOptions::transform (none, invert-noise or grey).
  std::string task_transform = "none";
  uint64_t task_seed = 0;   ///< training randomness of the task
  int epochs = 0;           ///< N (BO-BOS, --task) / R (Hyperband); 0 = task default / 50 / 80
  int epoch_budget = 1500;  ///< bo-bos / hyperband: total epochs, >= 1
  double gamma = 0.95;      ///< bo-bos: K_{1,t} = K_{1,t-1} / gamma, in (0, 1]
  double kappa = 2.0;       ///< bo-bos: C2 factor, finite >= 1
  int bos_paths = 100000;   ///< bo-bos: forward-simulation paths, >= 100
  int warmup = 8;           ///< bo-bos: N0, 2 <= N0 < N
  double eta = 3.0;         ///< hyperband: successive-halving rate, > 1
  /// Throws std::invalid_argument naming the CLI option of the first value out of its range
  /// above (2 <= warmup < epochs is checked once N is known, by PrepareTune).
  void Validate() const;
};

/// Whether `algo` names an epoch-aware tuner (bo-bos, hyperband).
bool IsEpochAlgorithm(const std::string& algo);

/// Builds the task of t.task with the task options; the shipped data/ samples when
/// t.task_data is empty. Throws std::invalid_argument naming --task and the data problem.
std::shared_ptr<hpo::HpoTask> MakeTuneTask(const TuneOptions& t);

/// Epochs N for a task run by the standard algorithms (t.epochs or the task's default).
int TaskEpochs(const TuneOptions& t, const hpo::HpoTask& task);

/// The trace config fields of a task (name, description, parameter names and scales).
nlohmann::json TaskConfig(const TuneOptions& t, const hpo::HpoTask& task);

/// What is tuned: a task (its own search box, log10 units for log-scaled parameters) or a
/// learning-curve objective (e.g. an external training command) on the box [lb, ub].
struct TuneProblem {
  std::shared_ptr<hpo::HpoTask> task;  ///< null for a curve objective
  std::string command;                 ///< the objective's command line, for the trace ("")
  CurveObjective curve;                ///< each epoch's validation error in [0, 1]
  /// Search box [d]: lower and upper bounds.
  ///@{
  Eigen::VectorXd lb, ub;  ///< search box [d]
  ///@}
};

/// A task's problem: MakeTuneTask, its search box and its learning curve.
TuneProblem TaskProblem(const TuneOptions& t);

/// The run's algorithm and the settings shared with the other BO algorithms.
struct TuneSettings {
  std::string algo = "bo-bos";  ///< bo-bos | hyperband
  /// BO-BOS's GP-UCB exploration weight (bo::ParseExplorationWeight; `advbo bo --beta`).
  std::string beta = "kandasamy2015";
  int max_evaluations = 0;  ///< BO-BOS: stop after this many trainings (0 = epoch budget only)
  uint64_t seed = 0;        ///< run seed
};

/// The validated tuner options and the trace's config record.
struct PreparedTune {
  /// BO-BOS's options.
  BoBosOptions bo_bos;
  /// Hyperband's options.
  HyperbandOptions hyperband;
  /// The trace's config record.
  nlohmann::json config;
};

/// Checks every option before anything runs (std::invalid_argument naming the option) and
/// builds the tuner options and the config record.
PreparedTune PrepareTune(const TuneProblem& p, const TuneOptions& t, const TuneSettings& s);

/// What a tuning run found.
struct TuneOutcome {
  /// Configurations trained, those stopped early by BO-BOS, and the epochs spent.
  ///@{
  int evaluations = 0, early_stopped = 0, epochs_used = 0;
  ///@}
  double best_error = NAN;  ///< NaN if nothing finished
  Eigen::VectorXd best_x;   ///< [d] in search units, empty if nothing finished
  /// Why the run ended (epoch budget, evaluations, failure).
  std::string stop_reason;
  std::string failure;  ///< "" or the first training failure (the run then stopped)
  /// Wall seconds of the run.
  double seconds = 0;
};

/// Called after every trained configuration: epochs used so far and a one-line status.
using TuneProgress = std::function<void(int epochs_total, const std::string& status)>;

/// Runs the tuner of `s.algo` on `p`: writes one "training" record per trained configuration
/// and the summary to `trace` (may be null; not committed here), reports progress. A failing
/// training run (bo::EvaluationError) ends the run; it is reported in TuneOutcome::failure.
TuneOutcome RunTune(const TuneProblem& p, const TuneSettings& s, const PreparedTune& prep,
                    bo::JsonlTrace* trace, const TuneProgress& progress);

/// The task's named hyperparameters of a search point z [d] ({name: value}); null without a
/// task.
nlohmann::json TaskParams(const hpo::HpoTask* task, const Eigen::VectorXd& z);

}  // namespace advbo::algorithms
