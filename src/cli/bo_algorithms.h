// The algorithms `advbo bo --algo NAME` runs on one BoSession: the standard sequential loop
// and the source papers' algorithms built on it (src/algorithms/). Kept apart from the
// command's argument handling so each new algorithm adds one branch here.
#pragma once

#include <Eigen/Dense>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bo/bo_loop.h"
#include "bo/random.h"

namespace advbo::cli {

/// `advbo bo` options of the algorithms beyond the standard loop, with their defaults.
struct AlgoArgs {
  std::string algo = "standard";  ///< standard | hybrid-ei | cl-batch | uhe-bo
  int batch_max = 5;              ///< n_b of hybrid-ei / cl-batch (1..256)
  double hybrid_eps = 0.02;       ///< epsilon of hybrid-ei (objective units, >= 0)
  std::string fantasy = "mu";     ///< y^ of hybrid-ei / cl-batch: M ymax ymax+ mu ymin random
  double zeta = 0.1;              ///< margin of the ymax+ fantasy
};

/// The names --algo accepts.
std::vector<std::string> AlgorithmNames();

/// Checks the algorithm options against the loop options before anything runs; throws
/// std::invalid_argument naming the option (unknown --algo, hybrid without --acq ei, uhe-bo
/// without --acq ucb, a bad
/// --batch-max / --hybrid-eps / --fantasy, fantasy M without a known optimum).
void CheckAlgorithm(const AlgoArgs& a, const bo::BoLoopOptions& opt, double known_optimum);

/// The trace's config fields of a non-standard algorithm (empty object for "standard").
nlohmann::json AlgorithmConfig(const AlgoArgs& a);

/// A finished run: the session's result and algorithm-specific summary fields (batches,
/// speedup, batch sizes for the batch algorithms; empty for "standard").
struct AlgoRun {
  bo::BoResult result;
  nlohmann::json summary = nlohmann::json::object();
};

/// Runs the algorithm on [lb, ub]. `seed` derives the batch algorithms' second engine;
/// `concurrent` evaluates a batch's points at once (one thread each; external commands);
/// `known_optimum` (objective units, NaN = unknown) feeds the M fantasy.
AlgoRun RunAlgorithm(const AlgoArgs& a, const bo::Objective& objective, const Eigen::VectorXd& lb,
                     const Eigen::VectorXd& ub, const bo::BoLoopOptions& opt, uint64_t seed,
                     bo::Rng& rng, bool concurrent, double known_optimum,
                     const bo::StepCallback& callback);

}  // namespace advbo::cli
