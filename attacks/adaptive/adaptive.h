// Adaptive attacks (docs/design.md "Adaptive attacks"): wrappers that make any score-based
// attack aware of a defense, by changing how the oracle answers it, not the attack itself.
//
//  eot:k=K/<attack>        expectation over transformation (Athalye, Carlini & Wagner, ICML
//                          2018, Sec. 3): every query is evaluated K times through the
//                          defense's randomness and answered with the mean probability
//                          vector; every sample is a counted query (QueryOracle::
//                          set_samples_per_query), so the attack runs on budget / K EOT
//                          queries. K in [1, 1000].
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
//                          noise, up to N times (QueryOracle::set_resampling; every try a
//                          counted query). With Q > 0 (the detector's quantisation step, known
//                          to the attacker) the noise is targeted: only pixels within S * eps
//                          of a bin boundary move, just across it, with probability 1/2.
//                          Defaults S = 0.05, N = 10, Q = 0 (uniform noise).
//  confirm[:n=N]/<attack>  against a randomised defense, whose answer to one image changes
//                          from query to query (RND, Qin et al. 2021): a success counts only
//                          when N more queries of the same image (fresh draws of the
//                          defense's randomness, each counted) all succeed too; otherwise the
//                          attack goes on, told the mean objective of the evaluations
//                          (QueryOracle::set_confirmations). Without it an attack stops at
//                          the first lucky draw and the saved image, re-queried, is often not
//                          adversarial. Default N = 2, N in [1, 1000].
//
// The inner attack is any MakeAttack spec, itself possibly a wrapper:
// "eot:k=10/aaa-adaptive:interval=4,reverse=1/square".
#pragma once

#include <memory>
#include <string>

#include "attacks/attack.h"

namespace advbo::attacks {

/// The model's top-2 margin m >= 0 behind an AAA-linear answer with reported top-2 margin
/// t > 0 (the inverse of defenses::AaaTargetMargin for reverse in (0, 1]): the attractor
/// interval k is the one whose image (a - reverse T/2, a + reverse T/2], a = (k + 1/2) T,
/// holds t, and m = (a (1 + reverse) - t) / reverse. Throws std::invalid_argument unless
/// interval > 0 and reverse in (0, 1].
double AaaTrueMargin(double reported, double interval, double reverse);

/// Whether `spec` names an adaptive wrapper ("eot:...", "aaa-adaptive:...", "oars/...",
/// "confirm/...").
bool IsAdaptiveSpec(const std::string& spec);

/// Builds the wrapper of `spec` around its inner attack (built by MakeAttack with
/// `context`). Throws std::invalid_argument naming the spec on a malformed one (no "/inner",
/// unknown or out-of-range parameters).
std::unique_ptr<Attack> MakeAdaptiveAttack(const std::string& spec, const AttackContext& context);

}  // namespace advbo::attacks
