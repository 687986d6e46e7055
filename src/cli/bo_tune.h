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
#include "algorithms/tuning/tuning.h"

namespace advbo::cli {

/// `advbo bo` options for training runs (task, epochs, BO-BOS and Hyperband settings).
using TuneArgs = algorithms::TuneOptions;
using algorithms::IsEpochAlgorithm;
using algorithms::MakeTuneTask;
using algorithms::TaskConfig;
using algorithms::TaskEpochs;

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

/// Runs --algo bo-bos | hyperband (algorithms::RunTune) on --task or --command (with --bounds;
/// the box is the search box, log10 units for a task's log-scaled parameters). Writes the
/// JSONL trace (config, one "training" record per trained configuration, summary) and prints
/// a summary. Returns the exit status (0; 2 when a training run failed). Throws
/// std::invalid_argument on bad input before anything runs or is written.
int RunTune(const TuneArgs& t, const TuneRun& r);

}  // namespace advbo::cli
