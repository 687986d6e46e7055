// Nonmyopic adaptive BO with macro-actions (Kharkovskii 2020 thesis, Ch. 4 + App. B):
// epsilon-Macro-BO (Sec. 4.2, eqs. 4.4-4.9), anytime epsilon-Macro-BO (Sec. 4.3, Alg. 4,
// eq. 4.12) and the baselines of Sec. 4.4 on the same GP belief: nonmyopic GP-UCB with most
// likely observations (= the deterministic policy of eq. 4.8, Marchant et al. 2014 generalised
// to macro-actions), DB-GP-UCB (= epsilon-Macro-BO with H = 1) and GP-BUCB (Desautels et al.
// 2014, a macro-action chosen one input at a time).
//
// Implementation notes (docs/design.md, "epsilon-Macro-BO"):
//  - The GP posterior covariance does not depend on the outputs, so every quantity that
//    depends only on the visited locations (predictive covariances, their Cholesky factors,
//    the information terms, alpha of Lemma B.1, L_t of Definition B.1, theta of Theorem 4.2)
//    is computed once per planning call on the tree of macro-action sequences (PathTree).
//    A sampled output y^l = mu + Psi z^l (Psi the Cholesky factor of Sigma_t, eq. B.12) enters
//    later posterior means only through its whitened innovation z^l, so R(x_{t+1}, d_t) of
//    eq. 4.4 is an affine function of the whitened innovations along the path. The sampling
//    tree of eq. 4.6 is therefore exact and costs a few dot products per node.
//  - theta (Theorem 4.2) is given in the thesis only as O(kappa^{H+1/2}); we use the concrete
//    bound its proof establishes, eqs. (B.24) and (B.27): theta(x_{1:t+1}) =
//    L_{t+1}(x_{1:t+1}) sqrt(kappa Tr Sigma_t(x_{t+1})) + max_{x_{t+2}} theta(x_{1:t+2}), zero at
//    the last stage, with E||z|| <= sqrt(kappa).
//  - The information term of eq. 4.4 is the mutual information 0.5 log|I + sigma_n^-2
//    Sigma_f| of the noise-free posterior covariance Sigma_f (App. B.1.1, eq. B.2).
#pragma once

#include <Eigen/Dense>
#include <functional>
#include <string>
#include <vector>

#include "algorithms/macro_bo/field.h"
#include "bo/random.h"

