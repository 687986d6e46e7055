// The attack registry: names and specs accepted by MakeAttack (attacks/attack.h).
#include <cmath>
#include <stdexcept>

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

// Score-based attacks with settings ("square:p_init=0.3"); nullptr when `base` is none of them.
std::unique_ptr<Attack> ScoreAttackWithSettings(const std::string& base, const std::string& name,
                                                size_t colon, bool mnist) {
  if (base == "square") {
    SquareOptions o;
    o.p_init = mnist ? 0.8 : 0.05;
    for (const auto& [key, v] : ParseAttackSettings(name, name.substr(colon + 1))) {
      if (key == "p_init") {
        o.p_init = v;
      } else if (key == "resample") {
        o.resample = SettingInteger(name, key, v, 1, 10000);
      } else {
        throw std::invalid_argument("attack '" + name + "': unknown setting '" + key +
                                    "' (square takes p_init, resample)");
      }
    }
    return std::make_unique<SquareAttack>(o, name);
  }
  if (base == "nes") {
    NesOptions o;
    for (const auto& [key, v] : ParseAttackSettings(name, name.substr(colon + 1))) {
      if (key == "samples") {
        o.samples = SettingInteger(name, key, v, 1, 100000);
      } else if (key == "sigma") {
        o.sigma = v;
      } else if (key == "lr_ratio") {
        o.lr_ratio = v;
      } else {
        throw std::invalid_argument("attack '" + name + "': unknown setting '" + key +
                                    "' (nes takes samples, sigma, lr_ratio)");
      }
    }
    return std::make_unique<NesAttack>(o, name);
  }
  if (base == "bandits") {
    BanditsOptions o;
    for (const auto& [key, v] : ParseAttackSettings(name, name.substr(colon + 1))) {
      if (key == "exploration") {
        o.exploration = v;
      } else if (key == "fd_eta") {
        o.fd_eta = v;
      } else if (key == "online_lr") {
        o.online_lr = v;
      } else if (key == "lr_ratio") {
        o.lr_ratio = v;
      } else if (key == "tile") {
        o.tile = SettingInteger(name, key, v, 1, 4096);
      } else {
        throw std::invalid_argument(
            "attack '" + name + "': unknown setting '" + key +
            "' (bandits takes exploration, fd_eta, online_lr, lr_ratio, tile)");
      }
    }
    return std::make_unique<BanditsAttack>(o, name);
  }
  return nullptr;
}

// L2 attacks with settings ("simba-dct:step=0.1"); nullptr when `base` is none of them.
std::unique_ptr<Attack> L2AttackWithSettings(const std::string& base, const std::string& name,
                                             size_t colon) {
  if (base == "square-l2") {
    double p_init = 0.1;
    for (const auto& [key, v] : ParseAttackSettings(name, name.substr(colon + 1))) {
      if (key != "p_init")
        throw std::invalid_argument("attack '" + name + "': unknown setting '" + key +
                                    "' (square-l2 takes p_init)");
      p_init = v;
    }
    return std::make_unique<SquareL2Attack>(p_init, name);
  }
  if (base == "simba-dct") {
    SimbaOptions o;
    for (const auto& [key, v] : ParseAttackSettings(name, name.substr(colon + 1))) {
      if (key == "step") {
        o.step = v;
      } else if (key == "initial") {
        o.initial = SettingInteger(name, key, v, 1, 4096);
      } else if (key == "stride") {
        o.stride = SettingInteger(name, key, v, 1, 4096);
      } else {
        throw std::invalid_argument("attack '" + name + "': unknown setting '" + key +
                                    "' (simba-dct takes step, initial, stride)");
      }
    }
    return std::make_unique<SimbaDctAttack>(o, name);
  }
  return nullptr;
}

