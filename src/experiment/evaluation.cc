#include "experiment/evaluation.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

#include "attacks/adaptive/adaptive.h"
#include "attacks/registry.h"
#include "data/datasets.h"
#include "defenses/defense.h"
#include "defenses/game_defense.h"
#include "experiment/evaluate.h"
#include "experiment/records.h"
#include "experiment/reference.h"
#include "experiment/runner.h"
#include "experiment/summary.h"
#include "experiment/trust_checks.h"
#include "text/numbers.h"

namespace advbo::experiment {
namespace fs = std::filesystem;
namespace {

std::string Fmt(double v, int decimals = 1) { return text::FormatFixed(v, decimals); }
std::string Pct(double v) { return Fmt(100.0 * v, 1) + " %"; }

// The budget per image of a summary (written "budget_per_image" before it had one name).
long ImageBudget(const nlohmann::json& summary) {
  return summary.contains("budget") ? summary.at("budget").get<long>()
                                    : summary.at("budget_per_image").get<long>();
}

// The run's settings as each attack record carries them: all but the budget, which in a
// record is its attack's share (per instance) and in the settings the image's (per image).
nlohmann::json RecordSettings(nlohmann::json settings) {
  settings.erase("budget");
  return settings;
}

// A line for the user, when the caller listens.
void Note(const EvaluationHooks& hooks, const std::string& line, bool warning = false) {
  if (hooks.note) hooks.note(line, warning);
}

// Where an evaluation's time went: this invocation's ensemble wall time and each attack's
// summed lane seconds in it; a merge gives each attack's wall seconds summed over its shards
// (by_attack) instead.
struct RunTime {
  double wall_seconds = 0;
  std::map<std::string, double> lane_seconds;
  std::map<std::string, double> by_attack;
  // Adds a shard summary's per-attack wall seconds (its time_by_attack) to by_attack.
  void AddShard(const nlohmann::json& summary) {
    const nlohmann::json times = summary.value("time_by_attack", nlohmann::json::object());
    for (const auto& [k, v] : times.items()) by_attack[k] += v.value("wall_seconds", 0.0);
  }
};

// What a run of `advbo evaluate` attacks: the experiment's spec (every image of the run, so
// each instance keeps its seed whatever the shard), the ensemble in order (the defense's
// adaptive attack last), all images looked at and this shard's.
struct EvaluatePlan {
  ExperimentSpec spec;
  std::vector<std::string> order, plain;  // as run (adaptive members wrapped) and as given
  std::function<std::string(const std::string&)> adaptive_of;  // the defense's adaptive attack
  std::string wrapper;  // its wrapper's name ("aaa-adaptive", "eot", ...), "" = none
  std::vector<int> images, mine;
  std::vector<double> shares;  // of the per-image budget, one per attack of `order`
  int shard_k = 1, shard_n = 1;
};

// The budget split: "" = equal shares; else one positive weight per attack of `order`
// (the adaptive attack included), normalised.
std::vector<double> ParseSplit(const std::string& split, const std::vector<std::string>& order) {
  std::vector<double> w;
  if (split.empty()) return std::vector<double>(order.size(), 1.0 / order.size());
  std::stringstream ss(split);
  for (std::string piece; std::getline(ss, piece, ',');) {
    double v = 0;
    try {
      v = text::ParseNumberOrFraction(piece, "--split");
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument("--split '" + split + "': " + e.what());
    }
    if (!(v > 0)) throw std::invalid_argument("--split '" + split + "': weights must be > 0");
    w.push_back(v);
  }
  if (w.size() != order.size()) {
    std::string names;
    for (const auto& o : order) names += (names.empty() ? "" : ",") + o;
    throw std::invalid_argument("--split '" + split + "' has " + std::to_string(w.size()) +
                                " weights for " + std::to_string(order.size()) +
                                " ensemble attacks (" + names + ")");
  }
  // Scaled by the largest weight first: the sum of weights near the largest double would
  // overflow (1e308,1e308 gave shares of 0).
  const double top = *std::max_element(w.begin(), w.end());
  double sum = 0;
  for (double& v : w) sum += v /= top;
  for (double& v : w) v /= sum;
  return w;
}

// The settings of `advbo evaluate` that change its records besides Experiment::Settings()
// (which every record carries): the one list that resume and `evaluate merge` check, carried
// by every record ("evaluation") and by the summary. A run that differs in any of them
// cannot add to the records of another.
nlohmann::json EvaluationSettings(const EvaluatePlan& p) {
  nlohmann::json split = nlohmann::json::object();
  for (size_t k = 0; k < p.order.size(); ++k) split[p.order[k]] = p.shares[k];
  return {{"budget", p.spec.budget},
          {"budget_unit", BudgetUnit(BudgetUse::kEvaluate)},
          {"budget_split", split},
          {"ensemble", p.order},
          {"bad_queries", p.spec.bad_queries},
          {"setup_queries", p.spec.setup_queries},
          {"verify_draws", p.spec.verify_draws},
          {"clean_images", p.spec.clean_images}};
}

// Where `have` (a record's or a summary's "evaluation") differs from `want`: "KEY HAVE vs
// WANT", or "" when it does not.
std::string EvaluationMismatch(const nlohmann::json& recorded, const nlohmann::json& want) {
  if (!recorded.is_object())
    return "the evaluate settings are not recorded (made by an older advbo)";
  nlohmann::json have = recorded;
  if (have.contains("budget_per_image") && !have.contains("budget")) {
    // Written before the budget had one name: the same budget per image.
    have["budget"] = have["budget_per_image"];
    have["budget_unit"] = BudgetUnit(BudgetUse::kEvaluate);
    have.erase("budget_per_image");
  }
  for (const auto& [key, value] : want.items())
    if (have.value(key, nlohmann::json()) != value)
      return key + " " + have.value(key, nlohmann::json()).dump() + " vs " + value.dump();
  return "";
}

// An EOT member needs its k samples per query within its share of the budget (the share
// when every attack before it spent its own; unused queries only add to it).
void CheckEotShares(const EvaluatePlan& p, bool no_adaptive) {
  for (size_t j = 0; j < p.order.size(); ++j) {
    const long k = attacks::EotSamplesPerQuery(p.order[j]);
    long before = 0;
    for (size_t i = 0; i < j; ++i) before += EnsembleShare(p.spec.budget, before, p.shares, i);
    const long share = EnsembleShare(p.spec.budget, before, p.shares, j);
    if (k > share)
      throw std::invalid_argument(
          "--budget " + std::to_string(p.spec.budget) + ": the ensemble attack " + p.order[j] +
          " gets " + std::to_string(share) +
          " model queries per image (its --split share), "
          "fewer than its " +
          std::to_string(k) +
          " EOT samples per query; raise --budget, "
          "give it a larger --split share" +
          (no_adaptive ? std::string() : ", or run the plain ensemble (--no-adaptive)"));
  }
}

EvaluatePlan PlanEvaluate(const EvaluationOptions& a) {
  if (a.out_dir.empty()) throw std::invalid_argument("-o/--out (the output folder) is required");
  if (fs::exists(a.out_dir) && !fs::is_directory(a.out_dir))
    throw std::invalid_argument("-o/--out " + a.out_dir + ": is a file, not a folder");
  if (a.spec.target)
    throw std::invalid_argument(
        "advbo evaluate measures untargeted robust accuracy; --targeted and --target do not "
        "apply");
  if (!a.spec.attacks.empty())
    throw std::invalid_argument("an evaluation's attacks are its ensemble (--ensemble)");
  if (a.shard_n < 1 || a.shard_k < 1 || a.shard_k > a.shard_n)
    throw std::invalid_argument("--shard must be k/n with 1 <= k <= n, got " +
                                std::to_string(a.shard_k) + "/" + std::to_string(a.shard_n));
  if (a.spec.goal != "success")
    throw std::invalid_argument(
        "advbo evaluate measures robust accuracy at eps; --goal min-distance is for advbo "
        "attack and advbo bench");
  EvaluatePlan p;
  p.shard_k = a.shard_k;
  p.shard_n = a.shard_n;
  EvaluationOptions args = a;
  args.spec.untargeted = true;
  // The images looked at: --indices, else the first -n of the data (clean errors count as
  // not robust, so they are part of the denominator); of the user's data at most all of it
  // (default: all of an image folder or file).
  p.images = args.spec.indices;
  if (p.images.empty()) {
    // -n is checked against the data's size before any list is made (-n 10^8
    // grew past 3 GB first).
    const data::ImageSet all = LoadImages(args.spec.dataset, args.spec.data, args.spec.format);
    const int size = static_cast<int>(all.size());
    int n = args.spec.num_images.value_or(args.spec.data.empty() ? 10 : size);
    if (args.spec.num_images && *args.spec.num_images > size)
      throw std::invalid_argument("-n/--num-images " + std::to_string(*args.spec.num_images) +
                                  " exceeds the " + std::to_string(size) + " images of " +
                                  (args.spec.data.empty()
                                       ? "the shipped " + args.spec.dataset + " test set"
                                       : args.spec.data));
    n = std::min(n, size);
    for (int i = 0; i < n; ++i) p.images.push_back(i);
  }
  for (size_t k = 0; k < p.images.size(); ++k)
    if (static_cast<int>(k % p.shard_n) == p.shard_k - 1) p.mine.push_back(p.images[k]);
  if (p.mine.empty())
    throw std::invalid_argument("shard " + std::to_string(a.shard_k) + "/" +
                                std::to_string(a.shard_n) + " has no image");
  args.spec.indices = p.images;
  p.plain = SplitAttackList(
      a.ensemble.empty() ? attacks::DefaultEnsemble(oracle::ParseNorm(args.spec.norm),
                                                    oracle::ParseFeedback(args.spec.feedback))
                         : a.ensemble,
      "--ensemble");
  p.order = p.plain;
  p.spec = args.spec;
  // Behind a defense with an adaptive attack every member is wrapped by it (never twice):
  // a plain member would report the defense's number, not robustness.
  const std::string defense_spec = p.spec.defense;
  p.adaptive_of = [defense_spec](const std::string& base) {
    return defenses::IsGameDefense(defense_spec)
               ? defenses::EotWrapped(base)
               : defenses::ParseDefense(defense_spec).AdaptiveAttack(base);
  };
  p.wrapper = AdaptiveWrapperName(p.order.front(), p.adaptive_of);
  if (!a.no_adaptive) p.order = AdaptiveEnsemble(p.plain, p.adaptive_of);
  p.spec.attacks = p.order;  // validated with the rest of the spec by the Experiment
  p.shares = ParseSplit(a.split, p.order);
  if (p.spec.budget < static_cast<long>(p.order.size()))
    throw std::invalid_argument("--budget " + std::to_string(p.spec.budget) +
                                " is below one query per ensemble attack (" +
                                std::to_string(p.order.size()) + ")");
  CheckEotShares(p, a.no_adaptive);
  return p;
}

// An unsharded run over a folder of shards (the command that combines them): each attack's
// wall time is its shards' (summed, as a merge gives it) plus this invocation's share, so the
// table does not report 0 s for work the shards did.
void AddShardWallTimes(const std::string& out_dir, RunTime* time) {
  RunTime shards;
  for (const auto& f : ShardFiles(out_dir, "summary", ".json")) {
    if (f.filename() == "summary.json") continue;
    std::ifstream in(f);
    const nlohmann::json sm = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
    if (!sm.is_object()) throw std::runtime_error(f.string() + ": not a JSON summary");
    shards.AddShard(sm);
  }
  if (shards.by_attack.empty()) return;
  double lane_total = 0;
  for (const auto& [name, t] : time->lane_seconds) lane_total += t;
  for (const auto& [name, t] : time->lane_seconds)
    if (lane_total > 0) shards.by_attack[name] += time->wall_seconds * t / lane_total;
  time->by_attack = std::move(shards.by_attack);
}

// The records already there: this run's file and every other record file of the folder
// (records.jsonl and records.shard-*.jsonl: an unsharded run over a folder of shards, or a
// shard started after an unsharded run, counts them as done). Throws when one was made with
// other settings.
std::vector<nlohmann::json> ResumedRecords(const RecordFile& file, const EvaluationOptions& a,
                                           const EvaluatePlan& p, const Experiment& ex,
                                           const fs::path& records) {
  std::vector<nlohmann::json> all = file.resumed();
  std::set<RecordKey> seen;
  for (const auto& r : all) seen.insert(KeyOf(r));
  // A run present in two files (a shard that redid an unsharded run's image) counts once.
  for (const auto& f : ShardFiles(a.out_dir, "records", ".jsonl"))
    if (f.filename() != records.filename())
      for (auto& r : ReadRecords(f))
        if (seen.insert(KeyOf(r)).second) all.push_back(std::move(r));
  const nlohmann::json settings = RecordSettings(ex.Settings());
  const nlohmann::json evaluation = EvaluationSettings(p);
  for (const auto& r : all) {
    std::string diff = SettingsMismatch(r, settings);
    if (diff.empty()) {
      diff = EvaluationMismatch(r.value("evaluation", nlohmann::json()), evaluation);
      if (!diff.empty() && r.contains("evaluation")) diff += " (the records vs now)";
    }
    if (!diff.empty())
      throw std::invalid_argument(records.string() + " holds records made with other settings: " +
                                  diff + "; use another -o/--out folder");
  }
  return all;
}

// The reference records of a JSONL file (reference.jsonl; none when it does not exist yet):
// complete lines only (a line cut short by an interruption is dropped); each must match
// `settings`.
std::vector<nlohmann::json> ReadReferenceRecords(const fs::path& path,
                                                 const nlohmann::json& settings) {
  if (!fs::exists(path)) return {};
  return ReadJsonLines(path, [&](const nlohmann::json& r, const std::string& where) {
    if (!r.contains("image_index") || !r["image_index"].is_number_integer() ||
        !r.contains("reference_robust") || !r["reference_robust"].is_boolean())
      throw std::runtime_error(where + ": not a reference record");
    if (r.value("reference", nlohmann::json()) != settings)
      throw std::invalid_argument(path.string() +
                                  " holds reference records made with other settings; use "
                                  "another -o/--out folder");
  });
}

// The white-box reference on this shard's images (resuming reference.jsonl); returns every
// reference record of the run, or none with `why_not` set when it does not apply.
std::vector<nlohmann::json> RunReferenceStep(const EvaluationOptions& a, const EvaluatePlan& p,
                                             const Experiment& ex, const std::string& tag,
                                             const EvaluationHooks& hooks, std::string* why_not) {
  *why_not =
      a.reference == "none" ? "not asked for (--reference none)" : ReferenceNotApplicable(ex);
  if (!why_not->empty()) {
    Note(hooks, "white-box reference: does not apply: " + *why_not);
    return {};
  }
  const whitebox::ApgdOptions attacks = ReferenceAttacks(a.reference, a.apgd);
  const nlohmann::json settings = ReferenceSettings(ex, attacks);
  const int targets = settings.at("target_classes").get<int>();
  if (targets < a.apgd.target_classes)
    Note(hooks,
         "--reference-targets " + std::to_string(a.apgd.target_classes) + ": the model has " +
             std::to_string(ex.model().num_classes()) + " classes, so APGD-T targets the " +
             std::to_string(targets) + " other classes",
         true);
  const fs::path file = fs::path(a.out_dir) / ("reference" + tag + ".jsonl");
  // Every reference file of the folder (this run's, an earlier unsharded run's, the other
  // shards'): what they hold counts as done.
  std::vector<nlohmann::json> all;
  std::set<int> done;  // an image present in two files counts once
  for (const auto& f : ShardFiles(a.out_dir, "reference", ".jsonl"))
    for (auto& r : ReadReferenceRecords(f, settings))
      if (done.insert(r["image_index"].get<int>()).second) all.push_back(std::move(r));
  const std::set<int> mine(p.mine.begin(), p.mine.end());
  long todo = 0;
  for (const auto& inst : ex.instances()) todo += mine.count(inst.index) && !done.count(inst.index);
  if (todo == 0) return all;
  Note(hooks, std::string("white-box reference APGD-CE + APGD-T") +
                  (attacks.fab_target_classes > 0 ? " + FAB-T" : "") + " (Croce & Hein 2020; " +
                  std::to_string(a.apgd.iterations) + " steps, " + std::to_string(a.apgd.restarts) +
                  " restart(s), " + std::to_string(targets) + " target classes" +
                  (ex.pixels() == oracle::PixelSpace::k8bit ? ", iterates checked on the 8-bit grid"
                                                            : "") +
                  ") on " + std::to_string(todo) + " images");
  if (hooks.begin) hooks.begin("reference", todo);
  std::function<void(const whitebox::ApgdImageResult&)> save;
  if (!a.save_images.empty()) {
    fs::create_directories(a.save_images);
    save = [&](const whitebox::ApgdImageResult& r) {
      const auto& set = ex.images();
      data::WritePng(
          (fs::path(a.save_images) / ("reference_" + std::to_string(r.image_index) + ".png"))
              .string(),
          r.adversarial.data(), set.channels, set.height, set.width);
    };
  }
  const auto fresh = RunReference(
      ex, mine, done, attacks,
      [&](long finished, long, const std::string& status) {
        if (hooks.progress) hooks.progress(finished, status, false);
      },
      save);
  if (hooks.end) hooks.end();
  // Appended whole: the file holds complete runs only.
  std::string text;
  {
    std::ifstream in(file);
    std::ostringstream old;
    old << in.rdbuf();
    text = old.str();
  }
  if (!text.empty() && text.back() != '\n') text += '\n';
  for (const auto& r : fresh) {
    text += r.dump() + "\n";
    all.push_back(r);
  }
  WriteFileAtomic(file, text);
  return all;
}

// images.jsonl: one verdict per image.
std::string VerdictLines(const std::vector<ImageVerdict>& verdicts) {
  std::string lines;
  for (const auto& v : verdicts)
    lines +=
        nlohmann::json{
            {"image_index", v.image_index},
            {"clean_correct", v.clean_correct},
            {"robust", v.robust},
            {"broken_by",
             v.broken_by.empty() ? nlohmann::json(nullptr) : nlohmann::json(v.broken_by)},
            {"evaluated", v.evaluated},
            {"missing", v.missing.empty() ? nlohmann::json(nullptr) : nlohmann::json(v.missing)},
            {"queries", v.queries},
            {"attacks_run", v.attacks_run},
            {"reference_robust",
             v.reference_robust ? nlohmann::json(*v.reference_robust) : nlohmann::json(nullptr)},
            {"reference_broken_by", v.reference_broken_by.empty()
                                        ? nlohmann::json(nullptr)
                                        : nlohmann::json(v.reference_broken_by)}}
            .dump() +
        "\n";
  return lines;
}

// The black-box ensemble's rows of the table: budget and split, robust accuracy, the rows
// after each attack, verification, time, the saved images' largest perturbation, queries.
std::string EnsembleRows(const nlohmann::json& summary) {
  auto num = [&](const char* k) { return summary.at(k).get<double>(); };
  std::string table;
  const auto ci = summary.at("robust_accuracy_ci95");
  std::string split;
  for (const auto& name : summary.at("ensemble"))
    split += (split.empty() ? "" : ", ") + name.get<std::string>() + " " +
             Fmt(100.0 * summary.at("budget_split").at(name.get<std::string>()).get<double>(), 0) +
             " %";
  table += "budget                     " + std::to_string(ImageBudget(summary)) +
           " model queries per image over the ensemble (shares: " + split +
           "; unused queries pass on)\n";
  table += "robust accuracy            " + Pct(num("robust_accuracy")) + " (95 % CI " +
           Pct(ci[0].get<double>()) + " - " + Pct(ci[1].get<double>()) + "), black-box ensemble\n";
  if (summary.at("not_evaluated").get<long>() > 0)
    table += "  NOT EVALUATED            " +
             std::to_string(summary.at("not_evaluated").get<long>()) +
             " images (an attack's record is missing: counted not robust)\n";
  if (summary.at("upper_bound").get<bool>())
    for (const auto& why : summary.at("upper_bound_reasons"))
      table += "  UPPER BOUND              " + why.get<std::string>() + "\n";
  if (summary.at("ensemble") != summary.at("plain_ensemble")) {
    const auto& plain = summary.at("robust_accuracy_plain_ensemble");
    table += "  plain ensemble           " +
             (plain.is_null() ? std::string("not run (every member wrapped by the defense's "
                                            "adaptive attack; --no-adaptive runs it)")
                              : Pct(plain.get<double>())) +
             "\n";
  }
  for (const auto& step : summary.at("robust_accuracy_after")) {
    const std::string name = step.at("attack").get<std::string>();
    table += "  after " + name + ": " + Pct(step.at("robust_accuracy").get<double>()) + " (broke " +
             std::to_string(summary.at("broken_by").at(name).get<long>()) + " first)" +
             (step.at("upper_bound").get<bool>() ? ", upper bound" : "") + "\n";
  }
  if (summary.contains("verification")) {
    const auto& v = summary.at("verification");
    table += "verification               the attacks saw " +
             std::to_string(v.at("attack_successes").get<long>()) + " successes; " +
             std::to_string(v.at("verified_by_majority").get<long>()) +
             " held on most re-queries of the saved image (per-draw success rate " +
             Pct(v.at("per_draw_success_rate").get<double>()) + ")\n";
  }
  for (const auto& step : summary.at("robust_accuracy_after")) {
    const std::string name = step.at("attack").get<std::string>();
    const auto& t = summary.at("time_by_attack").at(name);
    table += "  time " + name + ": " + Fmt(t.value("wall_seconds", 0.0), 1) + " s wall (" +
             Fmt(t.value("lane_seconds", 0.0), 1) + " s summed over its " +
             std::to_string(t.at("runs").get<long>()) + " runs, which ran side by side)\n";
  }
  if (summary.at("max_perturbation_linf").is_number())
    table += "max L_inf of the " + std::to_string(summary.at("adversarial_images").get<long>()) +
             " saved adversarial images: " + Fmt(num("max_perturbation_linf"), 5) +
             " (enforced radius " + Fmt(num("epsilon_effective"), 5) + ")\n";
  table += "model queries per attacked image: mean " + Fmt(num("queries_mean"), 1) + ", median " +
           Fmt(num("queries_median"), 1) + ", max " + Fmt(num("queries_max"), 0) + "\n";
  return table;
}

// The white-box reference's rows: its robust accuracy (or why it does not apply) and, beside
// a black-box run, the combined worst case and the per-image gap.
std::string ReferenceRows(const nlohmann::json& summary, bool blackbox) {
  auto num = [&](const char* k) { return summary.at(k).get<double>(); };
  std::string table;
  const auto& ref = summary.at("reference");
  if (!ref.at("applies").get<bool>()) {
    table +=
        "white-box reference        does not apply: " + ref.at("reason").get<std::string>() + "\n";
    return table;
  }
  if (!summary.contains("reference_robust_accuracy") ||
      summary.at("reference_robust_accuracy").is_null()) {
    table += "white-box reference        not run on any image yet\n";
    return table;
  }
  const auto& rs = ref.at("settings");
  const bool fab = rs.value("fab_target_classes", 0) > 0;
  table += "white-box reference        " + Pct(num("reference_robust_accuracy")) +
           (fab ? " robust, APGD-CE + APGD-T + FAB-T (" : " robust, APGD-CE + APGD-T (") +
           std::to_string(rs.at("iterations").get<int>()) + " steps, " +
           std::to_string(rs.at("restarts").get<int>()) + " CE restart(s), " +
           std::to_string(rs.at("target_classes").get<int>()) + " targets, " +
           (rs.at("grid").get<bool>() ? "iterates checked on the 8-bit grid" : "float iterates") +
           ")\n";
  if (summary.at("reference_not_evaluated").get<long>() > 0)
    table += "  reference not run on     " +
             std::to_string(summary.at("reference_not_evaluated").get<long>()) + " images\n";
  if (blackbox) {
    table += "combined (best known)      " + Pct(num("combined_robust_accuracy")) +
             " robust (robust only where both failed)\n";
    table += "per-image gap              " +
             std::to_string(summary.at("robust_blackbox_only").get<long>()) +
             " images the ensemble left robust but white-box broke; " +
             std::to_string(summary.at("robust_reference_only").get<long>()) + " the other way\n";
  }
  return table;
}

}  // namespace

// The table is made from the summary alone, so that a merge prints the same table without
// the model.
std::string EvaluationTable(const nlohmann::json& summary) {
  auto num = [&](const char* k) { return summary.at(k).get<double>(); };
  const bool blackbox = !summary.at("ensemble").empty();
  std::string table;
  table += "model                      " + summary.at("model").get<std::string>() + "\n";
  table += "defense                    " + summary.at("defense").get<std::string>() + "\n";
  table +=
      "threat model               " + summary.at("threat_model_text").get<std::string>() + "\n";
  table += "images                     " + std::to_string(summary.at("images").get<long>()) + "\n";
  table += "clean accuracy             " + Pct(num("clean_accuracy")) + "\n";
  table +=
      blackbox ? EnsembleRows(summary) : "black-box ensemble         not run (--reference-only)\n";
  return table + ReferenceRows(summary, blackbox) + TrustCheckRows(summary);
}

namespace {

// The rows of the ensemble: the running robust accuracy after each attack (AutoAttack's log),
// each marked upper_bound when no working adaptive attack (one that broke an image) has
// challenged it yet behind a defense that has one, or when the per-image budget is below the
// documented default; the plain ensemble's number when its members all ran; the summary's
// upper_bound and its reasons. Reads summary's adaptive_wrapper and budget.
void AddEnsembleRows(nlohmann::json* summary, const std::vector<int>& images,
                     const std::vector<int>& misclassified, const std::vector<nlohmann::json>& all,
                     const std::vector<std::string>& order, const std::vector<std::string>& plain) {
  nlohmann::json& s = *summary;
  const std::string wrapper = s.value("adaptive_wrapper", std::string());
  const bool low_budget = ImageBudget(s) < DefaultBudget(BudgetUse::kEvaluate);
  const bool plain_ran = std::all_of(plain.begin(), plain.end(), [&](const std::string& m) {
    return std::find(order.begin(), order.end(), m) != order.end();
  });
  s["robust_accuracy_plain_ensemble"] =
      plain_ran ? SummarizeVerdicts(WorstCaseVerdicts(images, misclassified, all, plain),
                                    plain)["robust_accuracy"]
                : nlohmann::json(nullptr);
  nlohmann::json after = nlohmann::json::array();
  bool challenged = wrapper.empty();  // no adaptive attack needed: plain attacks see it all
  std::vector<std::string> adaptive;
  for (size_t k = 0; k < order.size(); ++k) {
    const std::vector<std::string> prefix(order.begin(), order.begin() + k + 1);
    const auto sk =
        SummarizeVerdicts(WorstCaseVerdicts(images, misclassified, all, prefix), prefix);
    const bool is_adaptive = !wrapper.empty() && order[k].find(wrapper) != std::string::npos;
    if (is_adaptive) adaptive.push_back(order[k]);
    if (is_adaptive && s.at("broken_by").value(order[k], 0L) > 0) challenged = true;
    after.push_back({{"attack", order[k]},
                     {"adaptive", is_adaptive},
                     {"robust_accuracy", sk["robust_accuracy"]},
                     {"upper_bound", !challenged || low_budget}});
  }
  s["robust_accuracy_after"] = after;
  s["adaptive_attacks"] = adaptive;
  nlohmann::json reasons = nlohmann::json::array();
  if (!challenged)
    reasons.push_back("no adaptive attack (" + wrapper +
                      ") broke an image: the defense's number is untested");
  if (low_budget)
    reasons.push_back("budget below the documented default of " +
                      std::to_string(DefaultBudget(BudgetUse::kEvaluate)) + " queries per image");
  s["upper_bound"] = !reasons.empty() && !order.empty();
  s["upper_bound_reasons"] = reasons;
  // Behind a randomised defense: what the attacks saw against what the re-queries confirmed.
  long saw = 0, verified = 0, draws = 0, adversarial_draws = 0;
  const std::set<std::string> in_order(order.begin(), order.end());
  for (const auto& r : all) {
    if (!in_order.count(r.value("attack", std::string())) || !r.contains("quantized_draws"))
      continue;
    if (!r.value("success", false)) continue;
    ++saw;
    verified += RecordBreaksImage(r);
    draws += r.at("quantized_draws").get<long>();
    adversarial_draws += r.at("quantized_adversarial_draws").get<long>();
  }
  if (draws > 0)
    s["verification"] = {{"attack_successes", saw},
                         {"verified_by_majority", verified},
                         {"draws", draws},
                         {"adversarial_draws", adversarial_draws},
                         {"per_draw_success_rate", static_cast<double>(adversarial_draws) / draws}};
}

// Per attack: its runs, their lane seconds summed (each run's own duration; lanes run side by
// side, so the sum exceeds the wall time) and its share of the run's wall time (`time`: the
// wall time apportioned by this invocation's lane seconds; summed over shards by a merge);
// the largest L_inf distance of a saved adversarial image from its clean one (AutoAttack's
// sanity line) and whether every saved image lies within the radius enforced.
void AddRecordStatistics(nlohmann::json* summary, const std::vector<nlohmann::json>& all,
                         const std::vector<std::string>& order, const RunTime& time) {
  nlohmann::json secs = nlohmann::json::object();
  double max_linf = 0;
  long saved = 0;
  const std::set<std::string> in_order(order.begin(), order.end());
  double lane_total = 0;
  for (const auto& [name, t] : time.lane_seconds) lane_total += t;
  for (const auto& name : order) {
    const auto lane = time.lane_seconds.find(name);
    const double wall = time.by_attack.count(name) ? time.by_attack.at(name)
                        : lane != time.lane_seconds.end() && lane_total > 0
                            ? time.wall_seconds * lane->second / lane_total
                            : 0.0;
    secs[name] = {{"runs", 0}, {"lane_seconds", 0.0}, {"wall_seconds", wall}};
  }
  for (const auto& r : all) {
    const std::string name = r.value("attack", std::string());
    if (!in_order.count(name)) continue;
    secs[name]["runs"] = secs[name]["runs"].get<long>() + 1;
    secs[name]["lane_seconds"] = secs[name]["lane_seconds"].get<double>() + r.value("seconds", 0.0);
    if (RecordBreaksImage(r)) {
      ++saved;
      max_linf = std::max(max_linf, r.value("quantized_linf", r.value("linf", 0.0)));
    }
  }
  (*summary)["time_by_attack"] = secs;
  (*summary)["wall_seconds"] = time.wall_seconds;
  // Each member's records summarised as attack and bench do (SummarizeRecords).
  nlohmann::json by_attack = nlohmann::json::object();
  for (const auto& name : order) {
    std::vector<const nlohmann::json*> rs;
    for (const auto& r : all)
      if (r.value("attack", std::string()) == name) rs.push_back(&r);
    if (!rs.empty()) by_attack[name] = SummarizeRecords(rs);
  }
  (*summary)["attacks"] = by_attack;
  (*summary)["adversarial_images"] = saved;
  (*summary)["max_perturbation_linf"] = saved ? nlohmann::json(max_linf) : nlohmann::json(nullptr);
}

// curves.csv: robust accuracy against the model queries per image (the plot black-box defense
// papers show), the reference's robust accuracy as a flat line; the curve's points go to `out`
// for the caller's plot (curves.png).
void WriteRobustCurves(const fs::path& dir, const std::string& tag,
                       const std::vector<ImageVerdict>& verdicts, const nlohmann::json& summary,
                       EvaluationResult* out) {
  const long budget = ImageBudget(summary);
  const long steps = std::min<long>(budget, 1000);
  const double n = static_cast<double>(std::max<size_t>(verdicts.size(), 1));
  std::vector<long> breaks;
  long correct = 0;
  for (const auto& v : verdicts) {
    correct += v.clean_correct && v.evaluated;
    if (v.break_query > 0) breaks.push_back(v.break_query);
  }
  std::sort(breaks.begin(), breaks.end());
  std::vector<double> curve(steps + 1);
  std::ostringstream csv;
  const bool ref = summary.contains("reference_robust_accuracy") &&
                   summary.at("reference_robust_accuracy").is_number();
  csv << "queries_per_image,robust_accuracy" << (ref ? ",reference_robust_accuracy" : "") << "\n";
  for (long k = 0; k <= steps; ++k) {
    const long q = budget * k / steps;
    const long broken = std::upper_bound(breaks.begin(), breaks.end(), q) - breaks.begin();
    curve[k] = 100.0 * static_cast<double>(correct - broken) / n;
    csv << q << "," << Fmt(curve[k] / 100.0, 4);
    if (ref) csv << "," << Fmt(summary.at("reference_robust_accuracy").get<double>(), 4);
    csv << "\n";
  }
  WriteFileAtomic(dir / ("curves" + tag + ".csv"), csv.str());
  out->curve = std::move(curve);
  out->curve_step = static_cast<double>(budget) / steps;
  out->curves_png = (dir / ("curves" + tag + ".png")).string();
}

// Verdicts, summary and table from every record of the run; writes images, summary, table and
// curves files (with the shard's tag) and fills the summary, table and curve of `out`.
void WriteEvaluateOutputs(const EvaluationOptions& a, const EvaluatePlan& p, const Experiment& ex,
                          const std::vector<nlohmann::json>& all,
                          const std::vector<nlohmann::json>& reference,
                          const std::string& reference_why_not, const std::string& tag,
                          const RunTime& time, const OutputProbe& probe, EvaluationResult* out) {
  const std::vector<std::string> order = a.reference_only ? std::vector<std::string>{} : p.order;
  auto verdicts = WorstCaseVerdicts(p.mine, ex.selection().skipped, all, order);
  if (reference_why_not.empty()) AttachReference(&verdicts, reference);
  nlohmann::json summary = SummarizeVerdicts(verdicts, order);
  summary["adaptive_wrapper"] = p.wrapper;
  summary["budget"] = p.spec.budget;
  summary["budget_unit"] = BudgetUnit(BudgetUse::kEvaluate);
  AddEnsembleRows(&summary, p.mine, ex.selection().skipped, all, order, p.plain);
  if (a.reference_only) {
    for (const char* k :
         {"robust", "robust_accuracy", "robust_accuracy_ci95", "robust_accuracy_plain_ensemble",
          "combined_robust", "combined_robust_accuracy", "robust_blackbox_only",
          "robust_reference_only"})
      summary[k] = nullptr;
  }
  summary["reference"] =
      reference_why_not.empty()
          ? nlohmann::json{{"applies", true},
                           {"settings",
                            ReferenceSettings(ex, ReferenceAttacks(a.reference, a.apgd))}}
          : nlohmann::json{{"applies", false}, {"reason", reference_why_not}};
  if (!reference_why_not.empty()) {
    summary["reference_robust_accuracy"] = nullptr;
    summary["combined_robust_accuracy"] = nullptr;
  }
  summary["model"] = RecordPath(ex.model_path());
  summary["defense"] = ex.defense().Spec();
  summary["threat_model_text"] =
      ex.DescribeRadius() +
      (ex.feedback() == oracle::Feedback::kLabel ? ", top-1 label only" : "") + ", " +
      oracle::PixelSpaceName(ex.pixels()) + " queries, untargeted, seed " +
      std::to_string(p.spec.seed);
  summary["ensemble"] = order;
  summary["plain_ensemble"] = p.plain;
  summary["epsilon"] = ex.epsilon();
  summary["epsilon_effective"] = ex.epsilon_effective();
  summary["norm"] = oracle::NormName(ex.norm());
  summary["pixels"] = oracle::PixelSpaceName(ex.pixels());
  summary["threat_model"] = ex.threat_model().ToJson();
  nlohmann::json split = nlohmann::json::object();
  for (size_t k = 0; k < p.order.size(); ++k) split[p.order[k]] = p.shares[k];
  summary["budget_split"] = split;
  summary["version"] = ADVBO_VERSION;
  summary["settings"] = ex.Settings();
  summary["setup_queries"] = ex.setup_queries();
  summary["shard"] = std::to_string(a.shard_k) + "/" + std::to_string(a.shard_n);
  summary["evaluation"] = EvaluationSettings(p);
  summary["evaluation_images"] = p.images;
  AddRecordStatistics(&summary, all, order, time);
  AddTrustChecks(&summary, reference, probe, !ex.model().outputs_logits());
  const fs::path dir(a.out_dir);
  if (!order.empty()) WriteRobustCurves(dir, tag, verdicts, summary, out);
  WriteFileAtomic(dir / ("images" + tag + ".jsonl"), VerdictLines(verdicts));
  WriteFileAtomic(dir / ("summary" + tag + ".json"), summary.dump(1) + "\n");
  out->table = EvaluationTable(summary);
  WriteFileAtomic(dir / ("table" + tag + ".txt"), out->table);
  out->summary = std::move(summary);
}

// The reference options' own checks (before any work).
void CheckReferenceOptions(const EvaluationOptions& a) {
  if (a.reference_only && a.reference == "none")
    throw std::invalid_argument("--reference-only needs the reference (not --reference none)");
  if (a.reference != "none") ReferenceAttacks(a.reference, a.apgd).Validate();
}

// The on_job hook of --save-images: the clean and the adversarial image of each image an
// attack broke (8-bit, inside the ball, verified adversarial: the image a user would save).
std::function<void(const JobResult&)> SaveBrokenImage(const std::string& folder,
                                                      const data::ImageSet& set) {
  return [folder, &set](const JobResult& job) {
    if (!RecordBreaksImage(job.record)) return;
    const std::string tag = std::to_string(job.record.at("image_index").get<int>());
    const fs::path dir(folder);
    data::WritePng((dir / ("clean_" + tag + ".png")).string(), job.clean.data(), set.channels,
                   set.height, set.width);
    data::WritePng((dir / ("adversarial_" + tag + ".png")).string(), job.quantized.data(),
                   set.channels, set.height, set.width);
  };
}

// The checks of a merge: every shard's probe (summed, the largest difference) and the merged
// reference records.
void AddMergedTrustChecks(nlohmann::json* summary, const std::vector<nlohmann::json>& shards,
                          const std::vector<nlohmann::json>& refs) {
  OutputProbe probe;
  for (const auto& sm : shards) probe.Add(OutputProbe::FromSummary(sm));
  const nlohmann::json& s = *summary;
  const bool probabilities =
      s.value("checks", nlohmann::json::object()).value("probability_outputs", false);
  const bool applies = s.at("reference").value("applies", false);
  AddTrustChecks(summary, applies ? refs : std::vector<nlohmann::json>{}, probe, probabilities);
}

}  // namespace

ExperimentSpec EvaluationOptions::EvaluationSpec() {
  ExperimentSpec spec;
  spec.attacks.clear();  // the ensemble is EvaluationOptions::ensemble
  spec.untargeted = true;
  spec.budget = DefaultBudget(BudgetUse::kEvaluate);
  spec.verify_draws = 10;
  return spec;
}

EvaluationResult Evaluate(const EvaluationOptions& a, const EvaluationHooks& hooks) {
  CheckReferenceOptions(a);
  const EvaluatePlan p = PlanEvaluate(a);
  const Experiment ex(p.spec);
  if (a.reference_only && !ReferenceNotApplicable(ex).empty())
    throw std::invalid_argument("--reference-only: the white-box reference does not apply: " +
                                ReferenceNotApplicable(ex));
  if (hooks.on_experiment) hooks.on_experiment(ex);
  const OutputProbe probe = ProbeRandomisedOutputs(ex);
  if (probe.randomised())
    Note(hooks,
         "the model's outputs are randomised (the same image scored twice differed by " +
             Fmt(probe.max_difference, 6) + "): see the checks in table.txt",
         true);
  CreatedFolders folders;
  folders.Create(a.out_dir);
  const std::string tag = ShardTag(p.shard_k, p.shard_n);
  const fs::path records = fs::path(a.out_dir) / ("records" + tag + ".jsonl");
  RecordFile file(records, /*staged=*/false);
  std::vector<nlohmann::json> all = ResumedRecords(file, a, p, ex, records);
  const std::set<int> in_shard(p.mine.begin(), p.mine.end());
  long attacked = 0;  // correctly classified images of this shard
  for (const auto& inst : ex.instances()) attacked += in_shard.count(inst.index);
  // Finished attack runs (resumed or from other shards) and whether each broke its image.
  std::map<RecordKey, EnsembleRun> done;
  for (const auto& r : all)
    done[KeyOf(r)] = {RecordBreaksImage(r), r.value("queries_used", r.value("queries", 0L))};
  std::string chain;
  for (const auto& o : p.order) chain += (chain.empty() ? "" : " > ") + o;
  Note(hooks, std::to_string(p.mine.size()) + " images (" + std::to_string(attacked) +
                  " correctly classified), ensemble " +
                  (a.reference_only ? std::string("(not run)") : chain) + ", budget " +
                  std::to_string(p.spec.budget) + " per image, " + ex.DescribeRadius() +
                  ", shard " + std::to_string(p.shard_k) + "/" + std::to_string(p.shard_n));
  // This invocation's ensemble wall time and each attack's summed lane time in it (records
  // resumed from an earlier run took none of it).
  RunTime time;
  if (!a.reference_only) {
    if (hooks.begin) hooks.begin("ensemble", attacked);
    EnsembleHooks ensemble;
    const nlohmann::json evaluation = EvaluationSettings(p);
    ensemble.on_record = [&](const nlohmann::json& record) {
      nlohmann::json r = record;
      r["evaluation"] = evaluation;
      file.Append(r);
      time.lane_seconds[r.value("attack", std::string())] += r.value("seconds", 0.0);
      all.push_back(std::move(r));
    };
    ensemble.progress = hooks.progress;
    if (!a.save_images.empty()) {
      folders.Create(a.save_images);
      ensemble.on_job = SaveBrokenImage(a.save_images, ex.images());
    }
    const auto t0 = std::chrono::steady_clock::now();
    RunEnsemble(ex, in_shard, done, p.spec.budget, p.shares, ensemble);
    time.wall_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (hooks.end) hooks.end();
  }
  if (p.shard_n == 1) AddShardWallTimes(a.out_dir, &time);
  file.Commit();
  std::string why_not;
  const std::vector<nlohmann::json> reference = RunReferenceStep(a, p, ex, tag, hooks, &why_not);
  EvaluationResult out;
  out.records = records.string();
  WriteEvaluateOutputs(a, p, ex, all, reference, why_not, tag, time, probe, &out);
  folders.Keep();
  if (out.summary["not_evaluated"].get<long>() > 0 && !a.reference_only) out.status = 3;
  return out;
}

namespace {

// `advbo evaluate merge`: the shards of separate folders combined into one (no query).
// What `evaluate merge` gathers from its folders.
struct MergeInput {
  std::map<RecordKey, nlohmann::json> records;
  std::map<RecordKey, std::string> record_file;  // where each record came from
  std::map<int, nlohmann::json> reference;
  std::map<int, bool> clean_correct;  // image -> correctly classified
  std::map<int, std::string> verdict_file;
  nlohmann::json first;  // the first shard's summary
  std::string first_name;
  std::vector<nlohmann::json> summaries;  // every shard's
  std::vector<std::string> shards;
};

// The fields of two records of one attack run that its verdict reads: two shards that ran
// the same run must agree on them.
bool SameOutcome(const nlohmann::json& a, const nlohmann::json& b) {
  for (const char* k : {"success", "quantized_success", "queries", "queries_used",
                        "adversarial_class", "instance_seed"})
    if (a.value(k, nlohmann::json()) != b.value(k, nlohmann::json())) return false;
  return true;
}

// The summaries of folder `in` into *m: each checked against the first read on every setting
// that changes results, with its images file beside it.
void ReadSummaries(const std::string& in, MergeInput* m) {
  if (!fs::is_directory(in)) throw std::runtime_error(in + ": not a folder of advbo evaluate");
  const auto summaries = ShardFiles(in, "summary", ".json");
  if (summaries.empty())
    throw std::runtime_error(in + ": no summary*.json (not an evaluate folder)");
  for (const auto& f : summaries) {
    std::ifstream is(f);
    nlohmann::json sm = nlohmann::json::parse(is, nullptr, false);
    if (sm.is_discarded() || !sm.is_object() || !sm.contains("settings"))
      throw std::runtime_error(f.string() + ": not an advbo evaluate summary");
    if (!sm.contains("evaluation") || !sm.contains("evaluation_images"))
      throw std::invalid_argument(f.string() +
                                  ": made by an older advbo (no \"evaluation\" settings or "
                                  "image list); rerun the shard to merge it");
    // The shard's verdicts file must be beside its summary: without it the shard's images
    // would silently drop out of the merge.
    const std::string name = f.filename().string();
    const fs::path images =
        f.parent_path() / ("images" + name.substr(7, name.size() - 7 - 5) + ".jsonl");
    if (!fs::exists(images))
      throw std::invalid_argument(images.string() + " is missing (" + f.string() +
                                  " is there): the folder is incomplete; rerun that shard");
    if (m->first.is_null()) {
      m->first = sm;
      m->first_name = f.string();
    }
    for (const char* k :
         {"settings", "plain_ensemble", "reference", "evaluation", "evaluation_images"})
      if (sm.value(k, nlohmann::json()) != m->first.value(k, nlohmann::json()))
        throw std::invalid_argument(f.string() + ": '" + k + "' differs from " + m->first_name +
                                    (std::string(k) == "evaluation"
                                         ? " (" + EvaluationMismatch(sm.at(k), m->first.at(k)) + ")"
                                         : std::string()) +
                                    "; only shards of one evaluation merge");
    m->summaries.push_back(sm);
    m->shards.push_back(sm.value("shard", std::string("?")));
  }
}

// The images files of folder `in`: each image's clean verdict, one of the evaluation's images,
// the same in every file.
void ReadVerdicts(const std::string& in, const std::set<int>& of_evaluation, MergeInput* m) {
  for (const auto& f : ShardFiles(in, "images", ".jsonl")) {
    std::ifstream is(f);
    std::string line;
    while (std::getline(is, line)) {
      if (line.empty()) continue;
      const auto v = nlohmann::json::parse(line, nullptr, false);
      if (v.is_discarded() || !v.contains("image_index") || !v["image_index"].is_number_integer() ||
          !v.contains("clean_correct") || !v["clean_correct"].is_boolean())
        throw std::runtime_error(f.string() + ": not an images.jsonl of advbo evaluate");
      const int i = v["image_index"].get<int>();
      const bool ok = v["clean_correct"].get<bool>();
      if (!of_evaluation.count(i))
        throw std::invalid_argument(f.string() + ": image " + std::to_string(i) +
                                    " is not one of the evaluation's images");
      const auto it = m->clean_correct.find(i);
      if (it != m->clean_correct.end() && it->second != ok)
        throw std::invalid_argument(f.string() + ": image " + std::to_string(i) +
                                    " is judged clean_correct " + (ok ? "true" : "false") +
                                    " but " + m->verdict_file[i] + " says otherwise");
      m->clean_correct[i] = ok;
      m->verdict_file[i] = f.string();
    }
  }
}

// The attack records of folder `in`: made with the first summary's settings, of the
// evaluation's images, and the same outcome wherever one run appears twice.
void ReadMergeRecords(const std::string& in, const std::set<int>& of_evaluation, MergeInput* m) {
  const nlohmann::json settings = RecordSettings(m->first.at("settings"));
  for (const auto& f : ShardFiles(in, "records", ".jsonl"))
    for (auto& r : ReadRecords(f)) {
      std::string diff = SettingsMismatch(r, settings);
      if (diff.empty())
        diff =
            EvaluationMismatch(r.value("evaluation", nlohmann::json()), m->first.at("evaluation"));
      if (!diff.empty()) throw std::invalid_argument(f.string() + ": other settings: " + diff);
      const auto key = KeyOf(r);
      const int image = r.value("image_index", -1);
      if (!of_evaluation.count(image))
        throw std::invalid_argument(f.string() + ": a record of image " + std::to_string(image) +
                                    ", not one of the evaluation's images");
      const auto it = m->records.find(key);
      if (it != m->records.end()) {
        // The same run in two shards: it must have had the same outcome, or the verdict
        // would depend on the order of the folders.
        if (!SameOutcome(it->second, r))
          throw std::invalid_argument(f.string() + " and " + m->record_file[key] +
                                      " disagree on image " + std::to_string(image) + ", attack " +
                                      r.value("attack", std::string()) + " (success " +
                                      r.value("success", nlohmann::json()).dump() + " vs " +
                                      it->second.value("success", nlohmann::json()).dump() +
                                      "): they are not shards of one evaluation");
        continue;
      }
      m->record_file[key] = f.string();
      m->records[key] = std::move(r);
    }
}

// Reads one evaluate folder into *m, checking it against the first summary read: every
// setting that changes results (Experiment::Settings, EvaluationSettings, the reference's),
// the images of the evaluation, and each shard's images file beside its summary.
void ReadEvaluateFolder(const std::string& in, MergeInput* m) {
  ReadSummaries(in, m);
  const auto evaluation_images = m->first.at("evaluation_images").get<std::vector<int>>();
  const std::set<int> of_evaluation(evaluation_images.begin(), evaluation_images.end());
  ReadVerdicts(in, of_evaluation, m);
  ReadMergeRecords(in, of_evaluation, m);
  if (m->first.at("reference").value("applies", false))
    for (const auto& f : ShardFiles(in, "reference", ".jsonl"))
      for (auto& r : ReadReferenceRecords(f, m->first.at("reference").at("settings"))) {
        // The index first: json's operator= takes its argument by value, and C++17 evaluates
        // the right operand (the move out of r) before the subscript.
        const int image = r["image_index"].get<int>();
        m->reference[image] = std::move(r);
      }
}

// The merged folder: records, reference records, verdicts, summary, table and curves.csv;
// fills `out`.
void WriteMergedFolder(const std::string& out_dir, const nlohmann::json& summary,
                       const std::vector<ImageVerdict>& verdicts,
                       const std::vector<nlohmann::json>& all,
                       const std::vector<nlohmann::json>& refs, EvaluationResult* out) {
  CreatedFolders folders;
  folders.Create(out_dir);
  const fs::path dir(out_dir);
  if (!summary.at("ensemble").empty()) WriteRobustCurves(dir, "", verdicts, summary, out);
  std::string text;
  for (const auto& r : all) text += r.dump() + "\n";
  WriteFileAtomic(dir / "records.jsonl", text);
  text.clear();
  for (const auto& r : refs) text += r.dump() + "\n";
  if (!refs.empty()) WriteFileAtomic(dir / "reference.jsonl", text);
  WriteFileAtomic(dir / "images.jsonl", VerdictLines(verdicts));
  WriteFileAtomic(dir / "summary.json", summary.dump(1) + "\n");
  out->table = EvaluationTable(summary);
  WriteFileAtomic(dir / "table.txt", out->table);
  out->records = (dir / "records.jsonl").string();
  out->summary = summary;
  folders.Keep();
}

}  // namespace

EvaluationResult MergeEvaluations(const std::vector<std::string>& inputs,
                                  const std::string& out_dir) {
  if (out_dir.empty()) throw std::invalid_argument("-o/--out (the output folder) is required");
  // Into a new or empty folder only: files of another evaluation there would mix with the
  // merge's (or be overwritten).
  if (fs::exists(out_dir) && (!fs::is_directory(out_dir) || !fs::is_empty(out_dir)))
    throw std::invalid_argument("-o/--out " + out_dir +
                                (fs::is_directory(out_dir)
                                     ? ": the folder is not empty; merge into a new folder"
                                     : ": is a file, not a folder"));
  for (const auto& in : inputs)
    if (fs::exists(in) && fs::exists(out_dir) && fs::equivalent(in, out_dir))
      throw std::invalid_argument("-o/--out " + out_dir + " is one of the folders merged");
  MergeInput m;
  for (const auto& in : inputs) ReadEvaluateFolder(in, &m);
  const nlohmann::json& first = m.first;
  // Every image of the evaluation: one no shard judged or attacked is "not evaluated".
  const std::vector<int> images = first.at("evaluation_images").get<std::vector<int>>();
  std::vector<int> misclassified;
  for (const auto& [i, ok] : m.clean_correct)
    if (!ok) misclassified.push_back(i);
  std::vector<nlohmann::json> all, refs;
  for (auto& [k, r] : m.records) all.push_back(std::move(r));
  for (auto& [k, r] : m.reference) refs.push_back(std::move(r));
  const auto order = first.at("ensemble").get<std::vector<std::string>>();
  const auto plain = first.at("plain_ensemble").get<std::vector<std::string>>();
  auto verdicts = WorstCaseVerdicts(images, misclassified, all, order);
  // An image no folder judged and no record covers: not evaluated, whatever its class.
  for (auto& v : verdicts)
    if (!m.clean_correct.count(v.image_index) && v.attacks_run == 0) {
      v.evaluated = false;
      v.robust = false;
    }
  if (first.at("reference").value("applies", false)) AttachReference(&verdicts, refs);
  // Every field of an unmerged summary (the first shard's), the computed ones recomputed.
  nlohmann::json summary = first;
  if (summary.contains("budget_per_image")) {  // written before the budget had one name
    summary["budget"] = summary["budget_per_image"];
    summary["budget_unit"] = BudgetUnit(BudgetUse::kEvaluate);
    summary.erase("budget_per_image");
  }
  const nlohmann::json computed = SummarizeVerdicts(verdicts, order);
  for (const auto& [k, v] : computed.items()) summary[k] = v;
  AddEnsembleRows(&summary, images, misclassified, all, order, plain);
  if (!first.at("reference").value("applies", false)) {
    summary["reference_robust_accuracy"] = nullptr;
    summary["combined_robust_accuracy"] = nullptr;
  }
  // Setup queries and wall seconds add up over the shards.
  nlohmann::json setup = nlohmann::json::object();
  RunTime time;
  for (const auto& sm : m.summaries) {
    const nlohmann::json queries = sm.value("setup_queries", nlohmann::json::object());
    for (const auto& [k, v] : queries.items())
      if (v.is_number()) setup[k] = setup.value(k, 0L) + v.get<long>();
    time.wall_seconds += sm.value("wall_seconds", 0.0);
    time.AddShard(sm);
  }
  summary["setup_queries"] = setup;
  summary["shard"] = "merged";
  summary["merged_shards"] = m.shards;
  summary["merged_from"] = inputs;
  AddRecordStatistics(&summary, all, order, time);
  AddMergedTrustChecks(&summary, m.summaries, refs);
  EvaluationResult out;
  WriteMergedFolder(out_dir, summary, verdicts, all, refs, &out);
  out.record_count = static_cast<long>(all.size());
  if (summary.at("not_evaluated").get<long>() > 0) out.status = 3;
  return out;
}

}  // namespace advbo::experiment
