#include "experiment/summary.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <stdexcept>
#include <string>

namespace advbo::experiment {
namespace {

nlohmann::json OrNull(bool has, double v) { return has ? nlohmann::json(v) : nlohmann::json(); }

// Median and mean of the closest adversarial distance at each checkpoint of the records that
// carry "distance_at" (null entries: no adversarial query yet, +inf for the median).
nlohmann::json SummarizeDistances(const std::vector<const nlohmann::json*>& records) {
  std::map<long, std::vector<double>> at;
  for (const nlohmann::json* r : records) {
    if (!r->contains("distance_at") || !r->at("distance_at").is_object()) continue;
    for (const auto& [key, v] : r->at("distance_at").items())
      at[std::stol(key)].push_back(v.is_number() ? v.get<double>()
                                                 : std::numeric_limits<double>::infinity());
  }
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [q, d] : at) {
    std::vector<double> found;
    for (double x : d)
      if (std::isfinite(x)) found.push_back(x);
    const double median = Median(d);
    out[std::to_string(q)] = {
        {"median", OrNull(std::isfinite(median), median)},
        {"mean",
         OrNull(!found.empty(),
                found.empty() ? 0.0
                              : std::accumulate(found.begin(), found.end(), 0.0) / found.size())},
        {"found", found.size()}};
  }
  return out;
}

}  // namespace

double Median(std::vector<double> v) {
  if (v.empty()) throw std::invalid_argument("Median: no values");
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double DistanceWithin(const std::vector<std::pair<long, double>>& trace, long q) {
  double best = std::numeric_limits<double>::infinity();
  for (const auto& [index, dist] : trace) {
    if (index > q) break;
    best = std::min(best, dist);
  }
  return best;
}

nlohmann::json DistanceAtCheckpoints(const std::vector<std::pair<long, double>>& trace,
                                     long budget) {
  nlohmann::json out = nlohmann::json::object();
  for (long q : kDistanceCheckpoints) {
    if (q > budget) break;
    const double d = DistanceWithin(trace, q);
    out[std::to_string(q)] = std::isfinite(d) ? nlohmann::json(d) : nlohmann::json(nullptr);
  }
  return out;
}

nlohmann::json SummarizeRecords(const std::vector<const nlohmann::json*>& records) {
  if (records.empty()) throw std::invalid_argument("SummarizeRecords: no records");
  std::vector<double> succ;
  double all = 0, secs = 0, model = 0, wait = 0, bo = 0;
  long ok8 = 0, checked8 = 0, loops = 0, stopped = 0;
  bool has_loops = false;
  long bad = 0, watched = 0, watched_queries = 0;  // bad queries of the records that count them
  for (const nlohmann::json* r : records) {
    if (r->contains("bad_queries") && r->at("bad_queries").is_number()) {
      bad += r->at("bad_queries").get<long>();
      ++watched;
      watched_queries += r->value("queries_used", r->at("queries").get<long>());
    }
    const bool ok = r->at("success").get<bool>();
    if (r->contains("quantized_success") && r->at("quantized_success").is_boolean()) {
      ++checked8;
      ok8 += ok && r->at("quantized_success").get<bool>();
    }
    const double q = r->at("queries").get<double>();
    if (ok) succ.push_back(q);
    all += ok ? q : r->at("budget").get<double>();
    secs += r->at("seconds").get<double>();
    const double r_model = r->at("model_seconds").get<double>();
    const double r_wait = r->value("wait_seconds", 0.0);
    model += r_model;
    wait += r_wait;
    bo += r->value("bo_seconds", r->at("seconds").get<double>() - r_model - r_wait);
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
      {"median_queries", OrNull(any, any ? Median(succ) : 0)},
      {"mean_queries_fail_at_budget", all / n},
      {"seconds_per_instance", secs / n},
      {"model_fraction", secs > 0 ? model / secs : 0.0},
      {"wait_fraction", secs > 0 ? wait / secs : 0.0},
      {"bo_over_model", OrNull(model > 0, model > 0 ? bo / model : 0)}};
  // The radius as given and as enforced (8-bit L_inf queries: the grid radius).
  const nlohmann::json& first = *records.front();
  s["epsilon"] = first.value("epsilon", nlohmann::json());
  s["epsilon_effective"] = first.value("epsilon_effective", nlohmann::json());
  if (has_loops) {
    s["perturbation_loops"] = loops;
    s["loops_stopped_early"] = stopped;
  }
  if (nlohmann::json d = SummarizeDistances(records); !d.empty()) s["distance_at"] = d;
  // Under the min-distance goal every run spends its budget and a success means "within
  // eps": without an eps the user chose there is no success rate to report.
  bool eps_unchosen = false;
  for (const auto* r : records) eps_unchosen |= r->value("epsilon_given", true) == false;
  if (eps_unchosen) {
    s["asr"] = nullptr;
    s["asr_8bit"] = nullptr;
    s["asr_note"] =
        "no success rate: --goal min-distance without --eps (give --eps to count the runs whose "
        "closest adversarial query lies within it)";
  }
  if (watched > 0) {
    s["bad_queries_mean"] = static_cast<double>(bad) / watched;
    s["bad_query_share"] = watched_queries > 0 ? static_cast<double>(bad) / watched_queries : 0.0;
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
