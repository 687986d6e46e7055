#include "experiment/reference.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>

#include "experiment/records.h"
#include "experiment/runner.h"
#include "oracle/classifier.h"

namespace advbo::experiment {

std::string ReferenceNotApplicable(const Experiment& ex) {
  if (oracle::IsModelUrl(ex.model_path()))
    return "the model is served over HTTP: no gradient reaches advbo";
  if (!std::filesystem::is_regular_file(ex.model_path()))
    return "the model is not a TorchScript file (" + ex.model_path() + ")";
  if (!ex.defense().empty())
    return "the defense " + ex.defense().Spec() +
           " has no gradient in advbo's reference (only an undefended TorchScript model has)";
  if (ex.norm() != oracle::Norm::kLinf) return "the reference is L_inf APGD; the ball is L2";
  if (ex.spec().rescale_compat) return "the rescale-compat threat model is not the eps-ball";
  return "";
}

whitebox::ApgdOptions ReferenceAttacks(const std::string& kind, whitebox::ApgdOptions o) {
  if (kind == "auto") return ReferenceAttacks(kDefaultReference, o);
  if (kind == "apgd") {
    o.fab_target_classes = 0;
  } else if (kind == "standard") {
    o.fab_target_classes = o.target_classes;
  } else {
    throw std::invalid_argument("--reference must be auto, apgd, standard or none, got '" + kind +
                                "'");
  }
  return o;
}

whitebox::ApgdOptions ReferenceOptionsFor(const Experiment& ex, whitebox::ApgdOptions o) {
  o.grid = ex.pixels() == oracle::PixelSpace::k8bit;
  o.seed = ex.spec().seed;
  o.threads = ex.whole_threads();
  // APGD-T targets the top classes other than the label: at most every other class, and the
  // settings (records, summary, table) say how many ran.
  if (ex.model().num_classes() >= 2) {
    o.target_classes = std::min(o.target_classes, ex.model().num_classes() - 1);
    o.fab_target_classes = std::min(o.fab_target_classes, ex.model().num_classes() - 1);
  }
  return o;
}

nlohmann::json ReferenceSettings(const Experiment& ex, const whitebox::ApgdOptions& options) {
  const whitebox::ApgdOptions o = ReferenceOptionsFor(ex, options);
  nlohmann::json s = {{"name", "apgd-ce+apgd-t"},
                      {"source", "Croce & Hein, ICML 2020, Alg. 1 (AutoAttack's white-box pair)"},
                      {"iterations", o.iterations},
                      {"restarts", o.restarts},
                      {"target_classes", o.target_classes},
                      {"target_restarts", o.target_restarts},
                      {"grid", o.grid},
                      {"epsilon", ex.epsilon()},
                      {"epsilon_effective", ex.epsilon_effective()},
                      {"seed", o.seed}};
  if (o.fab_target_classes > 0) {
    // Only a reference with FAB-T carries its fields: records of the pair stay as they were.
    s["name"] = "apgd-ce+apgd-t+fab-t";
    s["source"] =
        "Croce & Hein, ICML 2020 (AutoAttack's standard white-box attacks: APGD, Alg. 1; FAB-T, "
        "Alg. 1 of the FAB paper)";
    s["fab_target_classes"] = o.fab_target_classes;
    s["fab_iterations"] = o.fab_iterations;
    s["fab_restarts"] = o.fab_restarts;
  }
  return s;
}

std::vector<nlohmann::json> RunReference(
    const Experiment& ex, const std::set<int>& images, const std::set<int>& done,
    whitebox::ApgdOptions options, const whitebox::ApgdProgress& progress,
    const std::function<void(const whitebox::ApgdImageResult&)>& on_image) {
  options = ReferenceOptionsFor(ex, options);
  const data::ImageSet& set = ex.images();
  const size_t d = set.image_size();
  std::vector<float> x;
  std::vector<int> labels, indices;
  std::set<int> seen;
  for (const Instance& inst : ex.instances()) {
    if (!images.count(inst.index) || done.count(inst.index) || !seen.insert(inst.index).second)
      continue;
    const float* p = set.image(inst.index);
    x.insert(x.end(), p, p + d);
    labels.push_back(inst.label);
    indices.push_back(inst.index);
  }
  std::vector<nlohmann::json> out;
  if (labels.empty()) return out;
  std::optional<oracle::Normalization> norm;
  if (ex.model().normalization()) norm = *ex.model().normalization();
  const auto t0 = std::chrono::steady_clock::now();
  std::map<std::string, double> stages;
  const auto res = whitebox::RunApgdReference(ex.model_path(), norm, ex.model().outputs_logits(), x,
                                              labels, indices, set.channels, set.height, set.width,
                                              ex.epsilon(), options, progress, &stages);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const nlohmann::json settings = ReferenceSettings(ex, options);
  if (on_image)
    for (const auto& r : res)
      if (!r.robust) on_image(r);
  for (const auto& r : res)
    out.push_back(
        {{"image_index", r.image_index},
         {"true_class", r.label},
         {"reference_robust", r.robust},
         {"reference_broken_by", r.robust ? nlohmann::json(nullptr) : nlohmann::json(r.broken_by)},
         {"target", r.target >= 0 ? nlohmann::json(r.target) : nlohmann::json(nullptr)},
         {"adversarial_class",
          r.adversarial_class >= 0 ? nlohmann::json(r.adversarial_class) : nlohmann::json(nullptr)},
         {"gradient_steps", r.gradient_steps},
         {"zero_gradient", r.zero_gradient},
         {"margin", r.margin},
         {"linf", r.linf},
         {"saturated_fraction", r.saturated_fraction},
         {"vertex_adversarial",
          r.robust ? nlohmann::json(nullptr) : nlohmann::json(r.vertex_adversarial)},
         {"seconds_all_images", secs},
         {"seconds_by_attack", stages},
         {"reference", settings}});
  return out;
}

}  // namespace advbo::experiment
