// Adaptive attacks (docs/design.md "Adaptive attacks"): wrappers that make any attack aware of
// a defense, by changing how the oracle answers it, not the attack itself. A wrapper runs
// under its inner attack's threat model -- norms, feedback, targeted or not -- so
// "eot:k=10/square-l2" is an L2 attack and "eot:k=10/rays" a hard-label one.
//
//  eot:k=K/<attack>        expectation over transformation (Athalye, Carlini & Wagner, ICML
//                          2018, Sec. 3): every query is evaluated K times through the
//                          defense's randomness and answered with the mean probability
//                          vector; every sample is a counted query (EotOracle), so the
//                          attack runs on budget / K EOT queries. K in [1, 1000].
//  aaa-adaptive:interval=T,reverse=A/<attack>
//                          against AAA-linear output post-processing (Chen et al., NeurIPS
//                          2022; defenses/output_defense.h) with known T and A: the reported
//                          top-2 margin t is mapped back to the model's margin m
//                          (AaaTrueMargin) before the attack scores the answer, which undoes
//                          the reversed loss trend exactly for the margin (untargeted)
//                          objective; targeted objectives get the restored top-2 margin
//                          and the (rescaled) other scores as reported.
//  oars[:scale=S,tries=N,quantization=Q]/<attack>
//                          against a stateful detector that refuses queries (Blacklight,
//                          defenses/stateful_detector.h), OARS-style adaptive resampling
//                          (Feng et al., "Stateful defenses for machine learning models are
//                          not yet secure against black-box attacks", CCS 2023): every query
//                          carries uniform noise of amplitude S * eps (S adapted: doubled after
//                          a refusal, decayed while queries pass) so that consecutive queries
//                          stop sharing fingerprints, and a refused query is resent with more
//                          noise, up to N times (ResamplingOracle; every try a counted
//                          query). With Q > 0 (the detector's quantisation step, known
//                          to the attacker) the noise is targeted: only pixels within S * eps
//                          of a bin boundary move, just across it, with probability 1/2.
//                          Defaults S = 0.05, N = 10, Q = 0 (uniform noise).
//  confirm[:n=N]/<attack>  against a randomised defense, whose answer to one image changes
//                          from query to query (RND, Qin et al. 2021): a success counts only
//                          when N more queries of the same image (fresh draws of the
//                          defense's randomness, each counted) all succeed too; otherwise the
//                          attack goes on, told the mean objective of the evaluations
//                          (ConfirmingOracle). Without it an attack stops at
//                          the first lucky draw and the saved image, re-queried, is often not
//                          adversarial. Default N = 2, N in [1, 1000].
//
// Each wrapper runs its inner attack on a view of the oracle it is given (
// the referee knows no attacker strategy), so the outer wrapper's view sits next to the
// referee. eot and aaa-adaptive act on every model evaluation (aaa-adaptive outside eot
// corrects each sample before the mean); oars and confirm act on whole queries and come
// after them: "aaa-adaptive:interval=4,reverse=1/eot:k=10/oars/square". The other order
// ("oars/eot:k=10/square") is refused with the reordered spec.
// The inner attack is any MakeAttack spec, itself possibly a wrapper.
#pragma once

#include <Eigen/Dense>
#include <cstdint>
#include <functional>
#include <memory>
#include <random>
#include <string>

#include "attacks/attack.h"
#include "oracle/oracle.h"

namespace advbo::attacks {

/// Expectation over transformation (Athalye, Carlini & Wagner, ICML 2018, Sec. 3; "eot"): a
/// view of `parent` whose every query is k of the parent's evaluations of the same image
/// (each through the defense's own randomness), answered with the mean probability vector
/// (log of the mean of the k softmax rows, renormalised) and refused when any sample was.
/// The attack inside sees queries(), budget(), remaining() and first_success_query() in
/// EOT queries (stride() = k x the parent's); the referee counts every evaluation.
class EotOracle final : public oracle::QueryOracle {
 public:
  /// Under label feedback each query's answer is the majority label of its k samples (ties
  /// to the lower class index): the vote shares as log-probabilities, whose argmax is all
  /// the attack is told (Athalye et al.'s expectation, for an attacker that sees labels).
  /// k in [1, the parent's budget]; `parent` not query_level() (EOT sits
  /// below confirm and oars). Throws std::invalid_argument otherwise.
  EotOracle(oracle::QueryOracle& parent, int k);
  oracle::DefendedAnswer Evaluate(float* images, int n) override;
  long stride() const override { return parent_.stride() * k_; }

 private:
  oracle::QueryOracle& parent_;
  int k_;
};

/// The attacker's own correction of the answers it gets (an adaptive attack that knows the
/// defense, e.g. AAA's reversed margin): a view of `parent` applying `correct` to every
/// evaluation's log-probabilities [n, classes] in place before they are judged or averaged.
class CorrectedOracle final : public oracle::QueryOracle {
 public:
  /// `parent` not query_level() and `correct` not null; throws std::invalid_argument
  /// otherwise.
  CorrectedOracle(oracle::QueryOracle& parent,
                  std::function<void(Eigen::MatrixXd* log_probs)> correct);
  oracle::DefendedAnswer Evaluate(float* images, int n) override;
  long stride() const override { return parent_.stride(); }

