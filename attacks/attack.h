// The common interface of every black-box attack in advbo. An attack talks to the model
// only through a QueryOracle, which counts every image as a query, enforces the budget
// and the threat model -- every query clipped into the L_inf or L2 eps-ball, or told only the
// top-1 label (docs/design.md, "The oracle contract") -- so all attacks are compared under the
// same accounting rule. The attacks themselves (24: score-based L_inf, score-based L2 and
// hard-label) are the entries of attacks/registry.h, each with its source.
#pragma once

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "bo/random.h"
#include "oracle/oracle.h"

namespace advbo::attacks {

/// Outcome of one attack instance (one image, one goal).
struct AttackResult {
  /// Whether the goal was met within the budget.
  bool success = false;
  long queries = 0;           ///< 1-based index of the first successful query, or all used
  double best_objective = 0;  ///< max of the oracle's objective (thesis eq. 5.3)
  /// The image the attack answers with, C*H*W in [0, 1], inside the eps-ball: its first
  /// successful query, else its best query (score feedback) or the clean image (label
  /// feedback, whose queries may lie outside the ball: an adversarial image there is not an
  /// answer at eps).
  std::vector<float> adversarial;
  /// Label feedback: the closest adversarial query (C*H*W, possibly outside the ball; its
  /// distance is the oracle's best_distance()), empty before one and with score feedback.
  std::vector<float> closest_adversarial;
  double seconds = 0;        ///< wall time of the instance
  double model_seconds = 0;  ///< of which its own model time (its share of batched forwards)
  /// of which waiting for other lockstep lanes or worker groups (0 outside lockstep)
  double wait_seconds = 0;
  double bo_seconds = 0;   ///< the rest: the attack's own computation
  nlohmann::json details;  ///< attack-specific record fields (e.g. BOS^2 loops)
};

/// Progress callback: (queries used, best objective so far).
using AttackProgress = std::function<void(long, double)>;

/// A black-box attack. Implementations are stateless between instances; all randomness
/// comes from the engine passed to Run.
class Attack {
 public:
  virtual ~Attack() = default;
  /// Registry name (e.g. "bos2", "square").
  virtual std::string name() const = 0;
  /// Whether untargeted attacks are supported.
  virtual bool supports_untargeted() const { return true; }
  /// Whether targeted attacks are supported (hard-label attacks that start from an
  /// adversarial image found by random search are untargeted only).
  virtual bool supports_targeted() const { return true; }
  /// The ball norms the attack runs under (oracle::QueryOracle::set_norm); L_inf by default.
  virtual std::vector<oracle::Norm> norms() const { return {oracle::Norm::kLinf}; }
  /// What the attack needs to be told of each query: the model's scores (score-based, the
  /// default) or only the top-1 label (hard-label / decision-based attacks).
  virtual oracle::Feedback feedback() const { return oracle::Feedback::kScores; }
  /// Runs until success or until the oracle's budget is spent (never more: the oracle
  /// refuses). Model failures propagate as oracle::ModelError.
  virtual AttackResult Run(oracle::QueryOracle& oracle, bo::Rng& rng,
                           const AttackProgress& progress) const = 0;
};

/// Base of the hard-label (decision-based) attacks (RayS, HopSkipJump, TA / G-TA, Sign-OPT,
/// GeoDA, CGBA / CGBA-H, bo-hl): label feedback, the registry name and the norms it runs under
/// given at construction. Untargeted, each starts from an adversarial image found by random
/// search; those whose paper defines a targeted attack (HopSkipJump, TA / G-TA, Sign-OPT, CGBA /
/// CGBA-H) start a targeted one from the oracle's start_image(), an image of the target
/// class.
class LabelAttack : public Attack {
 public:
  std::string name() const override { return name_; }
  bool supports_targeted() const override { return targeted_; }
  std::vector<oracle::Norm> norms() const override { return norms_; }
  oracle::Feedback feedback() const override { return oracle::Feedback::kLabel; }

