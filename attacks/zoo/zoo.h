// ZOO (Chen, Zhang, Sharma, Yi, Hsieh, AISec 2017), ZOO-ADAM (Algorithm 2): coordinate-wise
// zeroth-order optimisation of the C&W objective c * f(x) + ||x - x0||_2^2
// (attacks/common/cw_loss.h). Each iteration estimates B partial derivatives by symmetric
// differences (f(x + h e_i) - f(x - h e_i)) / 2h -- 2B queries in one batch -- and applies
// per-coordinate ADAM steps, keeping x in the eps-ball intersected with [0, 1]. The thesis judges
// ZOO's success by L_inf <= eps; the oracle clips every query into the ball, so any successful
// query qualifies.
#pragma once

#include "attacks/attack.h"

namespace advbo::attacks {

/// ZOO settings: the paper's h = 1e-4, B = 128 coordinates per iteration, ADAM with
/// eta = 0.01, beta1 = 0.9, beta2 = 0.999, kappa = 0. The paper binary-searches c over
/// 9 restarts; with budgets of ~1,000 queries (4 iterations) advbo uses one fixed c = 10.
struct ZooOptions {
  /// Step h of the symmetric finite differences.
  double h = 1e-4;
  /// Coordinates estimated per iteration (2 queries each, one batch).
  int coordinates = 128;
  /// ADAM learning rate eta.
  double learning_rate = 0.01;
  /// ADAM moment decay rates beta1, beta2 in [0, 1).
  ///@{
  double beta1 = 0.9, beta2 = 0.999;
  ///@}
  /// Weight c of the attack loss in c * f + ||delta||^2 (fixed: no binary search at these budgets).
  double c = 10.0;
  /// Confidence margin kappa of the C&W loss, >= 0.
  double kappa = 0.0;
  /// h, learning_rate and c > 0, coordinates >= 1, beta1 and beta2 in [0, 1), kappa >= 0;
  /// throws std::invalid_argument "ZOO: ...".
  void Validate() const;
};

/// ZOO-ADAM (Chen et al., AISec 2017, Alg. 2): coordinate-wise symmetric-difference gradient
/// estimates of the C&W loss and per-coordinate ADAM, the iterate kept in the eps-ball.
class ZooAttack final : public Attack {
 public:
  /// An attack with `options` (paper defaults).
  explicit ZooAttack(ZooOptions options = {}) : options_(options) {}
  std::string name() const override { return "zoo"; }
  AttackResult Run(oracle::QueryOracle& oracle, bo::Rng& rng,
                   const AttackProgress& progress) const override;

 private:
  ZooOptions options_;
};

}  // namespace advbo::attacks
