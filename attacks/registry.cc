// The attack registry: names and specs accepted by MakeAttack (attacks/attack.h).
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

std::vector<std::string> AttackNames() {
  // Score-based L_inf, then the L2 and hard-label attacks (issue #40).
  return {"bos2",       "bos2-nostop", "bayesopt", "bayesopt-learnd", "genattack",
          "zoo",        "autozoom",    "square",   "parsimonious",    "random",
          "signhunter", "nes",         "bandits",  "simba-dct",       "square-l2",
          "rays",       "hsja",        "sign-opt", "geoda",           "bo-hl"};
}

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

// The attacks that take settings except BOS^2 ("nes:samples=20"); nullptr when `base` is
// none of them.
std::unique_ptr<Attack> AttackWithSettings(const std::string& base, const std::string& name,
                                           size_t colon, bool mnist) {
  using O1 = SquareOptions;
  if (base == "square") {
    O1 o;
    o.p_init = mnist ? 0.8 : 0.05;
    return std::make_unique<SquareAttack>(
        ParseOptions(
            base, name, colon, o,
            {Real("p_init", &O1::p_init), Integer("resample", &O1::resample, 1, 10000),
             Integer("restarts", &O1::restarts, 1, 100), Integer("targets", &O1::targets, 0, 100),
             Integer("ce", &O1::ce, 0, 1), Real("magnitude", &O1::magnitude)}),
        name);
  }
  using O2 = NesOptions;
  if (base == "nes")
    return std::make_unique<NesAttack>(
        ParseOptions(base, name, colon, O2{},
                     {Integer("samples", &O2::samples, 1, 100000), Real("sigma", &O2::sigma),
                      Real("lr_ratio", &O2::lr_ratio)}),
        name);
  using O3 = BanditsOptions;
  if (base == "bandits")
    return std::make_unique<BanditsAttack>(
        ParseOptions(base, name, colon, O3{},
                     {Real("exploration", &O3::exploration), Real("fd_eta", &O3::fd_eta),
                      Real("online_lr", &O3::online_lr), Real("lr_ratio", &O3::lr_ratio),
                      Integer("tile", &O3::tile, 1, 4096)}),
        name);
  if (base == "square-l2")
    return std::make_unique<SquareL2Attack>(
        ParseOptions(base, name, colon, SquareL2Settings{},
                     {Real("p_init", &SquareL2Settings::p_init)})
            .p_init,
        name);
  using O4 = SimbaOptions;
  if (base == "simba-dct")
    return std::make_unique<SimbaDctAttack>(
        ParseOptions(base, name, colon, O4{},
                     {Real("step", &O4::step), Integer("initial", &O4::initial, 1, 4096),
                      Integer("stride", &O4::stride, 1, 4096)}),
        name);
  return nullptr;
}

// The hard-label attacks with settings ("rays:tolerance=0.01"); nullptr when `base` is none.
std::unique_ptr<Attack> LabelAttackWithSettings(const std::string& base, const std::string& name,
                                                size_t colon) {
  if (base == "rays")
    return std::make_unique<RaysAttack>(ParseOptions(base, name, colon, RaysOptions{},
                                                     {Real("tolerance", &RaysOptions::tolerance)}),
                                        name);
  using O1 = HsjaOptions;
  if (base == "hsja")
    return std::make_unique<HsjaAttack>(
        ParseOptions(
            base, name, colon, O1{},
            {Integer("initial_probes", &O1::initial_probes, 1, 100000),
             Integer("max_probes", &O1::max_probes, 1, 1000000), Real("gamma", &O1::gamma)}),
        name);
  using O2 = SignOptOptions;
  if (base == "sign-opt")
    return std::make_unique<SignOptAttack>(
        ParseOptions(base, name, colon, O2{},
                     {Integer("probes", &O2::probes, 1, 100000), Real("h", &O2::h),
                      Real("alpha", &O2::alpha)}),
        name);
  using O3 = BoHardLabelOptions;
  if (base == "bo-hl")
    return std::make_unique<BoHardLabelAttack>(
        ParseOptions(
            base, name, colon, O3{},
            {Integer("side", &O3::side, 1, 64), InRange("bo_fraction", &O3::bo_fraction, 0, 1),
             Integer("bo_max_queries", &O3::bo_max_queries, 0, 1000000),
             Integer("patience", &O3::patience, 0, 1000000)}),
        name);
  using O4 = GeodaOptions;
  if (base == "geoda")
    return std::make_unique<GeodaAttack>(
        ParseOptions(base, name, colon, O4{},
                     {Integer("iterations", &O4::iterations, 1, 10000), Real("lambda", &O4::lambda),
                      Real("sigma", &O4::sigma), Integer("subspace", &O4::subspace, 1, 4096)}),
        name);
  return nullptr;
}

}  // namespace

