#include "experiment/summary.h"

#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <string>

namespace advbo::experiment {
namespace {

nlohmann::json OrNull(bool has, double v) { return has ? nlohmann::json(v) : nlohmann::json(); }

double MedianOf(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

nlohmann::json SummarizeRecords(const std::vector<const nlohmann::json*>& records) {
  if (records.empty()) throw std::invalid_argument("SummarizeRecords: no records");
  std::vector<double> succ;
  double all = 0, secs = 0, model = 0;
  long ok8 = 0, checked8 = 0, loops = 0, stopped = 0;
  bool has_loops = false;
  for (const nlohmann::json* r : records) {
    const bool ok = r->at("success").get<bool>();
    if (r->contains("quantized_success") && r->at("quantized_success").is_boolean()) {
      ++checked8;
      ok8 += ok && r->at("quantized_success").get<bool>();
    }
    const double q = r->at("queries").get<double>();
    if (ok) succ.push_back(q);
    all += ok ? q : r->at("budget").get<double>();
    secs += r->at("seconds").get<double>();
    model += r->at("model_seconds").get<double>();
    if (r->contains("loops") && r->at("loops").is_array()) {
      has_loops = true;
      for (const auto& l : r->at("loops")) {
        ++loops;
        stopped += l.value("stopped_early", false);
      }
    }
  }
  const double n = static_cast<double>(records.size());
  const bool any = !succ.empty(), all8 = checked8 == static_cast<long>(records.size());
  nlohmann::json s = {
      {"instances", records.size()},
      {"successes", succ.size()},
      {"asr", 100.0 * succ.size() / n},
      {"successes_8bit", all8 ? nlohmann::json(ok8) : nlohmann::json()},
      {"asr_8bit", OrNull(all8, 100.0 * ok8 / n)},
      {"max_queries", OrNull(any, any ? *std::max_element(succ.begin(), succ.end()) : 0)},
      {"mean_queries",
       OrNull(any, any ? std::accumulate(succ.begin(), succ.end(), 0.0) / succ.size() : 0)},
      {"median_queries", OrNull(any, any ? MedianOf(succ) : 0)},
      {"mean_queries_fail_at_budget", all / n},
      {"seconds_per_instance", secs / n},
      {"model_fraction", secs > 0 ? model / secs : 0.0}};
  // The radius as given and as enforced (8-bit L_inf queries: the grid radius; issue #55).
  const nlohmann::json& first = *records.front();
  s["epsilon"] = first.value("epsilon", nlohmann::json());
  s["epsilon_effective"] = first.value("epsilon_effective", nlohmann::json());
  if (has_loops) {
    s["perturbation_loops"] = loops;
    s["loops_stopped_early"] = stopped;
  }
  return s;
}

nlohmann::json SummarizeRecords(const std::vector<nlohmann::json>& records) {
  std::vector<const nlohmann::json*> p;
  p.reserve(records.size());
  for (const auto& r : records) p.push_back(&r);
  return SummarizeRecords(p);
}

}  // namespace advbo::experiment
