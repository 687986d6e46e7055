#include "attacks/attack.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <stdexcept>

#include "text/settings.h"
namespace advbo::attacks {

double NowSeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::vector<std::pair<std::string, std::string>> SplitAttackSettings(const std::string& spec,
                                                                     const std::string& text) {
  return text::SplitSettings(text, "attack '" + spec + "'");
}

double SettingNumber(const std::string& spec, const std::string& key, const std::string& text) {
  size_t used = 0;
  double v = NAN;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size() || !std::isfinite(v))
    throw std::invalid_argument("attack '" + spec + "': " + key + " must be a number, got '" +
                                text + "'");
  return v;
}

std::vector<std::pair<std::string, double>> ParseAttackSettings(const std::string& spec,
                                                                const std::string& text) {
  std::vector<std::pair<std::string, double>> out;
  for (const auto& [key, value] : SplitAttackSettings(spec, text))
    out.emplace_back(key, SettingNumber(spec, key, value));
  return out;
}

int SettingInteger(const std::string& spec, const std::string& key, double v, int lo, int hi) {
  if (v != std::floor(v) || v < lo || v > hi)
    throw std::invalid_argument("attack '" + spec + "': " + key + " must be an integer in [" +
                                std::to_string(lo) + ", " + std::to_string(hi) + "]");
  return static_cast<int>(v);
}

double SettingInRange(const std::string& spec, const std::string& key, double v, double lo,
                      double hi, bool lo_open) {
  if (!(lo_open ? v > lo : v >= lo) || !(v <= hi)) {
    char range[96];
    std::snprintf(range, sizeof range, "%s%g, %g]", lo_open ? "(" : "[", lo, hi);
    throw std::invalid_argument("attack '" + spec + "': " + key + " must be in " + range);
  }
  return v;
}

std::string ThreatModelMismatch(const Attack& attack, const std::string& spec, oracle::Norm norm,
                                oracle::Feedback feedback) {
  const auto fits = [&](const Attack& a) {
    const auto n = a.norms();
    return a.feedback() == feedback && std::find(n.begin(), n.end(), norm) != n.end();
  };
  if (fits(attack)) return "";
  std::string names;
  for (const auto& name : AttackNames())
    if (fits(*MakeAttack(name, AttackContext{}))) names += (names.empty() ? "" : ", ") + name;
  const bool label = attack.feedback() == oracle::Feedback::kLabel;
  std::string norms;
  for (oracle::Norm n : attack.norms())
    norms += (norms.empty() ? "" : "|") + std::string(oracle::NormName(n));
  return "attack '" + spec + "' is a " + (label ? "hard-label" : "score-based") + " " + norms +
         " attack; --feedback " + oracle::FeedbackName(feedback) + " --norm " +
         oracle::NormName(norm) + " needs one of: " + (names.empty() ? "(none yet)" : names);
}

const std::vector<float>& LabelAttack::TargetStart(const oracle::QueryOracle& oracle) const {
  if (oracle.start_image().empty())
    throw std::invalid_argument("attack " + name_ +
                                ": a targeted run needs a start image of the target class "
                                "(QueryOracle::start_image); advbo attack/bench pick one");
  return oracle.start_image();
}

AttackResult LabelAttack::RunFromStart(
    oracle::QueryOracle& oracle, const std::string& prefix,
    const std::function<bool(std::vector<float>*)>& start,
    const std::function<int(std::vector<float>)>& iterate) const {
  const double t0 = NowSeconds();
  std::vector<float> x(oracle.clean().size());
  const bool started = start(&x);
  const long start_query = started ? oracle.queries() : -1;
  const int iterations = started ? iterate(std::move(x)) : 0;
  AttackResult r;
  FinishResult(oracle, t0, &r);
  r.details[prefix + "_iterations"] = iterations;
  r.details[prefix + "_start"] =
      start_query > 0 ? nlohmann::json(start_query) : nlohmann::json(nullptr);
  return r;
}

void FinishResult(const oracle::QueryOracle& oracle, double start_seconds, AttackResult* r) {
  r->success = oracle.succeeded();
  r->queries = r->success ? oracle.first_success_query() : oracle.queries();
  if (oracle.min_distance()) {
    // The distance goal: a success at eps is the first improvement of the closest adversarial
    // query to within eps (its image, the final closest query, is then inside the ball).
    r->success = oracle.best_distance() <= oracle.epsilon();
    r->queries = oracle.queries();
    for (const auto& [q, dist] : oracle.distance_trace())
      if (dist <= oracle.epsilon()) {
        r->queries = q;
        break;
      }
  }
  r->best_objective = oracle.best_objective();
  const bool label = oracle.feedback_type() == oracle::Feedback::kLabel;
  // A failed label-feedback run's best image is its closest adversarial query, outside the
  // ball: it answers with the clean image and keeps that query apart.
  r->adversarial = r->success && oracle.min_distance() ? oracle.best_image()
                   : r->success                        ? oracle.success_image()
                   : label                             ? oracle.clean()
                                                       : oracle.best_image();
  if (r->adversarial.empty()) r->adversarial = oracle.clean();
  if (label && std::isfinite(oracle.best_distance())) r->closest_adversarial = oracle.best_image();
  r->seconds = NowSeconds() - start_seconds;
  r->model_seconds = oracle.model_seconds();
  r->wait_seconds = oracle.wait_seconds();
  r->bo_seconds = std::max(0.0, r->seconds - r->model_seconds - r->wait_seconds);
}

}  // namespace advbo::attacks
