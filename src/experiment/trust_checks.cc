#include "experiment/trust_checks.h"

#include <algorithm>
#include <cmath>

#include "experiment/runner.h"
#include "text/numbers.h"

namespace advbo::experiment {
namespace {

std::string Points(double v) { return text::FormatFixed(v, 1); }

nlohmann::json Flag(const std::string& check, const std::string& message) {
  return {{"check", check}, {"message", message}};
}

}  // namespace

bool OutputProbe::randomised() const { return max_difference > 1e-6 * std::max(1.0, max_score); }

nlohmann::json OutputProbe::ToJson() const {
  return {{"images", images},
          {"queries", queries},
          {"max_difference", max_difference},
          {"max_score", max_score},
          {"randomised", randomised()}};
}

OutputProbe OutputProbe::FromSummary(const nlohmann::json& summary) {
  OutputProbe p;
  if (!summary.contains("checks")) return p;
  const auto& r = summary.at("checks").value("randomised_outputs", nlohmann::json::object());
  p.images = r.value("images", 0L);
  p.queries = r.value("queries", 0L);
  p.max_difference = r.value("max_difference", 0.0);
  p.max_score = r.value("max_score", 0.0);
  return p;
}

void OutputProbe::Add(const OutputProbe& other) {
  images += other.images;
  queries += other.queries;
  max_difference = std::max(max_difference, other.max_difference);
  max_score = std::max(max_score, other.max_score);
}

OutputProbe ProbeRandomisedOutputs(const Experiment& ex, int images) {
  OutputProbe p;
  const data::ImageSet& set = ex.images();
  const size_t d = set.image_size();
  std::vector<float> x;
  for (const Instance& inst : ex.instances()) {
    if (p.images >= images) break;
    const float* img = set.image(inst.index);
    bool seen = false;  // targeted runs list an image once per target
    for (long k = 0; k < p.images && !seen; ++k)
      seen = std::equal(img, img + d, x.begin() + static_cast<long>(k * d));
    if (seen) continue;
    x.insert(x.end(), img, img + d);
    ++p.images;
  }
  if (p.images == 0) return p;
  const int n = static_cast<int>(p.images);
  const Eigen::MatrixXd a = ex.model().RawScores(x.data(), n);
  const Eigen::MatrixXd b = ex.model().RawScores(x.data(), n);
  p.queries = 2 * p.images;
  p.max_difference = (a - b).cwiseAbs().maxCoeff();
  p.max_score = std::max(a.cwiseAbs().maxCoeff(), b.cwiseAbs().maxCoeff());
  return p;
}

void AddTrustChecks(nlohmann::json* summary, const std::vector<nlohmann::json>& reference,
                    const OutputProbe& probe, bool probability_outputs) {
  nlohmann::json& s = *summary;
  nlohmann::json checks = {{"randomised_outputs", probe.ToJson()},
                           {"probability_outputs", probability_outputs},
                           {"masking_threshold_points", kMaskingPoints},
                           {"vertex_threshold_points", kVertexPoints}};
  nlohmann::json flags = nlohmann::json::array();
  if (probe.randomised())
    flags.push_back(
        Flag("randomised_outputs",
             "randomised outputs: the same image scored twice differed by " +
                 text::FormatFixed(probe.max_difference, 6) +
                 "; the worst case over single draws is not a robust accuracy: declare the "
                 "randomness with --defense (its adaptive attack averages over draws) or attack "
                 "with eot:k=... members"));
  if (probability_outputs)
    flags.push_back(Flag("probability_outputs",
                         "probability outputs: gradients through a saturated softmax vanish "
                         "(the reference works on their logs); pass the logits if the model "
                         "has them"));
  long zero = 0, ref_images = 0;
  for (const auto& r : reference) {
    ++ref_images;
    zero += r.value("zero_gradient", false);
  }
  checks["reference_images"] = ref_images;
  checks["zero_gradient_images"] = zero;
  if (zero > 0)
    flags.push_back(Flag("zero_gradients",
                         "zero gradients: the white-box reference saw an all-zero input "
                         "gradient at " +
                             std::to_string(zero) + " of " + std::to_string(ref_images) +
                             " images (gradient masking): its number is an upper bound"));
  const bool both = !s.value("ensemble", nlohmann::json::array()).empty() &&
                    s.value("reference", nlohmann::json::object()).value("applies", false) &&
                    s.value("reference_robust_accuracy", nlohmann::json()).is_number();
  const double images = std::max(1.0, s.value("images", 0.0));
  if (both) {
    const long ensemble_only = s.value("robust_reference_only", 0L);  // ensemble broke them
    const long reference_only = s.value("robust_blackbox_only", 0L);  // reference broke them
    const double masking = 100.0 * ensemble_only / images;
    const double vertex = 100.0 * reference_only / images;
    checks["broken_by_ensemble_only_points"] = masking;
    checks["broken_by_reference_only_points"] = vertex;
    if (masking > kMaskingPoints)
      flags.push_back(Flag("masking_suspected",
                           "gradient masking suspected: the black-box ensemble broke " +
                               std::to_string(ensemble_only) + " images (" + Points(masking) +
                               " points) the white-box reference left robust (threshold " +
                               Points(kMaskingPoints) + "); quote the combined number"));
    if (vertex > kVertexPoints)
      flags.push_back(
          Flag("vertex_resistance",
               "the black-box number is an upper bound: the white-box reference broke " +
                   std::to_string(reference_only) + " images (" + Points(vertex) +
                   " points) the ensemble left robust (threshold " + Points(kVertexPoints) +
                   "); the model resists the points the ensemble searches (for Square-like "
                   "attacks, the ball's vertices)"));
  }
  s["checks"] = checks;
  s["flags"] = flags;
}

std::string TrustCheckRows(const nlohmann::json& summary) {
  if (!summary.contains("flags")) return "";
  const auto& flags = summary.at("flags");
  if (flags.empty())
    return "checks                     none fired (randomised outputs, probability outputs, "
           "zero gradients, masking, vertex resistance)\n";
  std::string rows = "checks                     " + std::to_string(flags.size()) +
                     " fired: do not quote the black-box number alone\n";
  for (const auto& f : flags)
    rows += "  CHECK                    " + f.at("message").get<std::string>() + "\n";
  return rows;
}

}  // namespace advbo::experiment
