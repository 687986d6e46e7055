// Bayesian optimal stopping (BOS) for BO, as in BO-BOS (Dai et al. 2019; Dai 2021 thesis,
// Chapter 4, eqs. 4.1-4.3 and Appendix A.2, Algorithm 1.1), used by BOS^2 (Kharkovskii
// 2020 thesis, Sec. 5.2.3, eq. 5.5) to abandon unpromising perturbation loops.
//
// A "learning curve" is a sequence of errors e_1..e_N in (0, 1) (lower is better) of
// which the first N0 are observed before the decision table is solved. The question is
// whether the final error e_N will beat a threshold e*  (theta_2: e_N < e*; theta_1 else).
// Decisions: d0 continue, d1 stop and conclude theta_1 (the only one that stops in
// BO-BOS/BOS^2), d2 conclude theta_2 (treated as continue by callers).
#pragma once

#include <Eigen/Dense>
#include <memory>
#include <string>
#include <vector>

#include "bo/gp.h"
#include "bo/kernel.h"
#include "bo/random.h"

namespace advbo::bo {

/// Learning-curve kernel of Swersky et al. (2014), Dai 2021 thesis eq. (A.1):
/// k(n, n') = beta^alpha / (n + n' + beta)^alpha, an integral of exp(-lambda n) exp(-lambda n')
/// over a Gamma(alpha, beta) prior on the decay rate lambda. Input: X [N, 1] of steps
/// n >= 1 (column 0). Log-parameters [log alpha, log beta] (ParamKind::kShape).
/// With an asymptote, k(n, n') + s: the curve is an unknown constant level m ~ N(0, s) plus
/// the exponentially decaying part, as in freeze-thaw BO (Swersky et al. 2014, Sec. 3), so
/// forecasts level off at the inferred asymptote instead of decaying to 0; log s is a third
/// log-parameter (ParamKind::kSignalVariance).
class LearningCurveKernel final : public Kernel {
 public:
  /// alpha, beta > 0 and (if with_asymptote) asymptote_variance > 0, else
  /// std::invalid_argument.
  explicit LearningCurveKernel(double alpha = 1.0, double beta = 1.0, bool with_asymptote = false,
                               double asymptote_variance = 1.0);
  int NumParams() const override { return asymptote_ ? 3 : 2; }
  Eigen::VectorXd LogParams() const override;
  void SetLogParams(const Eigen::VectorXd& log_params) override;
  std::vector<ParamKind> ParamKinds() const override;
  Eigen::MatrixXd Eval(const Eigen::MatrixXd& x1, const Eigen::MatrixXd& x2) const override;
  Eigen::VectorXd Diag(const Eigen::MatrixXd& x) const override;
  PairwiseCache Precompute(const Eigen::MatrixXd& x) const override;
  int CacheSize() const override { return 1; }
  Eigen::MatrixXd GramFromCache(const PairwiseCache& cache,
                                std::vector<Eigen::MatrixXd>* grads) const override;
  Eigen::MatrixXd GradX(const Eigen::VectorXd& x, const Eigen::MatrixXd& xs) const override;
  std::unique_ptr<Kernel> Clone() const override;
  std::string Describe() const override;
  /// alpha of the learning-curve kernel.
  double alpha() const { return std::exp(log_alpha_); }
  /// beta of the learning-curve kernel.
  double beta() const { return std::exp(log_beta_); }
  /// Variance s of the asymptote (0 without one).
  double asymptote_variance() const { return asymptote_ ? std::exp(log_s_) : 0.0; }

