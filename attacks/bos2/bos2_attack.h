// BOS^2 behind the common Attack interface (attacks/attack.h).
#pragma once

#include "attacks/attack.h"
#include "attacks/bos2/bos2.h"

namespace advbo::attacks {

/// Runs RunBos2 with fixed options; details: "loops" (latent dimension sequence) and
/// "stopping".
class Bos2Attack final : public Attack {
 public:
  /// `label` is the registry name records carry (default: "bos2" / "bos2-nostop").
  explicit Bos2Attack(Bos2Options options, std::string label = "")
      : options_(std::move(options)), label_(std::move(label)) {}
  std::string name() const override {
    return !label_.empty() ? label_ : options_.stopping ? "bos2" : "bos2-nostop";
  }
  AttackResult Run(oracle::QueryOracle& oracle, bo::Rng& rng,
                   const AttackProgress& progress) const override;
  /// The configuration the attack runs with (after presets and the dataset's form).
  const Bos2Options& options() const { return options_; }

  /// Bos2Options::Tuned() -- in its MNIST form (Bos2Options::MnistForm) when context.dataset
  /// is "mnist" -- with the latent sides limited to the image size (sides larger than
  /// min(height, width) are dropped; the image side is used if none is left).
  static Bos2Options OptionsFor(const AttackContext& context, bool stopping);

  /// Applies "key=value" settings (comma-separated, e.g. "kernel=matern52,beta=constant:9")
  /// to `options`. Keys (each validated; a bad key or value throws std::invalid_argument
  /// naming it): preset=thesis|tuned|fast (resets every setting but the latent sides and the
  /// stopping ablation to Bos2Options::Thesis() / Tuned() / Fast(), the last two in their
  /// MNIST form when `dataset` is "mnist"; put it first), stopping=0|1,
  /// kernel=se|matern52, beta=SPEC (a bo::ParseExplorationWeight spec), candidates=N (uniform
  /// candidates per group, >= 1), local=N (>= 0), vertex=F (share of the uniform candidates at box
  /// vertices, [0,1]), polish=N (L-BFGS-B iterations, >= 0), window=N (max_gp_points, 0 or >= 4),
  /// saturation=K (>= 1), noise=fit|fixed (fixed: the perturbation GP's noise variance stays 1e-6,
  /// as in the BayesOpt reference), fit_points=N (points per likelihood evaluation, 0 = all),
  /// restarts=N (>= 0), refit=N (refit period in iterations, 0 = only at loop start),
  /// decompositions=N (>= 1), groups=N (>= 1), paths=N (BOS forward-simulated paths, >= 100),
  /// pool=N (candidate_pool, 0 = fresh candidates every iteration), init=N (random initial
  /// perturbations per initial side, >= 1; thesis 10), precision=0|1 (precision_polish),
  /// refine=N, refine_fraction=F, refine_p=P, patience=N, stripes=0|1, tr=0|1, tr_init=L,
  /// tr_succ=N, tr_fail=N, batch=N, batch_mode=pass|kb (docs/attacks.md).
  static void ApplySettings(const std::string& settings, Bos2Options* options,
                            const std::string& dataset = "");

 private:
  Bos2Options options_;
  std::string label_;
};

}  // namespace advbo::attacks
