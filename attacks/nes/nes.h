// NES (Ilyas, Engstrom, Athalye & Lin, "Black-box Adversarial Attacks with Limited Queries
// and Information", ICML 2018, Algorithm 1 with projected gradient ascent, Sec. 2.2-2.3): a
// score-based L_inf attack. Each step estimates the gradient of the loss with antithetic
// Gaussian search directions, g = 1 / (2 n sigma) sum_i [L(x + sigma u_i) - L(x - sigma u_i)]
// u_i (2n queries, sent as one batch), and takes a signed step x <- Proj(x + lr sign(g)) into
// the eps-ball, then queries the new iterate (the paper's success check, one query). The loss
// ascended is the oracle's objective (thesis eq. 5.3: the target's / the best other class's
// log-probability margin).
//
// Unsigned steps (this project's variant, `nes:unsigned=1`): x <- Proj(x + lr g / max_k |g_k|),
// so the coordinate with the largest estimated gradient moves by lr and the others by less,
// and lr is halved after 50 % and 75 % of the budget (the step schedule of PGD training,
// Madry et al. 2018): the iterates search the ball's interior, where signed steps end on its
// vertices.
//
// 8-bit queries (this project's adaptation): a probe change below half a grid step rounds
// away, so sigma is at least 1/255 there.
#pragma once

#include "attacks/attack.h"

namespace advbo::attacks {

/// NES settings.
struct NesOptions {
  int samples = 50;       ///< n antithetic pairs per gradient estimate (2n queries), >= 1
  double sigma = 0.001;   ///< search-distribution scale (pixel units), > 0
  double lr_ratio = 0.2;  ///< step lr = lr_ratio * eps (L_inf), in (0, 1]
  /// 0 = signed steps (the paper); 1 = unsigned steps lr g / max|g| with lr halved after 50 %
  /// and 75 % of the budget (see above). Spec: nes:unsigned=1.
  int unsigned_steps = 0;
  /// Throws std::invalid_argument naming the field and `name` (the attack spec).
  void Validate(const std::string& name) const;
};

/// NES; spec "nes" or "nes:samples=N,sigma=S,lr_ratio=R,unsigned=U". Score feedback, L_inf,
/// targeted and untargeted.
class NesAttack final : public Attack {
 public:
  /// An attack with `options`, reported under `name`.
  explicit NesAttack(NesOptions options = {}, std::string name = "nes");
  std::string name() const override { return name_; }
  AttackResult Run(oracle::QueryOracle& oracle, bo::Rng& rng,
                   const AttackProgress& progress) const override;

 private:
  NesOptions options_;
  std::string name_;
};

}  // namespace advbo::attacks
