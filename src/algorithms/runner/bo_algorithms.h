// The algorithms `advbo bo --algo NAME` runs on one BoSession (the library side of the
// command; the CLI only parses into AlgoArgs): the standard sequential loop
// and the source papers' algorithms built on it (src/algorithms/). Kept apart from the
// command's argument handling so each new algorithm adds one branch here.
#pragma once

#include <Eigen/Dense>
#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "algorithms/rm_gp_ucb/rm_gp_ucb.h"
#include "bo/bo_loop.h"
#include "bo/random.h"

namespace advbo::algorithms {

/// `advbo bo` options of the algorithms beyond the standard loop, with their defaults.
struct AlgoArgs {
  std::string algo = "standard";  ///< standard | hybrid-ei | cl-batch | uhe-bo | rm-gp-ucb |
                                  ///< po-gp-ucb
  int batch_max = 5;              ///< n_b of hybrid-ei / cl-batch (1..256)
  double hybrid_eps = 0.02;       ///< epsilon of hybrid-ei (objective units, >= 0)
  std::string fantasy = "mu";     ///< y^ of hybrid-ei / cl-batch: M ymax ymax+ mu ymin random
  double zeta = 0.1;              ///< margin of the ymax+ fantasy
  std::vector<std::string> meta;  ///< rm-gp-ucb: earlier `advbo bo` JSONL traces
  /// rm-gp-ucb: the meta-tasks read from `meta` (LoadMetaTasks), filled before the run.
  std::vector<MetaTask> meta_tasks;
  /// po-gp-ucb (Kharkovskii et al. 2020): epsilon of Algorithm 1 (> 0, required; NaN = not
  /// given), delta (in (0, 1)), projection dimension r (0 = the largest of 5, 10, ..., 50 with
  /// omega <= sigma_min, Sec. 3.4), delta' of beta_t (in (0, 1)) and the max-norm the records
  /// are normalised to first (Sec. 4; 0 = use them as given).
  double po_epsilon = std::numeric_limits<double>::quiet_NaN();
  /// po-gp-ucb: delta of Algorithm 1, in (0, 1).
  double po_delta = 1e-5;
  /// po-gp-ucb: projection dimension r (0 = chosen by Sec. 3.4's rule).
  int po_r = 0;
  /// po-gp-ucb: delta' of beta_t, in (0, 1).
  double po_delta_prime = 0.025;
  /// po-gp-ucb: max-norm the records are normalised to (0 = as given).
  double po_max_norm = 25;
};

/// Reads each `advbo bo` JSONL trace in `paths` as one RM-GP-UCB meta-task: its successful
/// evaluation records' x [N_i, d] and y [N_i] (Dai 2021 thesis Alg. 7.1, the meta-tasks'
/// observations). Throws std::invalid_argument naming the file when it cannot be read, a line
/// is not JSON, its dimension differs from the box [lb, ub], a point lies outside the box, its
/// goal (min/max) differs from `maximize`, or it holds no successful evaluation.
std::vector<MetaTask> LoadMetaTasks(const std::vector<std::string>& paths,
                                    const Eigen::VectorXd& lb, const Eigen::VectorXd& ub,
                                    bool maximize);

/// The names --algo accepts.
std::vector<std::string> AlgorithmNames();

/// Checks the algorithm options against the loop options before anything runs; throws
/// std::invalid_argument naming the option (unknown --algo, hybrid without --acq ei, uhe-bo
/// without --acq ucb, a bad
/// --batch-max / --hybrid-eps / --fantasy, fantasy M without a known optimum, rm-gp-ucb without
/// --acq ucb or --meta, --meta with another algorithm, po-gp-ucb without --candidates, --acq
/// ucb or a valid --po-epsilon / --po-delta / --po-r / --po-delta-prime / --po-max-norm).
void CheckAlgorithm(const AlgoArgs& a, const bo::BoLoopOptions& opt, double known_optimum);

/// The trace's config fields of a non-standard algorithm (empty object for "standard").
nlohmann::json AlgorithmConfig(const AlgoArgs& a);

/// A finished run: the session's result and algorithm-specific summary fields (batches,
/// speedup, batch sizes for the batch algorithms; empty for "standard").
struct AlgoRun {
  /// The BO session's result.
  bo::BoResult result;
  /// Algorithm-specific summary fields (empty for standard).
  nlohmann::json summary = nlohmann::json::object();
};

/// Runs the algorithm on [lb, ub]. `seed` derives the batch algorithms' second engine;
/// `concurrent` evaluates a batch's points at once (one thread each; external commands);
/// `known_optimum` (objective units, NaN = unknown) feeds the M fantasy.
AlgoRun RunAlgorithm(const AlgoArgs& a, const bo::Objective& objective, const Eigen::VectorXd& lb,
                     const Eigen::VectorXd& ub, const bo::BoLoopOptions& opt, uint64_t seed,
                     bo::Rng& rng, bool concurrent, double known_optimum,
                     const bo::StepCallback& callback);

}  // namespace advbo::algorithms
