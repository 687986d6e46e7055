#include "attacks/bos2/bos2_attack.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>
#include <stdexcept>
#include <utility>

#include "bo/acquisition.h"

namespace advbo::attacks {

namespace {

// A tuned (or fast) configuration in the form for `dataset`: Bos2Options::MnistForm on "mnist",
// unchanged elsewhere.
Bos2Options ForDataset(Bos2Options o, const std::string& dataset) {
  return dataset == "mnist" ? Bos2Options::MnistForm(std::move(o)) : o;
}

}  // namespace

Bos2Options Bos2Attack::OptionsFor(const AttackContext& context, bool stopping) {
  Bos2Options o = ForDataset(Bos2Options::Tuned(), context.dataset);
  o.stopping = stopping;
  const int max_side = std::min(context.height, context.width);
  auto clip = [&](std::vector<int>& v) {
    v.erase(std::remove_if(v.begin(), v.end(), [&](int s) { return s > max_side; }), v.end());
    if (v.empty()) v.push_back(max_side);
  };
  clip(o.allowed_sides);
  clip(o.init_sides);
  return o;
}

namespace {

// Setting `key` = `v` of `spec` as an integer in lo..hi (attacks/attack.h's checks).
int ParseInt(const std::string& spec, const std::string& key, const std::string& v, int lo,
             int hi = 1000000000) {
  return SettingInteger(spec, key, SettingNumber(spec, key, v), lo, hi);
}

// The ParseExplorationWeight spec of a policy.
std::string BetaSpec(const bo::ExplorationWeight& w) {
  switch (w.policy) {
    case bo::BetaPolicy::kConstant: {
      std::ostringstream os;
      os << "constant:" << w.value;
      return os.str();
    }
    case bo::BetaPolicy::kSrinivas2010:
      return "srinivas2010";
    case bo::BetaPolicy::kKandasamy2015:
      return "kandasamy2015";
    case bo::BetaPolicy::kR2b2Ref:
      return "r2b2_ref";
    case bo::BetaPolicy::kR2b2Joint:
      return "r2b2_joint";
  }
  return "?";
}

}  // namespace

namespace {

// "0" / "1" as a bool; anything else names the setting.
bool ParseFlag(const std::string& spec, const std::string& key, const std::string& v) {
  if (v != "0" && v != "1")
    throw std::invalid_argument("attack '" + spec + "': " + key + " must be 0 or 1, got '" + v +
                                "'");
  return v == "1";
}

// preset=thesis|tuned|fast: that configuration (tuned and fast in their MNIST form on the
// "mnist" dataset), keeping the image-size clipping of the sides and the stopping ablation.
void ApplyPreset(const std::string& v, const std::string& dataset, Bos2Options* o) {
  if (v != "thesis" && v != "tuned" && v != "fast")
    throw std::invalid_argument("bos2 setting preset: use thesis, tuned or fast, got '" + v + "'");
  Bos2Options p = v == "thesis" ? Bos2Options::Thesis()
                  : v == "fast" ? ForDataset(Bos2Options::Fast(), dataset)
                                : ForDataset(Bos2Options::Tuned(), dataset);
  p.allowed_sides = o->allowed_sides;
  p.init_sides = o->init_sides;
  p.stopping = o->stopping;
  *o = p;
}

// One `key=value` of the settings string `spec` ("bos2:..."), with the dataset of the run
// (the presets' MNIST form depends on it).
struct Setting {
  const std::string& spec;
  const std::string& key;
  const std::string& value;
  const std::string& dataset;

