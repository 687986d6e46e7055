// The threat model of a run: the ball's norm and radius, what an attack is told of
// each query and the query space. It is resolved once, where the options enter (the CLI's
// experiment options, the Python API, `advbo serve`'s defender radius, the game study), from
// one table of default radii, and passed down unchanged: every banner, summary and record reads
// it (docs/design.md, "One threat model").
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "oracle/oracle.h"

namespace advbo::experiment {

/// What a default radius is for.
enum class RadiusUse {
  kStandard,  ///< attack, bench, evaluate, serve and Python: the field's standard radii
  kGame,      ///< the adversarial games' latent-space radius (R2-B2 thesis App. E.6.2.1a)
};

/// The one table of default radii, in pixel units (pixels in [0, 1]):
///
///   use        MNIST L_inf  MNIST L2  CIFAR-10 L_inf  CIFAR-10 L2
///   kStandard  0.3          2         8/255           0.5
///   kGame      0.2          --        0.05            --
///
/// kStandard: the radii robustness and attacks are reported at in the field (RobustBench's
/// CIFAR-10 L_inf 8/255 and L2 0.5; MNIST 0.3 / 2, Madry et al. 2018), one per dataset and
/// norm for every command; a paper's own protocol is asked for by its --eps (the BOS^2
/// thesis' CIFAR-10 delta_max is 0.05, Kharkovskii 2020 Table 5.3; tools/bench/bench_paper.sh
/// passes it). kGame: the latent games' radius (thesis App. E.6.2.1a), L_inf only, the game's
/// protocol (`advbo game`). std::nullopt for any other dataset ("custom" data has no default:
/// --eps is required) and for kGame under L2.
std::optional<double> DefaultRadius(const std::string& dataset, oracle::Norm norm, RadiusUse use);

/// What a default budget is for.
enum class BudgetUse {
  kAttack,    ///< attack, bench and Python's advbo.attack: model queries per attack instance
  kEvaluate,  ///< evaluate and Python's advbo.evaluate: model queries per image, whole ensemble
};

/// The one table of default budgets, in model queries (every threat model alike):
///
///   use        default  unit
///   kAttack    900      per instance (one image and goal): the BOS^2 thesis' T (Sec. 5.3)
///   kEvaluate  10,000   per image over the whole ensemble: Square's budget in Andriushchenko
///                       et al. 2020 and the black-box defense literature's; an evaluation
///                       below it is marked an upper bound (docs/guide/evaluate.md)
///
/// Records state the unit beside the budget (BudgetUnit).
constexpr long DefaultBudget(BudgetUse use) { return use == BudgetUse::kEvaluate ? 10000 : 900; }

/// The unit of a budget for `use`, as records write it beside "budget": "model queries per
/// instance" | "model queries per image".
constexpr const char* BudgetUnit(BudgetUse use) {
  return use == BudgetUse::kEvaluate ? "model queries per image" : "model queries per instance";
}

/// The names the threat model's options go by where they entered, for error messages: the
/// CLI's flags (the default) or the Python API's keyword arguments.
struct OptionNames {
  /// Name of the radius option in messages.
  std::string eps = "--eps";
  /// Name of the norm option in messages.
  std::string norm = "--norm";
  /// Name of the feedback option in messages.
  std::string feedback = "--feedback";
  /// Name of the pixel-space option in messages.
  std::string pixels = "--pixels";
  /// eps, norm, feedback, pixels (advbo.attack's keywords).
  static OptionNames Python();
};

/// A resolved, validated threat model.
struct ThreatModel {
  oracle::Norm norm = oracle::Norm::kLinf;                ///< the ball's norm
  oracle::Feedback feedback = oracle::Feedback::kScores;  ///< what an attack is told
  oracle::PixelSpace pixels = oracle::PixelSpace::k8bit;  ///< query space
  double eps = 0.3;          ///< radius in pixel units: L_inf in (0, 1], L2 in (0, kMaxL2Radius]
  bool eps_default = false;  ///< whether eps came from DefaultRadius
  /// The rescale-compat ball of the seed's code (L_inf only; oracle::Referee::
  /// set_rescale_compat) instead of clipping: its radius is never rounded to the grid.
  bool rescale_compat = false;

  /// The ball of this threat model (its norm, radius, query space and rescaling), from which
  /// every instance's oracle::Ball is built.
  oracle::BallShape ball() const { return {norm, eps, pixels, rescale_compat}; }
  /// The radius queries are held to: ball().EnforcedRadius() (oracle::BallShape).
  double enforced_eps() const { return ball().EnforcedRadius(); }
  /// "L_inf eps 0.3 (8-bit queries enforce 76/255)", "L2 eps 2": the radius as banners and
  /// summaries print it.
  std::string DescribeRadius() const;
  /// The whole of it in one line: "L2 eps 2, score feedback, 8bit queries".
  std::string Describe() const;
  /// {"norm", "feedback", "pixels", "epsilon", "epsilon_effective", "threat_model" (clip |
  /// rescale_compat)}: record and summary fields.
  nlohmann::json ToJson() const;
};

/// Resolves the threat model from the options as given: `norm` "linf" | "l2", `feedback`
/// "scores" | "label", `pixels` "8bit" | "float", `eps` the radius (unset: DefaultRadius of
/// `dataset` for `use`). Throws std::invalid_argument naming the option by `names` for an
/// unknown norm, feedback or pixel space, a radius outside the norm's range (NaN included:
/// L_inf (0, 1], L2 (0, kMaxL2Radius]), a missing radius without a default, or
/// `rescale_compat` (BayesOpt's rescaled ball) with an L2 norm. The radius is checked here
/// (oracle::BallShape::Check) and nowhere else.
ThreatModel ResolveThreatModel(const std::string& dataset, std::optional<double> eps,
                               const std::string& norm, const std::string& feedback,
                               const std::string& pixels, RadiusUse use,
                               const OptionNames& names = {}, bool rescale_compat = false);

}  // namespace advbo::experiment