std::unique_ptr<Attack> MakeAttack(const std::string& name, const AttackContext& ctx) {
  const bool mnist = ctx.dataset == "mnist";
  // Adaptive wrappers around another attack: "eot:k=10/square" (attacks/adaptive).
  if (IsAdaptiveSpec(name)) return MakeAdaptiveAttack(name, ctx);
  // BOS^2 with settings: "bos2:key=value,..." (Bos2Attack::ApplySettings); the whole spec
  // is the attack's name in records.
  const auto colon = name.find(':');
  if (colon != std::string::npos) {
    const std::string base = name.substr(0, colon);
    if (auto a = AttackWithSettings(base, name, colon, mnist)) return a;
    if (auto a = LabelAttackWithSettings(base, name, colon)) return a;
    if (base != "bos2" && base != "bos2-nostop")
      throw std::invalid_argument("attack '" + base + "' takes no settings ('" + name + "')");
    Bos2Options o = Bos2Attack::OptionsFor(ctx, base == "bos2");
    Bos2Attack::ApplySettings(name.substr(colon + 1), &o, ctx.dataset);
    return std::make_unique<Bos2Attack>(o, name);
  }
  if (name == "bos2" || name == "bos2-nostop")
    return std::make_unique<Bos2Attack>(Bos2Attack::OptionsFor(ctx, name == "bos2"));
  if (name == "bayesopt" || name == "bayesopt-learnd") {
    BayesOptOptions o;
    o.groups = mnist ? 14 : 12;
    o.learn_side = name == "bayesopt-learnd";
    return std::make_unique<BayesOptAttack>(o);
  }
  if (name == "parsimonious") return std::make_unique<ParsimoniousAttack>();
  if (name == "random") return std::make_unique<RandomSearch>();
  if (name == "signhunter") return std::make_unique<SignHunterAttack>();
  if (name == "rays") return std::make_unique<RaysAttack>();
  if (name == "hsja") return std::make_unique<HsjaAttack>();
  if (name == "geoda") return std::make_unique<GeodaAttack>();
  if (name == "bo-hl") return std::make_unique<BoHardLabelAttack>();
  if (name == "sign-opt") return std::make_unique<SignOptAttack>();
  if (name == "simba-dct") return std::make_unique<SimbaDctAttack>();
  if (name == "nes") return std::make_unique<NesAttack>();
  if (name == "bandits") return std::make_unique<BanditsAttack>();
  if (name == "square-l2") return std::make_unique<SquareL2Attack>();
  if (name == "square") {
    SquareOptions o;
    o.p_init = mnist ? 0.8 : 0.05;
    return std::make_unique<SquareAttack>(o);
  }
  if (name == "genattack") return std::make_unique<GenAttack>();
  if (name == "zoo") return std::make_unique<ZooAttack>();
  if (name == "autozoom") {
    AutoZoomOptions o;
    o.latent_side = mnist ? 14 : 16;
    return std::make_unique<AutoZoomAttack>(o);
  }
  std::string names;
  for (const auto& n : AttackNames()) names += (names.empty() ? "" : ", ") + n;
  throw std::invalid_argument("unknown attack '" + name + "' (available: " + names + ")");
}

}  // namespace advbo::attacks
