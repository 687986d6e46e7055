#include "experiment/spec.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>
#include <sstream>
#include <stdexcept>

#include "attacks/attack.h"
#include "oracle/classifier.h"
#include "oracle/lockstep.h"
#include "oracle/oracle.h"

namespace advbo::experiment {

std::string FormatNumber(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%g", v);
  return b;
}

void CheckLinfRadius(const char* option, const std::optional<double>& v) {
  if (v) oracle::BallShape{oracle::Norm::kLinf, *v}.Check(option);
}

namespace {

// --session: printable ASCII without spaces (it is sent as a header), for a served model.
void CheckSession(const ExperimentSpec& s) {
  if (s.session.empty()) return;
  if (s.session.size() > 128)
    throw std::invalid_argument("--session must be 1..128 characters, got " +
                                std::to_string(s.session.size()));
  for (unsigned char ch : s.session)
    if (ch <= ' ' || ch >= 127)
      throw std::invalid_argument(
          "--session '" + s.session +
          "': only printable ASCII characters without spaces (it is sent as a header)");
  if (!oracle::IsModelUrl(s.model))
    throw std::invalid_argument("--session names a served model's defense sessions; --model " +
                                (s.model.empty() ? std::string("(the shipped file)") : s.model) +
                                " is not a served model (http://...)");
}

}  // namespace

void Validate(const ExperimentSpec& s) {
  if (s.attacks.empty()) throw std::invalid_argument("no attack given");
  std::set<std::string> seen;
  for (const auto& a : s.attacks) {
    attacks::MakeAttack(a, attacks::AttackContext{});  // throws naming the problem
    if (!seen.insert(a).second) throw std::invalid_argument("attack '" + a + "' is listed twice");
  }
  if (s.untargeted && s.target)
    throw std::invalid_argument("choose one of --targeted, --target K, --untargeted");
  if (!s.setup_queries && s.output == "auto")
    throw std::invalid_argument(
        "--no-setup-queries needs --output logits or --output probs (detecting the output "
        "kind scores two probe images)");
  if (s.target && *s.target < 0)
    throw std::invalid_argument("--target must be a class index >= 0, got " +
                                std::to_string(*s.target));
  if (s.indices.empty() && s.num_images && *s.num_images < 1)
    throw std::invalid_argument(
        "--num-images must be >= 1 (the number of correctly classified "
        "images to attack), got " +
        std::to_string(*s.num_images));
  if (!s.classes.empty() && s.data.empty())
    throw std::invalid_argument(
        "--classes orders the classes of your own data (--data); the shipped datasets' "
        "classes are already the shipped models' order");
  if (s.goal != "success" && s.goal != "min-distance")
    throw std::invalid_argument("goal must be 'success' or 'min-distance', got '" + s.goal + "'");
  if (s.goal == "min-distance" && s.feedback != "label")
    throw std::invalid_argument(
        "goal min-distance is for the hard-label attacks (feedback label): score-based "
        "attacks keep inside the ball, so they have no distance to shrink");
  if (!s.start_images.empty() && (s.feedback != "label" || s.untargeted))
    throw std::invalid_argument(
        "--start-images is for targeted hard-label runs (--feedback label with --targeted or "
        "--target K): their attacks start from an image of the target class");
  CheckLinfRadius("--defender-eps", s.defender_eps);
  if (s.budget < 1 || s.budget > kMaxBudget)
    throw std::invalid_argument("--budget must be in 1.." + std::to_string(kMaxBudget) +
                                " queries per instance, got " + std::to_string(s.budget));
  if (s.threads < 0 || s.threads > kMaxThreads)
    throw std::invalid_argument("--threads must be in 0.." + std::to_string(kMaxThreads) +
                                " (0 = LibTorch's default), got " + std::to_string(s.threads));
  if (!s.normalize.empty()) oracle::Normalization::Parse(s.normalize);
  if (!(s.http_timeout > 0) || !(s.http_timeout <= kMaxHttpTimeout))
    throw std::invalid_argument("--http-timeout must be in (0, " + FormatNumber(kMaxHttpTimeout) +
                                "] seconds, got " + FormatNumber(s.http_timeout));
  if (s.http_retries < 0 || s.http_retries > 100)
    throw std::invalid_argument("--http-retries must be in 0..100, got " +
                                std::to_string(s.http_retries));
  CheckSession(s);
  oracle::ParseModelGraph(s.model_graph);
  if (s.lockstep < 0 || s.lockstep > oracle::kMaxLockstepLanes)
    throw std::invalid_argument("--lockstep must be in 0.." +
                                std::to_string(oracle::kMaxLockstepLanes) + " (0 = auto), got " +
                                std::to_string(s.lockstep));
  if (s.lockstep > 1 && oracle::IsModelUrl(s.model))
    throw std::invalid_argument(
        "--lockstep " + std::to_string(s.lockstep) +
        ": a served model answers one instance's session per request; use --lockstep 1 or 0");
  if (s.workers < 0 || s.workers > oracle::kMaxLockstepGroups)
    throw std::invalid_argument("--workers must be in 0.." +
                                std::to_string(oracle::kMaxLockstepGroups) + " (0 = auto), got " +
                                std::to_string(s.workers));
  if (s.workers > 1 && oracle::IsModelUrl(s.model))
    throw std::invalid_argument("--workers " + std::to_string(s.workers) +
                                ": a served model is scored one call at a time; use --workers 1 "
                                "or 0");
  if (s.clean_images < 0)
    throw std::invalid_argument("--clean-images must be >= 0, got " +
                                std::to_string(s.clean_images));
  if (s.verify_draws < 1 || s.verify_draws > 1000)
    throw std::invalid_argument("--verify-draws must be in 1..1000, got " +
                                std::to_string(s.verify_draws));
  CheckImageIndices(s.indices);
}

int AutoLockstepLanes(size_t jobs, int input_size) {
  if (input_size < kAutoLockstepMinInput) return 1;
  int lanes = 1;
  while (lanes * 2 <= kAutoLockstepLanes && static_cast<size_t>(lanes) * 2 <= jobs) lanes *= 2;
  return lanes;
}

int AutoWorkers(size_t jobs, int cores) {
  return static_cast<int>(std::max<size_t>(1, std::min<size_t>(std::max(cores, 1), jobs)));
}

void CheckImageIndices(const std::vector<int>& indices) {
  std::set<int> seen;
  for (int i : indices) {
    if (i < 0)
      throw std::invalid_argument("--indices must be image indices >= 0, got " + std::to_string(i));
    if (!seen.insert(i).second)
      throw std::invalid_argument("--indices lists image " + std::to_string(i) +
                                  " twice (each instance is attacked once)");
  }
}

std::vector<std::string> SplitAttackList(const std::string& list, const std::string& option) {
  std::vector<std::string> names;
  std::stringstream ss(list);
  for (std::string n; std::getline(ss, n, ',');) {
    if (n.empty()) continue;
    const auto eq = n.find('=');
    const bool continues =
        eq != std::string::npos && n.substr(0, eq).find(':') == std::string::npos;
    if (continues && !names.empty() && names.back().find(':') != std::string::npos)
      names.back() += "," + n;
    else
      names.push_back(n);
  }
  if (names.empty()) throw std::invalid_argument(option + " names no attack ('" + list + "')");
  return names;
}

nlohmann::json RecordSettings(const nlohmann::json& r) {
  nlohmann::json s;
  for (const char* k : {"budget", "epsilon", "seed", "model", "dataset", "threat_model"})
    s[k] = r.contains(k) ? r.at(k) : nlohmann::json(nullptr);
  s["defense"] = r.contains("defense") ? r.at("defense") : nlohmann::json("none");
  s["normalize"] = r.contains("normalize") ? r.at("normalize") : nlohmann::json("none");
  s["pixels"] = r.contains("pixels") ? r.at("pixels") : nlohmann::json("float");
  s["norm"] = r.contains("norm") ? r.at("norm") : nlohmann::json("linf");
  s["feedback"] = r.contains("feedback") ? r.at("feedback") : nlohmann::json("scores");
  s["goal"] = r.contains("goal") ? r.at("goal") : nlohmann::json("success");
  // Records made before the frozen graph existed were all scored by the plain module.
  s["model_graph"] = r.contains("model_graph") ? r.at("model_graph") : nlohmann::json("plain");
  // Records before lockstep were scored one call at a time.
  s["lockstep"] = r.contains("lockstep") ? r.at("lockstep") : nlohmann::json(1);
  return s;
}

std::string SettingsMismatch(const nlohmann::json& record, const nlohmann::json& settings) {
  const nlohmann::json have = RecordSettings(record);
  for (const auto& [key, want] : settings.items())
    if (have.at(key) != want)
      return key + " " + have.at(key).dump() + " (the records) vs " + want.dump() + " (now)";
  return "";
}

}  // namespace advbo::experiment