 private:
  oracle::QueryOracle& parent_;
  std::function<void(Eigen::MatrixXd*)> correct_;
};

/// Confirmed successes, the attacker's side against a randomised defense ("confirm"): a view
/// of `parent` (the referee or another view) for the attack inside it. A query whose answer
/// is a success is asked again `n` more times (each a counted query, a fresh draw of the
/// defense's randomness) and becomes the instance's success (QueryOracle::ClaimSuccess)
/// only if every one of them succeeds too; first_success_query() is then the last
/// confirming query. Otherwise the attack goes on, and the answer it gets for that image
/// carries the mean objective of its evaluations and success = false. The confirmations
/// ask `parent`, so with OARS inside (confirm/oars/...) they are resent without new noise.
class ConfirmingOracle final : public oracle::QueryOracle {
 public:
  /// Under label feedback a refuted success is also no longer adversarial to the attack.
  /// Throws std::invalid_argument for n outside [1, 1000].
  ConfirmingOracle(oracle::QueryOracle& parent, int n);
  oracle::QueryResult Ask(float* images, int n, bool provisional) override;
  /// The parent's answers (confirmation is about verdicts).
  oracle::DefendedAnswer Evaluate(float* images, int n) override {
    return parent_.Evaluate(images, n);
  }
  long stride() const override { return parent_.stride(); }
  bool query_level() const override { return true; }
  /// Queries spent on confirmations, and successes that a confirmation refuted.
  long confirmation_queries() const { return confirm_queries_; }
  /// Successes the attack claimed that fresh draws of the defense's randomness did not confirm.
  long refuted_successes() const { return refuted_; }

 private:
  oracle::QueryOracle& parent_;
  int n_;
  long confirm_queries_ = 0, refuted_ = 0;
};

/// Detection-aware resampling, the attacker's side against a stateful detector that refuses
/// queries (OARS-style, Feng et al., CCS 2023; "oars"): a view of `parent` for the attack
/// inside it. Every query is sent with uniform noise of amplitude scale * query_radius()
/// added (then projected as usual, so it stays in the ball and on the grid); a refused one
/// is asked again with doubled scale, up to `max_tries` times, every try a counted query;
/// the scale decays by 0.9 while batches pass. With `quantization` q > 0 (the detector's
/// bin width on the 0..255 scale, known to the attacker) the noise is targeted instead:
/// each pixel within scale * query_radius() of a bin boundary is moved just across it with
/// probability 1/2, and no other pixel moves. The attack gets the answer of what was sent,
/// and its images are overwritten with it.
class ResamplingOracle final : public oracle::QueryOracle {
 public:
  /// scale in (0, 1], max_tries >= 0, quantization in [0, 255] (either feedback); throws
  /// std::invalid_argument otherwise.
  ResamplingOracle(oracle::QueryOracle& parent, double scale, int max_tries, uint64_t seed,
                   int quantization = 0);
  oracle::QueryResult Ask(float* images, int n, bool provisional) override;
  /// The parent's answers (no evaluation-level view may wrap this one).
  oracle::DefendedAnswer Evaluate(float* images, int n) override {
    return parent_.Evaluate(images, n);
  }
  long stride() const override { return parent_.stride(); }
  bool query_level() const override { return true; }
  /// Queries resent after a refusal.
  long resampled() const { return resampled_; }

 private:
  // Adds the noise at the current scale to one image (not yet projected).
  void AddNoise(float* image);
  oracle::QueryOracle& parent_;
  double scale_;
  int tries_, quant_;
  long resampled_ = 0;
  std::mt19937_64 rng_;
};

/// The model's top-2 margin m >= 0 behind an AAA-linear answer with reported top-2 margin
/// t > 0 (the inverse of defenses::AaaTargetMargin for reverse in (0, 1]): the attractor
/// interval k is the one whose image (a - reverse T/2, a + reverse T/2], a = (k + 1/2) T,
/// holds t, and m = (a (1 + reverse) - t) / reverse. Throws std::invalid_argument unless
/// interval > 0 and reverse in (0, 1].
double AaaTrueMargin(double reported, double interval, double reverse);

/// Whether `spec` names an adaptive wrapper ("eot:...", "aaa-adaptive:...", "oars/...",
/// "confirm/...").
bool IsAdaptiveSpec(const std::string& spec);

/// The most adaptive wrappers one spec may nest ("eot:k=2/oars/square" nests 2).
inline constexpr int kMaxWrapperDepth = 8;
/// The most model evaluations one query of nested eot wrappers may take (the product of
/// their k; one eot's k is in [1, 1000] too).
inline constexpr long kMaxEotSamples = 1000;

/// Model evaluations per query of `spec`: the product of the k of its eot wrappers (1
/// without one). Throws std::invalid_argument as MakeAdaptiveAttack on a malformed nesting.
long EotSamplesPerQuery(const std::string& spec);

/// Builds the wrapper of `spec` around its inner attack (built by MakeAttack with
/// `context`). Throws std::invalid_argument naming the spec on a malformed one (no "/inner",
/// unknown or out-of-range parameters), on more than kMaxWrapperDepth nested wrappers and
/// on nested eot wrappers whose samples per query exceed kMaxEotSamples.
std::unique_ptr<Attack> MakeAdaptiveAttack(const std::string& spec, const AttackContext& context);

}  // namespace advbo::attacks