 private:
  double log_alpha_, log_beta_;
  bool asymptote_ = false;
  double log_s_ = 0.0;
};

/// BOS parameters; defaults are docs/design.md's (the BO-BOS reference settings).
struct BosOptions {
  /// K1 = k1_base / k1_decay^(t + k1_exponent_offset), t = outer BO iteration >= 1. BOS^2
  /// uses offset 0; BO-BOS (thesis Fig. 4.1: K_{1,1} = 100, K_{1,t} = K_{1,t-1} / gamma) -1.
  /// k1_base = +infinity never recommends d1 (eq. 4.3), so nothing is ever stopped.
  double k1_base = 100.0;
  /// Decay of K1 per outer iteration: K1 = k1_base / k1_decay^(t + k1_exponent_offset).
  double k1_decay = 0.99;
  /// Offset of t in K1's exponent (BOS^2: 0; BO-BOS: -1).
  int k1_exponent_offset = 0;
  /// Summary statistic: mean error over steps 1..n (true: BO-BOS, thesis Sec. 4.3.2 and
  /// App. A.2) or over the post-warm-up steps N0+1..n (false: BOS^2's use, the default).
  bool summary_from_first_step = false;
  double k2 = 99.0;              ///< cost of a wrong d2
  double cost = 1.0;             ///< c_{d0}, cost of one more observation
  int num_paths = 100000;        ///< forward-simulated sample paths
  int grid_size = 100;           ///< intervals of the summary statistic per step
  int min_cell_paths = 30;       ///< cells with <= this many paths always continue
  double noise_variance = 1e-3;  ///< learning-curve GP noise (fixed)
  /// Model the curve as asymptote + decay (LearningCurveKernel with_asymptote, the asymptote
  /// variance fitted with alpha and beta). false: zero-mean decay to 0 (BOS^2's use, where the
  /// success boundary maps to 0). BO-BOS' validation errors level off above 0, and the
  /// zero-mean forecast then never predicts a bad run (docs/design.md).
  bool asymptote = false;
  /// num_paths and grid_size >= 1; k1_base > 0 and k1_decay > 0 finite; k2, cost and
  /// noise_variance finite > 0; min_cell_paths >= 0. Throws std::invalid_argument "BOS: ...".
  void Validate() const;
};

/// Decisions of the BOS problem (4.1).
enum class BosDecision { kContinue = 0, kStop = 1, kConcludeBetter = 2 };

/// Bayes-optimal decision rules on the (step, summary-statistic interval) grid, obtained
/// by approximate backward induction (Dai 2021 thesis Algorithm 1.1). The summary
/// statistic at step n > N0 is the mean error over the post-warm-up steps N0+1..n, or over
/// steps 1..n with BosOptions::summary_from_first_step.
class BosDecisionTable {
 public:
  /// Solves the BOS problem.
  /// @param initial_errors  e_1..e_N0 in (0, 1) (N0 >= 2), the warm-up part of the curve.
  /// @param horizon         N > N0, the last step of the curve.
  /// @param threshold       e*: theta_2 means e_N < e*.
  /// @param outer_iteration t >= 1 for K1 = k1_base / k1_decay^t.
  /// @param options         K1, summary statistic and the number of simulated paths.
  /// @param rng             draws the forward-simulated paths.
  /// Throws std::invalid_argument on bad sizes or non-finite values.
  static BosDecisionTable Solve(const Eigen::VectorXd& initial_errors, int horizon,
                                double threshold, int outer_iteration, const BosOptions& options,
                                Rng& rng);

  /// Decision after observing step n (N0 < n <= N) with summary statistic `stat`
  /// (mean error over steps N0+1..n). Steps outside the table return kContinue.
  BosDecision Decide(int step, double stat) const;
  /// Summary statistic helper for the full curve so far [n]: mean of errors[N0 .. n-1]
  /// (0-based), or of errors[0 .. n-1] when the table was solved with summary_from_first_step.
  double SummaryStatistic(const Eigen::VectorXd& errors_so_far) const;
  /// K1 used by the backward induction (for logs; +infinity = d1 never recommended).
  double k1() const { return k1_; }

  /// N0, the warm-up length.
  int warmup() const { return n0_; }
  /// N, the horizon.
  int horizon() const { return horizon_; }
  /// Fitted learning-curve kernel parameters (for logs).
  double alpha() const { return alpha_; }
  /// beta of the fitted learning-curve kernel.
  double beta() const { return beta_; }
  /// Fraction of simulated paths that beat the threshold (prior P(theta_2)).
  double prior_success() const { return prior_success_; }
  /// Decision grid [N - N0, grid_size] (row r = step N0 + 1 + r), values BosDecision ints.
  const Eigen::MatrixXi& decisions() const { return decisions_; }

 private:
  int n0_ = 0, horizon_ = 0;
  bool from_first_ = false;
  double k1_ = 0;
  double lo_ = 0, hi_ = 1, alpha_ = 1, beta_ = 1, prior_success_ = 0;
  Eigen::MatrixXi decisions_;
};

}  // namespace advbo::bo
