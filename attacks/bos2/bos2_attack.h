// BOS^2 behind the common Attack interface (attacks/attack.h).
#pragma once

#include "attacks/attack.h"
#include "attacks/bos2/bos2.h"

namespace advbo::attacks {

/// Runs RunBos2 with fixed options; details: "loops" (latent dimension sequence) and
/// "stopping".
class Bos2Attack final : public Attack {
 public:
  explicit Bos2Attack(Bos2Options options) : options_(std::move(options)) {}
  std::string name() const override { return options_.stopping ? "bos2" : "bos2-nostop"; }
  AttackResult Run(oracle::QueryOracle& oracle, bo::Rng& rng,
                   const AttackProgress& progress) const override;
  const Bos2Options& options() const { return options_; }

  /// The thesis' options with the latent sides limited to the image size (sides larger than
  /// min(height, width) are dropped; the image side is used if none is left).
  static Bos2Options OptionsFor(const AttackContext& context, bool stopping);

 private:
  Bos2Options options_;
};

}  // namespace advbo::attacks