 protected:
  /// name: the registry spec; norms: non-empty; targeted: whether it has a targeted mode.
  LabelAttack(std::string name, std::vector<oracle::Norm> norms, bool targeted = false)
      : name_(std::move(name)), norms_(std::move(norms)), targeted_(targeted) {}
  /// Targeted runs: the oracle's start image, which must be given. Throws
  /// std::invalid_argument naming the attack otherwise.
  const std::vector<float>& TargetStart(const oracle::QueryOracle& oracle) const;
  /// The shared shape of the start-then-iterate attacks (HopSkipJump with its tangent steps,
  /// CGBA): `start` writes an adversarial start image [C * H * W] and returns whether it found
  /// one; `iterate` then runs the iterations from it and returns their number. The result
  /// (FinishResult) carries details "<prefix>_iterations" and "<prefix>_start" (the query
  /// index at which the start was found, null when none was).
  AttackResult RunFromStart(oracle::QueryOracle& oracle, const std::string& prefix,
                            const std::function<bool(std::vector<float>*)>& start,
                            const std::function<int(std::vector<float>)>& iterate) const;

 private:
  std::string name_;
  std::vector<oracle::Norm> norms_;
  bool targeted_;
};

/// Dataset-dependent defaults an attack may need (paper settings differ for MNIST and
/// CIFAR-10).
struct AttackContext {
  std::string dataset = "mnist";  ///< "mnist", "cifar10" or "custom"
  /// Image shape the attack is built for: channels, height and width in pixels.
  ///@{
  int channels = 1, height = 28, width = 28;
  ///@}
};

/// Builds an attack from its spec: a registry name (attacks/registry.h) with optional settings
/// ("square:p_init=0.3"), or an adaptive wrapper around one (attacks/adaptive:
/// "eot:k=10/square", "aaa-adaptive:interval=4,reverse=1/bos2"). Throws std::invalid_argument
/// naming the available attacks for an unknown name, and the entry's errors for bad settings.
std::unique_ptr<Attack> MakeAttack(const std::string& name, const AttackContext& context);

/// The registry's names (AttackRegistry), in its order.
std::vector<std::string> AttackNames();

/// "" when `attack` runs under the threat model (norm, feedback), else a message naming the
/// attack, what it needs and the attacks that do fit, e.g. "attack 'square' is a score-based
/// attack; --feedback label needs a hard-label attack: hsja, rays, ...".
std::string ThreatModelMismatch(const Attack& attack, const std::string& spec, oracle::Norm norm,
                                oracle::Feedback feedback);

/// The "key=value,key=value" settings `text` of attack spec `spec` (e.g. "kernel=se,init=5"
/// of "bos2:kernel=se,init=5") as (key, value text) pairs in order; empty pieces are
/// skipped. Throws std::invalid_argument "attack '<spec>': setting '<piece>' is not
/// key=value".
std::vector<std::pair<std::string, std::string>> SplitAttackSettings(const std::string& spec,
                                                                     const std::string& text);

/// Setting `key`'s value `text` of attack spec `spec` as a finite number. Throws
/// std::invalid_argument "attack '<spec>': <key> must be a number, got '<text>'".
double SettingNumber(const std::string& spec, const std::string& key, const std::string& text);

/// The "key=value,key=value" settings `text` of attack spec `spec` (e.g. "k=10" of
/// "eot:k=10/square") as (key, number) pairs in order: SplitAttackSettings, then
/// SettingNumber on each value (the errors of both).
std::vector<std::pair<std::string, double>> ParseAttackSettings(const std::string& spec,
                                                                const std::string& text);

/// Setting `key` = `v` of attack spec `spec` as an integer in [lo, hi]. Throws
/// std::invalid_argument "attack '<spec>': <key> must be an integer in [lo, hi]".
int SettingInteger(const std::string& spec, const std::string& key, double v, int lo, int hi);

/// Setting `key` = `v` of attack spec `spec`, checked to lie in [lo, hi] ((lo, hi] when
/// lo_open). Throws std::invalid_argument "attack '<spec>': <key> must be in [lo, hi]".
double SettingInRange(const std::string& spec, const std::string& key, double v, double lo,
                      double hi, bool lo_open = false);

/// Fills the common fields of an AttackResult from the oracle after a run (success,
/// queries, best objective, adversarial image -- the clean image for a failed label-feedback
/// run --, closest adversarial query, model seconds) and the wall time since `start_seconds`
/// (a steady_clock reading in seconds). Under the min-distance goal (oracle.min_distance())
/// the run succeeded when its closest adversarial query lies within eps: `queries` is the
/// query that first got there (else all used), `adversarial` that closest query.
void FinishResult(const oracle::QueryOracle& oracle, double start_seconds, AttackResult* r);

/// Seconds on the steady clock (for FinishResult).
double NowSeconds();

}  // namespace advbo::attacks
