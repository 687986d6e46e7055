// Sign-OPT (Cheng, Singh, Chen, Chen, Liu & Hsieh, "Sign-OPT: A Query-Efficient Hard-label
// Adversarial Attack", ICLR 2020, Algorithm 1, on the OPT formulation of Cheng et al., ICLR
// 2019): a hard-label, untargeted attack in L2 or L_inf. It searches the direction theta of
// a ray from the clean image x0 that minimises g(theta), the distance (in the oracle's
// norm) to the decision boundary along theta (kept at unit L2 length, as in the paper, for
// L_inf too; only the distance is measured in L_inf):
//   start:  `initial_tries` random Gaussian directions, the closest boundary kept (each
//           checked with one query at the best distance so far, searched only if closer);
//   step:   the sign gradient estimate (eq. 5) g^ = 1/Q sum_q sign(g(theta + h u_q) -
//           g(theta)) u_q, each sign from ONE query: is x0 + g(theta) (theta + h u_q)/|.|
//           adversarial (the distance would shrink: -1) or not (+1);
//   update: theta' = theta - alpha g^ with the line search of the paper's code: alpha
//           doubled while g keeps falling (up to 15 times), else divided by 4 until it falls
//           (up to 15 times); an alpha below 1e-4 restarts at 1 with h ten times smaller;
//           g(theta') by a binary search
//           below the current g (one query first: no improvement if x0 + g theta' is not
//           adversarial), to a relative tolerance of 1e-3.
// The run stops at the first adversarial query inside the eps-ball or when the budget is spent.
// 8-bit queries (this project's adaptation): a probe must move some pixel by a grid step to
// be seen, so h is at least 2 / (255 g max|u|), and searches end at one grid step.
#pragma once

#include "attacks/attack.h"

namespace advbo::attacks {

/// Sign-OPT settings (the paper's defaults).
struct SignOptOptions {
  int probes = 200;         ///< Q, random directions per sign-gradient estimate, >= 1
  double h = 0.001;         ///< the probes' step (beta of the paper's code), > 0
  double alpha = 0.2;       ///< the initial step of the line search, > 0
  int initial_tries = 100;  ///< random directions tried for the start, >= 1
  /// Throws std::invalid_argument naming the field and `name` (the attack spec).
  void Validate(const std::string& name) const;
};

/// Sign-OPT; spec "sign-opt" or "sign-opt:probes=Q,h=H,alpha=A". Label feedback, L2 and
/// L_inf (the oracle's norm), untargeted and targeted (Sec. 4: from the direction of an image
/// of the target class).
class SignOptAttack final : public LabelAttack {
 public:
  /// An attack with `options`, reported under `name`.
  explicit SignOptAttack(SignOptOptions options = {}, std::string name = "sign-opt");
  AttackResult Run(oracle::QueryOracle& oracle, bo::Rng& rng,
                   const AttackProgress& progress) const override;

 private:
  SignOptOptions options_;
};

}  // namespace advbo::attacks
