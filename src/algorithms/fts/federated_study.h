// A federated BO study (Dai 2021 thesis Sec. 5.5 / 6.5): N agents with their own objectives
// over one finite domain run RunFederated (standard TS, FTS or DP-FTS-DE) in lock-step, and the
// study tracks every agent's best noise-free value per round: the mean simple regret over
// agents (or the mean best value when the maxima are unknown) and its standard error.
// `advbo fbo` builds a family, runs the study and writes its files.
#pragma once

#include <Eigen/Dense>
#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "algorithms/fts/federated.h"

namespace advbo::algorithms {

/// The agents' objectives on a shared finite domain. `evaluate` may keep state (the
/// synthetic family's noise engines advance), so each run builds its own family.
struct AgentFamily {
  std::string description;                         ///< one line for tables
  Eigen::MatrixXd x;                               ///< domain [K, d], points in [0, 1]^d
  std::function<double(int, int)> evaluate;        ///< (agent n, row i): noisy output, maximised
  std::function<double(int, int)> truth;           ///< (agent n, row i): noise-free output
  std::vector<double> maximum;                     ///< [N] each agent's max; empty = unknown
  std::string best_label = "mean best objective";  ///< metric name without a known maximum
  double report_sign = 1;                          ///< reported value = sign x best objective
  nlohmann::json config;                           ///< the family's settings for summaries
};

/// Settings of the built-in families.
struct FamilyOptions {
  int agents = 200;           ///< N >= 1
  int domain = 0;             ///< domain size K (0 = 1,000 synthetic, 900 = 30 x 30 mnist-lssvm)
  uint64_t seed = 0;          ///< the family's draws derive from it
  double lengthscale = 0.03;  ///< synthetic: SE lengthscale of the GP draw, > 0
  double gap = 0.02;          ///< synthetic: each agent's +- offset per point, >= 0
  double noise = 0.01;        ///< synthetic: observation noise variance, > 0
  std::string mnist_dir = "data/mnist";  ///< mnist-lssvm: the MNIST IDX folder
  /// Throws std::invalid_argument naming the CLI option (--agents, --domain, --lengthscale,
  /// --gap, --noise) of the first value out of its range above.
  void Validate() const;
};

/// The synthetic family of Sec. 5.5.1 / 6.5.1: f ~ GP (SE, lengthscale l) on a K-point grid of
/// [0, 1], scaled into [0, 1]; agent n's objective f(x) + gap or f(x) - gap per point (a fair
/// coin each); observations with N(0, noise) noise. Maxima known.
std::unique_ptr<AgentFamily> SyntheticFamily(const FamilyOptions& o);

/// A real-data family: agent n tunes an RBF LS-SVM (C, lengthscale) on its own 500-image slice
/// of the MNIST pool; every fourth agent's images are inverted with pixel noise. Domain: a
/// side x side grid of the unit square (side = round(sqrt(K)), default 30) mapped to the
/// task's log10 search box; objective -(validation error) after 50 CG iterations,
/// deterministic per (agent, point). Throws hpo::TaskDataError naming a missing file.
std::unique_ptr<AgentFamily> MnistLssvmFamily(const FamilyOptions& o);

/// Per-round results of a study (round 0 = initialisation).
struct StudyCurves {
  std::vector<double> mean;  ///< [T + 1] mean simple regret (or report_sign x mean best)
  std::vector<double> se;    ///< [T + 1] its standard error over agents
  long clipped = 0;          ///< DP-FTS-DE: vectors clipped over all rounds
  long selected = 0;         ///< DP-FTS-DE: vectors selected by the server over all rounds
  double seconds = 0;        ///< wall time of the loop
};

/// Runs RunFederated(family.x, agents, family.evaluate, options, seed) and tracks each
/// agent's best truth. on_round (optional) sees each round's record ({round, index, y, source,
/// selected, clipped, mean_simple_regret | mean_best}) and that mean. Exceptions of evaluate
/// propagate.
StudyCurves RunFederatedStudy(
    const AgentFamily& family, int agents, const FederatedOptions& options, uint64_t seed,
    const std::function<void(const nlohmann::json& record, double mean)>& on_round);

}  // namespace advbo::algorithms
