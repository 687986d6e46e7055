// The white-box reference beside `advbo evaluate`'s black-box ensemble: when it
// applies, APGD-CE + APGD-T, and with "standard" FAB-T after them (whitebox/apgd.h:
// AutoAttack's standard white-box attacks), on the same correctly classified images, under
// the same threat model (L_inf eps; with 8-bit queries every iterate checked on the grid).
// One JSON record per image (reference.jsonl), resumable like the attack records.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "whitebox/apgd.h"

namespace advbo::experiment {

class Experiment;

/// What `--reference auto` runs (chosen by measurement: docs/guide/evaluate.md, "The white-box
/// reference"): "apgd" (APGD-CE + APGD-T) or "standard" (APGD-CE + APGD-T + FAB-T).
inline constexpr char kDefaultReference[] = "apgd";

/// The attacks of the reference `kind`: "apgd" (FAB-T off), "standard" (FAB-T on the same
/// number of targets as APGD-T, AutoAttack's standard version) or "auto" (kDefaultReference);
/// `base` gives every other setting. Throws std::invalid_argument naming the kind otherwise.
whitebox::ApgdOptions ReferenceAttacks(const std::string& kind, whitebox::ApgdOptions base);

/// "" when the reference applies to `ex`, else why not, e.g. "the defense jpeg:quality=75 has
/// no gradient in advbo's reference" -- a served model (no autograd here), any defense
/// (none is differentiable in the reference yet: JPEG, AAA, detectors never will be), an L2
/// ball (APGD here is L_inf), the rescale-compat threat model.
std::string ReferenceNotApplicable(const Experiment& ex);

/// The reference's settings as written into every record and the summary (name, iterations,
/// restarts, target classes, grid, seed): resumed records must match them.
nlohmann::json ReferenceSettings(const Experiment& ex, const whitebox::ApgdOptions& options);

/// Runs the reference on the instances of `ex` whose image index is in `images` and not in
/// `done` (resumed), and returns one record per image: image_index, true_class,
/// reference_robust, reference_broken_by ("apgd-ce" | "apgd-t" | "fab-t" | null), target,
/// adversarial_class, gradient_steps, zero_gradient, margin, linf, seconds_all_images and
/// seconds_by_attack (of the whole call, shared: each attack's wall seconds), and
/// the ReferenceSettings under "reference". `options.grid` and `options.seed` are set from
/// the experiment (8-bit queries; spec.seed). Requires ReferenceNotApplicable(ex) == "".
/// Throws oracle::ModelError (model failure) or std::invalid_argument.
/// `on_image` (optional) gets every broken image's result (its adversarial image among it).
std::vector<nlohmann::json> RunReference(
    const Experiment& ex, const std::set<int>& images, const std::set<int>& done,
    whitebox::ApgdOptions options, const whitebox::ApgdProgress& progress = {},
    const std::function<void(const whitebox::ApgdImageResult&)>& on_image = {});

/// The adversarial images of reference records are not kept in the records; this returns
/// the ApgdOptions the experiment implies (grid from its pixels, seed from its spec, threads).
whitebox::ApgdOptions ReferenceOptionsFor(const Experiment& ex, whitebox::ApgdOptions base);

}  // namespace advbo::experiment