namespace advbo::algorithms {

/// The planners of `advbo macro --algo`.
enum class MacroAlgo {
  kEMacro,        ///< epsilon-Macro-BO, eq. 4.9 (H = 1: DB-GP-UCB)
  kAnytime,       ///< anytime epsilon-Macro-BO, Alg. 4 / eq. 4.12
  kNonmyopicUcb,  ///< most likely observations, eq. 4.8 (nonmyopic GP-UCB)
  kGpBucb,        ///< GP-BUCB, one input of the macro-action at a time
};

/// "emacro" | "anytime" | "nonmyopic-ucb" | "gp-bucb"; else std::invalid_argument.
MacroAlgo ParseMacroAlgo(const std::string& name);
/// The name ParseMacroAlgo accepts.
std::string MacroAlgoName(MacroAlgo algo);

/// Planner settings (defaults = the plankton study of Sec. 4.4.1).
struct MacroOptions {
  /// The planner: epsilon-Macro-BO, DB-GP-UCB (H = 1), nonmyopic GP-UCB or GP-BUCB.
  MacroAlgo algo = MacroAlgo::kEMacro;
  int horizon = 2;       ///< H >= 1 planning stages (lookahead kappa * H observations)
  int samples = 100;     ///< N >= 1 sampled outputs per macro-action and stage (eq. 4.6)
  double beta = 0.0;     ///< exploration weight of eq. 4.4, >= 0 (0 in Sec. 4.4 by default)
  double epsilon = 1.0;  ///< user loss bound epsilon > 0: lambda = epsilon / (4 H^2) (Thm 4.3);
                         ///< anytime: lambda = 1 / (4H/epsilon + 1/(2 theta)) (Alg. 4 l. 43)
  int anytime_iterations = 1500;  ///< ConstructTree calls per planning step (Sec. 4.4.2: 1500)
  double bucb_delta = 0.1;        ///< GP-BUCB: delta of beta_t = 2 log(|X| t^2 pi^2 / (6 delta))
  /// horizon, samples and anytime_iterations >= 1, beta >= 0 and epsilon > 0 finite,
  /// bucb_delta in (0, 1); throws std::invalid_argument naming the field.
  void Validate() const;
};

/// GP belief over a field with known hyperparameters (eq. 4.1): observations (location, y)
/// and the posterior of the latent values. Small data (tens of points): the Cholesky factor
/// of K + sigma_n^2 I is rebuilt on every Observe.
class FieldBelief {
 public:
  /// The prior belief over `domain`'s field (no observations yet).
  FieldBelief(const MacroDomain& domain, const FieldPrior& prior);
  /// Adds an observation y at location loc (index into domain.locations).
  void Observe(int loc, double y);
  /// Prior covariance k(loc_a, loc_b) (SE kernel with the prior's lengthscales).
  double Kernel(int a, int b) const;
  /// Posterior mean of f at loc.
  double Mean(int loc) const;
  /// Posterior variance of f (latent, noise excluded) at loc.
  double Variance(int loc) const;
  /// Posterior covariance of f (latent) between locations a and b.
  double Covariance(int a, int b) const;
  /// Observed location indices, in order.
  const std::vector<int>& observed() const { return locs_; }
  /// Observed noisy outputs, one per observed location.
  const Eigen::VectorXd& y() const { return y_; }
  /// The domain the belief is over.
  const MacroDomain& domain() const { return *domain_; }
  /// The field's GP prior.
  const FieldPrior& prior() const { return prior_; }
  /// Cholesky factor of K(D, D) + sigma_n^2 I [n, n] and its whitened residual
  /// u = L^-1 (y - mu_s) [n].
  const Eigen::MatrixXd& chol() const { return chol_; }
  /// Whitened residuals of the observations (L^-1 (y - mu)).
  const Eigen::VectorXd& whitened() const { return u_; }

