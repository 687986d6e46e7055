// The attack registry (attacks/registry.h): one entry per attack, and MakeAttack / AttackNames
// (attacks/attack.h) on it.
#include "attacks/registry.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "attacks/adaptive/adaptive.h"
#include "attacks/attack.h"
#include "attacks/autozoom/autozoom.h"
#include "attacks/bandits/bandits.h"
#include "attacks/bayesopt/bayesopt.h"
#include "attacks/bo_hard_label/bo_hard_label.h"
#include "attacks/bos2/bos2_attack.h"
#include "attacks/cgba/cgba.h"
#include "attacks/genattack/genattack.h"
#include "attacks/geoda/geoda.h"
#include "attacks/hsja/hsja.h"
#include "attacks/nes/nes.h"
#include "attacks/parsimonious/parsimonious.h"
#include "attacks/random/random_search.h"
#include "attacks/rays/rays.h"
#include "attacks/signhunter/signhunter.h"
#include "attacks/signopt/signopt.h"
#include "attacks/simba/simba.h"
#include "attacks/square/square.h"
#include "attacks/square/square_l2.h"
#include "attacks/zoo/zoo.h"

namespace advbo::attacks {

namespace {

// One key of an attack's settings spec ("square:p_init=0.3,resample=4") and how its value is
// validated and stored into the options struct O.
template <class O>
struct Setting {
  const char* key;
  std::function<void(O*, const std::string& spec, double v)> store;
};

// A real-valued setting, validated by the options' own Validate.
template <class O>
Setting<O> Real(const char* key, double O::*field) {
  return {key, [field](O* o, const std::string&, double v) { o->*field = v; }};
}

// An integer setting in [lo, hi] (SettingInteger's message otherwise).
template <class O>
Setting<O> Integer(const char* key, int O::*field, int lo, int hi) {
  return {key, [key, field, lo, hi](O* o, const std::string& spec, double v) {
            o->*field = SettingInteger(spec, key, v, lo, hi);
          }};
}

// A real setting in [lo, hi] (SettingInRange's message otherwise).
template <class O>
Setting<O> InRange(const char* key, double O::*field, double lo, double hi) {
  return {key, [key, field, lo, hi](O* o, const std::string& spec, double v) {
            o->*field = SettingInRange(spec, key, v, lo, hi);
          }};
}

// A 0 / 1 setting of a bool field (SettingInteger's message otherwise).
template <class O>
Setting<O> Flag(const char* key, bool O::*field) {
  return {key, [key, field](O* o, const std::string& spec, double v) {
            o->*field = SettingInteger(spec, key, v, 0, 1) == 1;
          }};
}

// `defaults` with the settings of spec `name` (after its colon) applied; an unknown key is an
// std::invalid_argument naming the spec and the keys `base` takes.
template <class O>
O ParseOptions(const std::string& base, const std::string& name, size_t colon, O defaults,
               const std::vector<Setting<O>>& table) {
  for (const auto& [key, v] : ParseAttackSettings(name, name.substr(colon + 1))) {
    const auto it = std::find_if(table.begin(), table.end(),
                                 [&key = key](const Setting<O>& s) { return key == s.key; });
    if (it == table.end()) {
      std::string keys;
      for (const auto& s : table) keys += (keys.empty() ? "" : ", ") + std::string(s.key);
      throw std::invalid_argument("attack '" + name + "': unknown setting '" + key + "' (" + base +
                                  " takes " + keys + ")");
    }
    it->store(&defaults, name, v);
  }
  return defaults;
}

// Square-L2's only setting.
struct SquareL2Settings {
  double p_init = 0.1;
};

// The part of `spec` after its colon ("" when it has none).
std::string SettingsOf(const std::string& spec) {
  const auto colon = spec.find(':');
  return colon == std::string::npos ? "" : spec.substr(colon + 1);
}

// `defaults` with the settings of `spec` applied (ParseOptions with the spec's own base name).
template <class O>
O Settings(const std::string& spec, O defaults, const std::vector<Setting<O>>& table) {
  const auto colon = spec.find(':');
  if (colon == std::string::npos) return defaults;
  return ParseOptions(spec.substr(0, colon), spec, colon, defaults, table);
}

// Throws "attack 'NAME' takes no settings ('SPEC')" when `spec` has settings.
void RefuseSettings(const std::string& spec) {
  const auto colon = spec.find(':');
  if (colon != std::string::npos)
    throw std::invalid_argument("attack '" + spec.substr(0, colon) + "' takes no settings ('" +
                                spec + "')");
}

// The factory of an attack that takes no settings.
template <class A>
std::function<std::unique_ptr<Attack>(const std::string&, const AttackContext&)> NoSettings() {
  return [](const std::string& spec, const AttackContext&) -> std::unique_ptr<Attack> {
    RefuseSettings(spec);
    return std::make_unique<A>();
  };
}

std::unique_ptr<Attack> MakeBos2(const std::string& spec, const AttackContext& ctx) {
  const std::string base = spec.substr(0, spec.find(':'));
  Bos2Options o = Bos2Attack::OptionsFor(ctx, base == "bos2");
  if (spec.find(':') == std::string::npos) return std::make_unique<Bos2Attack>(o);
  // "bos2:key=value,..." (Bos2Attack::ApplySettings); the whole spec is the attack's name.
  Bos2Attack::ApplySettings(SettingsOf(spec), &o, ctx.dataset);
  return std::make_unique<Bos2Attack>(o, spec);
}

std::unique_ptr<Attack> MakeSquare(const std::string& spec, const AttackContext& ctx) {
  using O = SquareOptions;
  O o;
  o.p_init = ctx.dataset == "mnist" ? 0.8 : 0.05;  // the paper's MNIST / CIFAR-10 settings
  if (spec.find(':') == std::string::npos) return std::make_unique<SquareAttack>(o);
  return std::make_unique<SquareAttack>(
      Settings(spec, o,
               {Real("p_init", &O::p_init), Integer("resample", &O::resample, 1, 10000),
                Integer("restarts", &O::restarts, 1, 100), Integer("targets", &O::targets, 0, 100),
                Integer("ce", &O::ce, 0, 1), Real("magnitude", &O::magnitude)}),
      spec);
}

std::unique_ptr<Attack> MakeBayesOpt(const std::string& spec, const AttackContext& ctx) {
  RefuseSettings(spec);
  BayesOptOptions o;
  o.groups = ctx.dataset == "mnist" ? 14 : 12;
  o.learn_side = spec == "bayesopt-learnd";
  return std::make_unique<BayesOptAttack>(o);
}

std::unique_ptr<Attack> MakeAutoZoom(const std::string& spec, const AttackContext& ctx) {
  RefuseSettings(spec);
  AutoZoomOptions o;
  o.latent_side = ctx.dataset == "mnist" ? 14 : 16;
  return std::make_unique<AutoZoomAttack>(o);
}

// NES and Bandits: gradient estimates with signed steps (NES also unsigned ones).
void AddGradientEstimators(std::vector<AttackEntry>* e) {
  using F = AttackFamily;
  using ON = NesOptions;
  e->push_back(
      {"nes",
       F::kScoreLinf,
       "NES gradient estimates, signed steps (Ilyas et al., ICML 2018, Alg. 1); unsigned=1: "
       "unsigned, shrinking steps into the ball's interior",
       "samples, sigma, lr_ratio, unsigned",
       {0, 0},
       [](const std::string& spec, const AttackContext&) -> std::unique_ptr<Attack> {
         return std::make_unique<NesAttack>(
             Settings(
                 spec, ON{},
                 {Integer("samples", &ON::samples, 1, 100000), Real("sigma", &ON::sigma),
                  Real("lr_ratio", &ON::lr_ratio), Integer("unsigned", &ON::unsigned_steps, 0, 1)}),
             spec);
       }});
  using OB = BanditsOptions;
  e->push_back({"bandits",
                F::kScoreLinf,
                "Bandits-TD: time and data priors of the gradient (Ilyas et al., ICLR 2019, "
                "Algs. 1-3)",
                "exploration, fd_eta, online_lr, lr_ratio, tile",
                {0, 0},
                [](const std::string& spec, const AttackContext&) -> std::unique_ptr<Attack> {
                  return std::make_unique<BanditsAttack>(
                      Settings(spec, OB{},
                               {Real("exploration", &OB::exploration), Real("fd_eta", &OB::fd_eta),
                                Real("online_lr", &OB::online_lr), Real("lr_ratio", &OB::lr_ratio),
                                Integer("tile", &OB::tile, 1, 4096)}),
                      spec);
                }});
}

// The score-based L2 entries.
void AddL2Attacks(std::vector<AttackEntry>* e) {
  using F = AttackFamily;
  using OS = SimbaOptions;
  e->push_back(
      {"simba-dct",
       F::kScoreL2,
       "SimBA-DCT: orthonormal low-frequency DCT directions (Guo et al., ICML 2019, Alg. 1)",
       "step, initial, stride",
       {0, 1},
       [](const std::string& spec, const AttackContext&) -> std::unique_ptr<Attack> {
         return std::make_unique<SimbaDctAttack>(
             Settings(spec, OS{},
                      {Real("step", &OS::step), Integer("initial", &OS::initial, 1, 4096),
                       Integer("stride", &OS::stride, 1, 4096)}),
             spec);
       }});
  e->push_back(
      {"square-l2",
       F::kScoreL2,
       "Square Attack, L2 (Andriushchenko et al., ECCV 2020, Alg. 3)",
       "p_init",
       {0, 2},
       [](const std::string& spec, const AttackContext&) -> std::unique_ptr<Attack> {
         return std::make_unique<SquareL2Attack>(
             Settings(spec, SquareL2Settings{}, {Real("p_init", &SquareL2Settings::p_init)}).p_init,
             spec);
       }});
}

// The score-based entries.
std::vector<AttackEntry> ScoreAttacks() {
  using F = AttackFamily;
  std::vector<AttackEntry> e = {
      {"bos2",
       F::kScoreLinf,
       "BOS^2: a dimension BO loop and an additive-GP perturbation BO loop with Bayesian "
       "optimal stopping (Kharkovskii 2020 thesis, Ch. 5)",
       "preset, kernel, beta, candidates, stopping, ... (docs/guide/attack.md)",
       {0, 0},
       MakeBos2},
      {"bos2-nostop",
       F::kScoreLinf,
       "BOS^2 without Bayesian optimal stopping (the thesis' ablation)",
       "as bos2",
       {0, 0},
       MakeBos2},
      {"bayesopt",
       F::kScoreLinf,
       "BayesOpt: additive-GP BO over a bilinear latent (Ru et al., ICLR 2020)",
       "",
       {0, 0},
       MakeBayesOpt},
      {"bayesopt-learnd",
       F::kScoreLinf,
       "BayesOpt with its latent size learnt (Ru et al., ICLR 2020)",
       "",
       {0, 0},
       MakeBayesOpt},
      {"genattack",
       F::kScoreLinf,
       "GenAttack: a genetic algorithm (Alzantot et al., GECCO 2019, Alg. 1)",
       "",
       {0, 0},
       NoSettings<GenAttack>()},
      {"zoo",
       F::kScoreLinf,
       "ZOO-ADAM: coordinate-wise zeroth-order C&W (Chen et al., AISec 2017, Alg. 2)",
       "",
       {0, 0},
       NoSettings<ZooAttack>()},
      {"autozoom",
       F::kScoreLinf,
       "AutoZOOM-BiLIN: random-direction gradient estimates in a bilinear latent (Tu et al., "
       "AAAI 2019)",
       "",
       {0, 0},
       MakeAutoZoom},
      {"square",
       F::kScoreLinf,
       "Square Attack, L_inf (Andriushchenko et al., ECCV 2020, Algs. 1-2)",
       "p_init, resample, restarts, targets, ce, magnitude",
       {1, 0},
       MakeSquare},
      {"parsimonious",
       F::kScoreLinf,
       "Parsimonious: lazy-greedy search over the ball's vertices (Moon et al., ICML 2019, "
       "Algs. 1-3)",
       "",
       {0, 0},
       NoSettings<ParsimoniousAttack>()},
      {"random",
       F::kScoreLinf,
       "random vertices of the ball: the floor every attack should beat",
       "",
       {0, 0},
       NoSettings<RandomSearch>()},
      {"signhunter",
       F::kScoreLinf,
       "SignHunter: hierarchical sign flips (Al-Dujaili & O'Reilly, ICLR 2020, Alg. 1)",
       "",
       {0, 0},
       NoSettings<SignHunterAttack>()},
  };
  AddGradientEstimators(&e);
  AddL2Attacks(&e);
  return e;
}

// The hard-label entries after 2020: the Tangent Attacks on HopSkipJump's search and
// CGBA / CGBA-H, appended to `e`.
void AddNewerLabelAttacks(std::vector<AttackEntry>* out) {
  using F = AttackFamily;
  using OH = HsjaOptions;
  std::vector<AttackEntry>& e = *out;
  for (const bool tangent_ellipsoid : {false, true})
    e.push_back(
        {tangent_ellipsoid ? "gta" : "ta",
         F::kLabel,
         tangent_ellipsoid
             ? "Generalized Tangent Attack: HopSkipJump stepping to a semi-ellipsoid's tangent "
               "point, L2 (Ma et al., NeurIPS 2021, Alg. 1)"
             : "Tangent Attack: HopSkipJump stepping to a hemisphere's tangent point, L2 (Ma et "
               "al., NeurIPS 2021, Alg. 1)",
         tangent_ellipsoid ? "initial_probes, max_probes, gamma, radius_ratio"
                           : "initial_probes, max_probes, gamma",
         {0, 0},
         [tangent_ellipsoid](const std::string& spec,
                             const AttackContext&) -> std::unique_ptr<Attack> {
           OH o;
           o.step =
               tangent_ellipsoid ? HsjaStep::kTangentSemiEllipsoid : HsjaStep::kTangentHemisphere;
           std::vector<Setting<OH>> table = {
               Integer("initial_probes", &OH::initial_probes, 1, 100000),
               Integer("max_probes", &OH::max_probes, 1, 1000000), Real("gamma", &OH::gamma)};
           if (tangent_ellipsoid) table.push_back(Real("radius_ratio", &OH::radius_ratio));
           return std::make_unique<HsjaAttack>(Settings(spec, o, table), spec);
         }});
  using OC = CgbaOptions;
  for (const bool high : {false, true})
    e.push_back({high ? "cgba-h" : "cgba",
                 F::kLabel,
                 high ? "CGBA-H: CGBA's normal, a halved-angle step for high curvature "
                        "(targeted), L2 (Reza et al., ICCV 2023)"
                      : "CGBA: low-frequency boundary normals, boundary search along a "
                        "semicircle, L2 (Reza et al., ICCV 2023)",
                 "initial_probes, dim_reduction, sigma, tolerance, max_search",
                 {0, high ? 0 : 2},
                 [high](const std::string& spec, const AttackContext&) -> std::unique_ptr<Attack> {
                   OC o;
                   o.high_curvature = high;
                   return std::make_unique<CgbaAttack>(
                       Settings(spec, o,
                                {Integer("initial_probes", &OC::initial_probes, 1, 100000),
                                 Real("dim_reduction", &OC::dim_reduction),
                                 Real("sigma", &OC::sigma), Real("tolerance", &OC::tolerance),
                                 Integer("max_search", &OC::max_search, 1, 1000)}),
                       spec);
                 }});
}

// The hard-label entries.
std::vector<AttackEntry> LabelAttacks() {
  using F = AttackFamily;
  std::vector<AttackEntry> e;
  e.push_back({"rays",
               F::kLabel,
               "RayS: ray search over sign directions, L_inf (Chen & Gu, KDD 2020, Algs. 1-3)",
               "tolerance",
               {1, 0},
               [](const std::string& spec, const AttackContext&) -> std::unique_ptr<Attack> {
                 return std::make_unique<RaysAttack>(
                     Settings(spec, RaysOptions{}, {Real("tolerance", &RaysOptions::tolerance)}),
                     spec);
               }});
  using OH = HsjaOptions;
  e.push_back({"hsja",
               F::kLabel,
               "HopSkipJumpAttack, L2 and L_inf (Chen, Jordan & Wainwright, IEEE S&P 2020, "
               "Alg. 2)",
               "initial_probes, max_probes, gamma",
               {3, 3},
               [](const std::string& spec, const AttackContext&) -> std::unique_ptr<Attack> {
                 return std::make_unique<HsjaAttack>(
                     Settings(spec, OH{},
                              {Integer("initial_probes", &OH::initial_probes, 1, 100000),
                               Integer("max_probes", &OH::max_probes, 1, 1000000),
                               Real("gamma", &OH::gamma)}),
                     spec);
               }});
  using OS = SignOptOptions;
  e.push_back({"sign-opt",
               F::kLabel,
               "Sign-OPT: sign estimates of the boundary distance's gradient, L2 and L_inf "
               "(Cheng et al., ICLR 2020, Alg. 1)",
               "probes, h, alpha",
               {0, 0},
               [](const std::string& spec, const AttackContext&) -> std::unique_ptr<Attack> {
                 return std::make_unique<SignOptAttack>(
                     Settings(spec, OS{},
                              {Integer("probes", &OS::probes, 1, 100000), Real("h", &OS::h),
                               Real("alpha", &OS::alpha)}),
                     spec);
               }});
  using OG = GeodaOptions;
  e.push_back({"geoda",
               F::kLabel,
               "GeoDA: boundary normals from low-frequency probes, L2 and L_inf (Rahmati et al., "
               "CVPR 2020, Alg. 1)",
               "iterations, lambda, sigma, subspace",
               {0, 0},
               [](const std::string& spec, const AttackContext&) -> std::unique_ptr<Attack> {
                 return std::make_unique<GeodaAttack>(
                     Settings(spec, OG{},
                              {Integer("iterations", &OG::iterations, 1, 10000),
                               Real("lambda", &OG::lambda), Real("sigma", &OG::sigma),
                               Integer("subspace", &OG::subspace, 1, 4096)}),
                     spec);
               }});
  using OBo = BoHardLabelOptions;
  e.push_back({"bo-hl",
               F::kLabel,
               "BO of the boundary distance over a low-dimensional direction space, then RayS "
               "and HopSkipJump (L_inf) or CGBA (L2) (advbo's BO hard-label attack)",
               "side, bo_fraction, bo_max_queries, patience, finer",
               {2, 1},
               [](const std::string& spec, const AttackContext&) -> std::unique_ptr<Attack> {
                 return std::make_unique<BoHardLabelAttack>(
                     Settings(spec, OBo{},
                              {Integer("side", &OBo::side, 1, 64),
                               InRange("bo_fraction", &OBo::bo_fraction, 0, 1),
                               Integer("bo_max_queries", &OBo::bo_max_queries, 0, 1000000),
                               Integer("patience", &OBo::patience, 0, 1000000),
                               Flag("finer", &OBo::finer)}),
                     spec);
               }});
  AddNewerLabelAttacks(&e);
  return e;
}

const char* FamilyText(AttackFamily f) {
  switch (f) {
    case AttackFamily::kScoreLinf:
      return "score-based, L_inf";
    case AttackFamily::kScoreL2:
      return "score-based, --norm l2";
    case AttackFamily::kLabel:
      return "hard-label, --feedback label; targeted: hsja, sign-opt, ta, gta, cgba, cgba-h";
  }
  return "";
}

}  // namespace

const std::vector<AttackEntry>& AttackRegistry() {
  static const std::vector<AttackEntry> registry = [] {
    std::vector<AttackEntry> all = ScoreAttacks();
    for (auto& e : LabelAttacks()) all.push_back(std::move(e));
    return all;
  }();
  return registry;
}

const AttackEntry* FindAttack(const std::string& name) {
  const std::string base = name.substr(0, name.find(':'));
  for (const auto& e : AttackRegistry())
    if (e.name == base) return &e;
  return nullptr;
}

std::vector<std::string> AttackNames() {
  std::vector<std::string> names;
  for (const auto& e : AttackRegistry()) names.push_back(e.name);
  return names;
}

std::string AttackHelp() {
  std::string help;
  for (AttackFamily f : {AttackFamily::kScoreLinf, AttackFamily::kScoreL2, AttackFamily::kLabel}) {
    std::string names;
    for (const auto& e : AttackRegistry())
      if (e.family == f) names += (names.empty() ? "" : " | ") + e.name;
    help += names + " (" + FamilyText(f) + ");\n";
  }
  return help +
         "settings as NAME:key=value,... (e.g. square:p_init=0.3, bos2:preset=thesis); adaptive "
         "wrappers\n(at most 8 nested): eot:k=10/ATTACK (expectation over a randomised defense, "
         "every sample a\ncounted query), aaa-adaptive:interval=4,reverse=1/ATTACK, "
         "oars:quantization=50/ATTACK, confirm:n=2/ATTACK";
}

std::string RegistryTable() {
  std::string t =
      "| attack | threat model | method (source) | settings |\n| --- | --- | --- | --- |\n";
  for (const auto& e : AttackRegistry()) {
    std::string norms;
    for (oracle::Norm n : e.make(e.name, AttackContext{})->norms())
      norms += (norms.empty() ? "" : ", ") + std::string(n == oracle::Norm::kL2 ? "L2" : "L∞");
    const bool label = e.family == AttackFamily::kLabel;
    t += "| `" + e.name + "` | " + (label ? "hard-label, " : "scores, ") + norms + " | " +
         e.summary + " | " + (e.settings.empty() ? "—" : e.settings) + " |\n";
  }
  return t;
}

std::string DefaultEnsemble(oracle::Norm norm, oracle::Feedback feedback) {
  const int col = norm == oracle::Norm::kL2 ? 1 : 0;
  std::vector<const AttackEntry*> members;
  for (const auto& e : AttackRegistry()) {
    const bool label = e.family == AttackFamily::kLabel;
    if (label == (feedback == oracle::Feedback::kLabel) && e.ensemble_rank[col] > 0)
      members.push_back(&e);
  }
  std::sort(members.begin(), members.end(), [col](const AttackEntry* a, const AttackEntry* b) {
    return a->ensemble_rank[col] < b->ensemble_rank[col];
  });
  std::string out;
  for (const auto* e : members) out += (out.empty() ? "" : ",") + e->name;
  return out;
}

std::unique_ptr<Attack> MakeAttack(const std::string& name, const AttackContext& ctx) {
  // Adaptive wrappers around another attack: "eot:k=10/square" (attacks/adaptive).
  if (IsAdaptiveSpec(name)) return MakeAdaptiveAttack(name, ctx);
  if (const AttackEntry* e = FindAttack(name)) return e->make(name, ctx);
  std::string names;
  for (const auto& n : AttackNames()) names += (names.empty() ? "" : ", ") + n;
  const std::string base = name.substr(0, name.find(':'));
  throw std::invalid_argument("unknown attack '" + base + "' (available: " + names + ")");
}

}  // namespace advbo::attacks
