#include "experiment/threat_model.h"

#include <stdexcept>

#include "experiment/spec.h"

namespace advbo::experiment {

std::optional<double> DefaultRadius(const std::string& dataset, oracle::Norm norm, RadiusUse use) {
  const bool mnist = dataset == "mnist", cifar = dataset == "cifar10";
  if (!mnist && !cifar) return std::nullopt;
  const bool l2 = norm == oracle::Norm::kL2;
  switch (use) {
    case RadiusUse::kStandard:
      return l2 ? (mnist ? 2.0 : 0.5) : (mnist ? 0.3 : 8.0 / 255);
    case RadiusUse::kGame:
      if (l2) return std::nullopt;
      return mnist ? 0.2 : 0.05;
  }
  return std::nullopt;
}

OptionNames OptionNames::Python() { return {"eps", "norm", "feedback", "pixels"}; }

std::string ThreatModel::DescribeRadius() const {
  if (norm == oracle::Norm::kL2) return "L2 eps " + FormatNumber(eps);
  std::string s = "L_inf eps " + oracle::DescribeLinfRadius(eps);
  if (enforced_eps() != eps)
    s += " (8-bit queries enforce " + oracle::DescribeLinfRadius(enforced_eps()) + ")";
  return s;
}

std::string ThreatModel::Describe() const {
  return DescribeRadius() + ", " +
         (feedback == oracle::Feedback::kLabel ? "label feedback" : "score feedback") + ", " +
         oracle::PixelSpaceName(pixels) + " queries";
}

nlohmann::json ThreatModel::ToJson() const {
  return {{"norm", oracle::NormName(norm)},
          {"feedback", oracle::FeedbackName(feedback)},
          {"pixels", oracle::PixelSpaceName(pixels)},
          {"epsilon", eps},
          {"epsilon_effective", enforced_eps()},
          {"threat_model", rescale_compat ? "rescale_compat" : "clip"}};
}

ThreatModel ResolveThreatModel(const std::string& dataset, std::optional<double> eps,
                               const std::string& norm, const std::string& feedback,
                               const std::string& pixels, RadiusUse use, const OptionNames& names,
                               bool rescale_compat) {
  ThreatModel tm;
  tm.rescale_compat = rescale_compat;
  tm.norm = oracle::ParseNorm(norm, names.norm.c_str());
  tm.feedback = oracle::ParseFeedback(feedback, names.feedback.c_str());
  tm.pixels = oracle::ParsePixelSpace(pixels, names.pixels.c_str());
  if (eps) {
    tm.eps = *eps;
  } else {
    const std::optional<double> fallback = DefaultRadius(dataset, tm.norm, use);
    if (!fallback)
      throw std::invalid_argument(names.eps + " is required: '" + dataset + "' has no default " +
                                  oracle::NormName(tm.norm) + " radius");
    tm.eps = *fallback;
    tm.eps_default = true;
  }
  tm.ball().Check(names.eps.c_str());
  return tm;
}

}  // namespace advbo::experiment