 private:
  const MacroDomain* domain_;
  FieldPrior prior_;
  std::vector<int> locs_;
  Eigen::VectorXd y_;
  Eigen::MatrixXd chol_;
  Eigen::VectorXd u_;
};

/// One node of the tree of macro-action sequences from the current location: the path
/// x_1 ... x_depth (depth = number of macro-actions; node 0 is the root with depth 0).
struct PathNode {
  /// Index of the parent node (-1 for the root).
  int parent = -1;
  /// Number of macro-actions on the path (0 for the root).
  int depth = 0;
  int action = -1;  ///< index into domain.actions[location of the parent]
  int end = 0;      ///< location after the path
  /// Indices of the child nodes.
  std::vector<int> children;
  std::vector<int> points;  ///< the kappa locations of the last macro-action
  /// 1^T mu_t(x_depth) when all earlier sampled outputs equal their means (eq. 4.1).
  double mean_sum = 0.0;
  /// 0.5 log|I + sigma_n^-2 Sigma_f| of x_depth given D and the earlier path (eq. B.2).
  double info = 0.0;
  /// [kappa, depth - 1]: d(1^T mu_t(x_depth)) / d z_s for the whitened innovation z_s of
  /// stage s = 1 .. depth - 1 (column s - 1).
  Eigen::MatrixXd w;
  /// [kappa, kappa] Cholesky factor Psi of Sigma_t(x_depth) (noise included, eq. 4.1).
  Eigen::MatrixXd chol;
  double alpha = 0.0;      ///< alpha(x_{1:depth}) of Lemma B.1 (all earlier data)
  double lipschitz = 0.0;  ///< L_depth(x_{1:depth}) of Definition B.1
  double theta = 0.0;      ///< bound on |Q* - Q_likely| of this node's macro-action (B.24, B.27)
  double likely = 0.0;     ///< Q_likely (eq. 4.8) of this node's macro-action
};

/// The precomputed tree up to depth `horizon`: every macro-action sequence from a location,
/// with the exploration weight beta it was built for.
struct PathTree {
  /// The nodes; node 0 is the root.
  std::vector<PathNode> nodes;
  /// kappa, the locations per macro-action.
  int kappa = 1;
  /// Depth of the tree (planning stages H).
  int horizon = 1;
  /// Exploration weight beta the tree was built for.
  double beta = 0.0;
  /// R(x, d_t) of eq. 4.4 for node c given the whitened innovations hist [t kappa] of the
  /// stages before it (t <= depth - 1; missing stages count as 0 = most likely outputs).
  double Reward(int c, const double* hist, int hist_len) const;
};

/// Builds the PathTree from `location` up to depth `horizon` for `belief` and exploration
/// weight beta. Throws std::invalid_argument on horizon < 1 or a location outside the domain.
PathTree BuildPathTree(const FieldBelief& belief, int location, int horizon, double beta);

/// Result of one planning call at the current location.
struct MacroPlan {
  int action = -1;           ///< chosen index into domain.actions[location] (-1: dead end)
  Eigen::VectorXd q;         ///< [A] the values the choice maximised
  Eigen::VectorXd q_likely;  ///< [A] Q_likely of eq. 4.8
  long long nodes = 0;       ///< explored nodes (circle nodes d_t and their action nodes)
  int fallbacks = 0;         ///< actions whose value fell back to Q_likely (eq. 4.9 / 4.12)
  double theta = 0.0;        ///< Theorem 4.2 bound used at the root
  double omega = 0.0;        ///< anytime: final gap of the root's heuristic bounds
};

/// Nodes explored by one epsilon-Macro-BO planning call with A macro-actions at every
/// location, N samples and horizon H: (1 + A) sum_{t<H} (A N)^t (circle nodes d_t and their
/// action nodes; the last stage draws no samples). A double, since it overflows 64-bit
/// integers for large trees; the CLI warns before planning a very large one.
double MacroTreeNodes(int actions, int samples, int horizon);

/// Plans the next macro-action at `location` with `horizon` stages (the episode passes
/// min(H, iterations left)). Draws samples from rng. Throws std::invalid_argument on bad
/// options.
MacroPlan PlanMacroAction(const FieldBelief& belief, int location, int horizon,
                          const MacroOptions& options, bo::Rng& rng);

/// One executed macro-action.
struct MacroStep {
  /// Planning iteration (0-based).
  int iteration = 0;
  int from = 0;             ///< location before
  int action = -1;          ///< index into domain.actions[from]
  std::vector<int> points;  ///< locations visited
  std::vector<double> y;    ///< noisy outputs observed
  int horizon = 0;          ///< stages planned (min(H, iterations left))
  /// Tree nodes the planner explored for this step.
  long long nodes = 0;
  /// Times the anytime planner fell back to the most likely outputs.
  int fallbacks = 0;
  /// The epsilon-Macro-BO error bounds theta and omega of the chosen step (Lemma B.2).
  ///@{
  double theta = 0.0, omega = 0.0;
  ///@}
  double seconds = 0.0;  ///< planning wall time
};

/// One episode on a realisation: the prior datum at the start, then budget / kappa planned
/// macro-actions (fewer at a dead end). Curves are indexed by observations gathered
/// k = 0 .. budget: mean of y - mu_s over the first k (0 at k = 0) and the simple regret
/// max f - max f(observed, start included) after k.
struct MacroEpisode {
  /// The executed macro-actions, in order.
  std::vector<MacroStep> steps;
  std::vector<double> avg_output_curve;  ///< [budget + 1]
  std::vector<double> regret_curve;      ///< [budget + 1]
  double avg_normalized_output = 0.0;    ///< last value of avg_output_curve
  double simple_regret = 0.0;            ///< last value of regret_curve
  /// Tree nodes explored over the episode.
  long long nodes = 0;
  /// Planning wall seconds over the episode.
  double seconds = 0.0;
};

/// Runs one episode with planner options on field; `seed` drives the planner's samples and
/// the observation noise (noise of the k-th visit of a location depends on (seed, location,
/// k) only, so methods compared on one realisation and seed see the same noise). on_step (if
/// set) is called after each macro-action.
MacroEpisode RunMacroEpisode(const MacroField& field, const MacroOptions& options, uint64_t seed,
                             const std::function<void(const MacroStep&)>& on_step = {});

}  // namespace advbo::algorithms