// Hard-label attacks with settings ("rays:tolerance=0.01"); nullptr when `base` is none.
std::unique_ptr<Attack> LabelAttackWithSettings(const std::string& base, const std::string& name,
                                                size_t colon) {
  if (base == "rays") {
    RaysOptions o;
    for (const auto& [key, v] : ParseAttackSettings(name, name.substr(colon + 1))) {
      if (key != "tolerance")
        throw std::invalid_argument("attack '" + name + "': unknown setting '" + key +
                                    "' (rays takes tolerance)");
      o.tolerance = v;
    }
    return std::make_unique<RaysAttack>(o, name);
  }
  if (base == "hsja") {
    HsjaOptions o;
    for (const auto& [key, v] : ParseAttackSettings(name, name.substr(colon + 1))) {
      if (key == "initial_probes") {
        o.initial_probes = SettingInteger(name, key, v, 1, 100000);
      } else if (key == "max_probes") {
        o.max_probes = SettingInteger(name, key, v, 1, 1000000);
      } else if (key == "gamma") {
        o.gamma = v;
      } else {
        throw std::invalid_argument("attack '" + name + "': unknown setting '" + key +
                                    "' (hsja takes initial_probes, max_probes, gamma)");
      }
    }
    return std::make_unique<HsjaAttack>(o, name);
  }
  if (base == "sign-opt") {
    SignOptOptions o;
    for (const auto& [key, v] : ParseAttackSettings(name, name.substr(colon + 1))) {
      if (key == "probes") {
        o.probes = SettingInteger(name, key, v, 1, 100000);
      } else if (key == "h") {
        o.h = v;
      } else if (key == "alpha") {
        o.alpha = v;
      } else {
        throw std::invalid_argument("attack '" + name + "': unknown setting '" + key +
                                    "' (sign-opt takes probes, h, alpha)");
      }
    }
    return std::make_unique<SignOptAttack>(o, name);
  }
  if (base == "bo-hl") {
    BoHardLabelOptions o;
    for (const auto& [key, v] : ParseAttackSettings(name, name.substr(colon + 1))) {
      if (key == "side") {
        o.side = SettingInteger(name, key, v, 1, 64);
      } else if (key == "bo_fraction") {
        o.bo_fraction = SettingInRange(name, key, v, 0, 1);
      } else {
        throw std::invalid_argument("attack '" + name + "': unknown setting '" + key +
                                    "' (bo-hl takes side, bo_fraction)");
      }
    }
    return std::make_unique<BoHardLabelAttack>(o, name);
  }
  return nullptr;
}

// GeoDA with settings ("geoda:iterations=20"); nullptr when `base` is not "geoda".
std::unique_ptr<Attack> GeodaWithSettings(const std::string& base, const std::string& name,
                                          size_t colon) {
  if (base != "geoda") return nullptr;
  GeodaOptions o;
  for (const auto& [key, v] : ParseAttackSettings(name, name.substr(colon + 1))) {
    if (key == "iterations") {
      o.iterations = SettingInteger(name, key, v, 1, 10000);
    } else if (key == "lambda") {
      o.lambda = v;
    } else if (key == "sigma") {
      o.sigma = v;
    } else if (key == "subspace") {
      o.subspace = SettingInteger(name, key, v, 1, 4096);
    } else {
      throw std::invalid_argument("attack '" + name + "': unknown setting '" + key +
                                  "' (geoda takes iterations, lambda, sigma, subspace)");
    }
  }
  return std::make_unique<GeodaAttack>(o, name);
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
    if (auto a = ScoreAttackWithSettings(base, name, colon, mnist)) return a;
    if (auto a = L2AttackWithSettings(base, name, colon)) return a;
    if (auto a = LabelAttackWithSettings(base, name, colon)) return a;
    if (auto a = GeodaWithSettings(base, name, colon)) return a;
    if (base != "bos2" && base != "bos2-nostop")
      throw std::invalid_argument("attack '" + base + "' takes no settings ('" + name + "')");
    Bos2Options o = Bos2Attack::OptionsFor(ctx, base == "bos2");
    Bos2Attack::ApplySettings(name.substr(colon + 1), &o);
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