  int Int(int lo) const { return ParseInt(spec, key, value, lo); }   ///< an integer >= lo
  double Number() const { return SettingNumber(spec, key, value); }  ///< a finite number
  bool Flag() const { return ParseFlag(spec, key, value); }          ///< "0" or "1"
};

using SettingHandler = void (*)(const Setting& s, Bos2Options* o);

// Every `bos2:` setting and what it sets (ranges are checked by Bos2Options::Validate).
// batch_mode: pass (one acquisition pass per batch) | kb (Kriging believer).
void SetBatchMode(const Setting& s, Bos2Options* o) {
  if (s.value != "pass" && s.value != "kb")
    throw std::invalid_argument(
        "bos2 setting batch_mode must be pass (one acquisition pass per batch) or kb "
        "(Kriging believer), got '" +
        s.value + "'");
  o->batch_one_pass = s.value == "pass";
}

// batch: points per perturbation-loop step, an integer in 1..i_max.
void SetBatch(const Setting& s, Bos2Options* o) {
  const double b = s.Number();  // bounded by i_max, and says so
  if (b != std::floor(b) || b < 1 || b > o->i_max)
    throw std::invalid_argument("attack '" + s.spec + "': batch must be an integer in 1.." +
                                std::to_string(o->i_max) + " (the perturbation loop's i_max)");
  o->batch = static_cast<int>(b);
}

const std::map<std::string, SettingHandler>& SettingHandlers() {
  static const std::map<std::string, SettingHandler> handlers = {
      {"preset", [](const Setting& s, Bos2Options* o) { ApplyPreset(s.value, s.dataset, o); }},
      {"stopping", [](const Setting& s, Bos2Options* o) { o->stopping = s.Flag(); }},
      {"kernel",
       [](const Setting& s, Bos2Options* o) {
         if (s.value != "se" && s.value != "matern52")
           throw std::invalid_argument("bos2 setting kernel: use se or matern52, got '" + s.value +
                                       "'");
         o->perturbation_kernel = bo::ParseKernelFamily(s.value);
       }},
      {"beta", [](const Setting& s,
                  Bos2Options* o) { o->acquisition.beta = bo::ParseExplorationWeight(s.value); }},
      {"candidates",
       [](const Setting& s, Bos2Options* o) { o->acquisition.random_candidates = s.Int(1); }},
      {"local",
       [](const Setting& s, Bos2Options* o) { o->acquisition.local_candidates = s.Int(0); }},
      {"vertex",
       [](const Setting& s, Bos2Options* o) { o->acquisition.vertex_fraction = s.Number(); }},
      {"polish",
       [](const Setting& s, Bos2Options* o) { o->acquisition.polish_iterations = s.Int(0); }},
      {"window", [](const Setting& s, Bos2Options* o) { o->max_gp_points = s.Int(0); }},
      {"precision", [](const Setting& s, Bos2Options* o) { o->precision_polish = s.Flag(); }},
      {"init", [](const Setting& s, Bos2Options* o) { o->init_per_side = s.Int(1); }},
      {"pool", [](const Setting& s, Bos2Options* o) { o->candidate_pool = s.Int(0); }},
      {"saturation", [](const Setting& s, Bos2Options* o) { o->saturation = s.Number(); }},
      {"noise",
       [](const Setting& s, Bos2Options* o) {
         if (s.value != "fit" && s.value != "fixed")
           throw std::invalid_argument("bos2 setting noise: use fit or fixed, got '" + s.value +
                                       "'");
         o->perturbation_fit.fit_noise = o->perturbation_refit.fit_noise = s.value == "fit";
       }},
      {"fit_points",
       [](const Setting& s, Bos2Options* o) {
         o->perturbation_fit.max_points = o->perturbation_refit.max_points = s.Int(0);
       }},
      {"restarts",
       [](const Setting& s, Bos2Options* o) { o->perturbation_fit.restarts = s.Int(0); }},
      {"refit", [](const Setting& s, Bos2Options* o) { o->refit_every = s.Int(0); }},
      {"decompositions",
       [](const Setting& s, Bos2Options* o) { o->num_decompositions = s.Int(1); }},
      {"groups", [](const Setting& s, Bos2Options* o) { o->groups = s.Int(1); }},
      {"refine",
       [](const Setting& s, Bos2Options* o) {
         o->refine_queries = s.Int(0);
         if (o->refine_queries == 0) o->refine_fraction = 0;  // refine=0: the stage off
       }},
      {"refine_fraction",
       [](const Setting& s, Bos2Options* o) {
         o->refine_fraction = s.Number();
         o->refine_queries = 0;
       }},
      {"refine_p", [](const Setting& s, Bos2Options* o) { o->refine_p_init = s.Number(); }},
      {"patience", [](const Setting& s, Bos2Options* o) { o->refine_patience = s.Int(0); }},
      {"stripes", [](const Setting& s, Bos2Options* o) { o->stripes_init = s.Flag(); }},
      {"tr", [](const Setting& s, Bos2Options* o) { o->trust_region = s.Flag(); }},
      {"tr_init", [](const Setting& s, Bos2Options* o) { o->trust.length_init = s.Number(); }},
      {"tr_succ", [](const Setting& s, Bos2Options* o) { o->trust.success_tolerance = s.Int(1); }},
      {"tr_fail", [](const Setting& s, Bos2Options* o) { o->trust.failure_tolerance = s.Int(0); }},
      {"paths", [](const Setting& s, Bos2Options* o) { o->bos.num_paths = s.Int(100); }},
      {"batch_mode", SetBatchMode},
      {"batch", SetBatch},
  };
  return handlers;
}

// The configuration part of a record's details: kernel, beta, bos2_settings (every setting
// that changes results) and, with a trust region, trust_restarts.
nlohmann::json SettingsDetails(const Bos2Options& o, const Bos2Result& b) {
  nlohmann::json details;
  details["kernel"] = o.perturbation_kernel == bo::KernelFamily::kMatern52 ? "matern52" : "se";
  details["beta"] = BetaSpec(o.acquisition.beta);
  details["bos2_settings"] = {{"saturation", o.saturation},
                              {"candidate_pool", o.candidate_pool},
                              {"precision_polish", o.precision_polish},
                              {"random_candidates", o.acquisition.random_candidates},
                              {"local_candidates", o.acquisition.local_candidates},
                              {"vertex_fraction", o.acquisition.vertex_fraction},
                              {"polish_iterations", o.acquisition.polish_iterations},
                              {"max_gp_points", o.max_gp_points},
                              {"refit_every", o.refit_every},
                              {"fit_points", o.perturbation_fit.max_points},
                              {"fit_noise", o.perturbation_fit.fit_noise},
                              {"fit_restarts", o.perturbation_fit.restarts},
                              {"decompositions", o.num_decompositions},
                              {"groups", o.groups},
                              {"stopping_paths", o.bos.num_paths},
                              {"i_max", o.i_max},
                              {"i_0", o.i_0},
                              {"init_per_side", o.init_per_side}};
  if (o.batch > 1) {  // absent: 1
    details["bos2_settings"]["batch"] = o.batch;
    details["bos2_settings"]["batch_mode"] = o.batch_one_pass ? "pass" : "kb";
  }
  if (o.refine_queries > 0) {
    details["bos2_settings"]["refine_queries"] = o.refine_queries;
    details["bos2_settings"]["refine_p_init"] = o.refine_p_init;
  } else if (o.refine_fraction > 0) {
    details["bos2_settings"]["refine_fraction"] = o.refine_fraction;
    details["bos2_settings"]["refine_queries"] = b.refine_reserved;
    details["bos2_settings"]["refine_p_init"] = o.refine_p_init;
  }
  if (o.refine_patience > 0) details["bos2_settings"]["refine_patience"] = o.refine_patience;
  if (o.stripes_init) details["bos2_settings"]["stripes_init"] = true;  // absent: off
  if (o.trust_region) {                                                 // absent: off
    details["bos2_settings"]["trust_region"] = {{"length_init", o.trust.length_init},
                                                {"length_min", o.trust.length_min},
                                                {"length_max", o.trust.length_max},
                                                {"success_tolerance", o.trust.success_tolerance},
                                                {"failure_tolerance", o.trust.failure_tolerance}};
    details["trust_restarts"] = b.trust_restarts;
  }
  return details;
}

}  // namespace

void Bos2Attack::ApplySettings(const std::string& settings, Bos2Options* o,
                               const std::string& dataset) {
  const std::string spec = "bos2:" + settings;
  for (const auto& [k, v] : SplitAttackSettings(spec, settings)) {
    const auto it = SettingHandlers().find(k);
    if (it == SettingHandlers().end()) {
      std::string keys;
      for (const auto& [name, handler] : SettingHandlers())
        keys += (keys.empty() ? "" : ", ") + name;
      throw std::invalid_argument("unknown bos2 setting '" + k + "' (" + keys + ")");
    }
    it->second(Setting{spec, k, v, dataset}, o);
  }
  o->Validate();  // every range, once (Bos2Options::Validate)
}

AttackResult Bos2Attack::Run(oracle::QueryOracle& oracle, bo::Rng& rng,
                             const AttackProgress& progress) const {
  const Bos2Result b = RunBos2(oracle, options_, rng, progress);
  AttackResult r;
  r.success = b.success;
  r.queries = b.queries;
  r.best_objective = b.best_objective;
  r.adversarial = b.adversarial;
  r.seconds = b.seconds;
  r.model_seconds = b.model_seconds;
  r.wait_seconds = b.wait_seconds;
  r.bo_seconds = b.bo_seconds;
  nlohmann::json loops = nlohmann::json::array();
  for (const auto& l : b.loops)
    loops.push_back({{"side", l.side},
                     {"latent_dim", l.latent_dim},
                     {"start_query", l.start_query},
                     {"queries", l.queries},
                     {"stopped_early", l.stopped_early},
                     {"best_objective", l.best_objective}});
  if (options_.trust_region)
    for (size_t i = 0; i < b.loops.size(); ++i) loops[i]["trust_length"] = b.loops[i].trust_length;
  r.details["loops"] = loops;
  r.details["stopping"] = options_.stopping;
  if (b.refine_start >= 0)
    r.details["refine"] = {{"start_query", b.refine_start},
                           {"queries", b.refine_queries},
                           {"reserved", b.refine_reserved}};
  if (b.refine_handover) r.details["refine"]["handover"] = true;  // absent: false
  const Bos2Phases& ph = b.phases;
  r.details["bo_phase_seconds"] = {{"dimension", ph.dimension},
                                   {"gp_setup", ph.gp_setup},
                                   {"decomposition", ph.decomposition},
                                   {"fit", ph.fit},
                                   {"pools", ph.pools},
                                   {"acquisition", ph.acquisition},
                                   {"update", ph.update},
                                   {"stopping", ph.stopping}};
  r.details.update(SettingsDetails(options_, b));
  return r;
}

}  // namespace advbo::attacks
