// The one registry of advbo's attacks: every attack is one entry here -- its name,
// threat-model family, a one-line summary with its source, its settings keys and its factory
// -- and everything else that lists attacks reads it: MakeAttack and AttackNames
// (attacks/attack.h), `--attack` / `--attacks` / `--ensemble` help (AttackHelp), evaluate's
// default ensembles (DefaultEnsemble), the message of a threat-model mismatch, the Python
// module's _core.ATTACKS. A test checks that attacks/attack.h's overview, the README and
// docs/results/threat_models.md name every entry. Adding an attack = its folder + one entry.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "attacks/attack.h"
#include "oracle/oracle.h"

namespace advbo::attacks {

/// The threat-model family an attack belongs to (how --help and the docs group attacks).
enum class AttackFamily {
  kScoreLinf,  ///< score feedback, L_inf ball
  kScoreL2,    ///< score feedback, L2 ball
  kLabel,      ///< label feedback (hard-label), L_inf and/or L2, untargeted
};

/// One registered attack.
struct AttackEntry {
  std::string name;  ///< spec name ("square"); its settings follow a colon ("square:p_init=0.3")
  /// The threat model family the attack runs under (norm and feedback).
  AttackFamily family = AttackFamily::kScoreLinf;
  std::string summary;   ///< one line: the method and its source (paper, algorithm)
  std::string settings;  ///< the settings keys, comma-separated ("" = takes none)
  /// Rank in evaluate's default ensemble of its feedback under L_inf ([0]) and L2 ([1]):
  /// 1 = first, 0 = not in it.
  int ensemble_rank[2] = {0, 0};
  /// Builds the attack from its whole spec (`spec` = name, or name:settings) for `ctx`.
  /// Throws std::invalid_argument naming the spec on an unknown setting or a bad value.
  std::function<std::unique_ptr<Attack>(const std::string& spec, const AttackContext& ctx)> make;
};

/// Every attack, in help order: score-based L_inf, score-based L2, hard-label.
const std::vector<AttackEntry>& AttackRegistry();

/// The entry of spec name `name` ("square" of "square:p_init=0.3"), or nullptr.
const AttackEntry* FindAttack(const std::string& name);

/// The help of an option that takes attack specs: one line per family listing its names, the
/// settings syntax and the adaptive wrappers (attacks/adaptive).
std::string AttackHelp();

/// The registry as a markdown table (name, threat model, method and source, settings), the
/// one README.md shows between "<!-- attack registry -->" markers (a test keeps them equal).
std::string RegistryTable();

/// Evaluate's default ensemble for a threat model: the entries of that feedback ranked under
/// `norm`, in rank order, comma-joined (scores: L_inf "square", L2 "simba-dct,square-l2";
/// label: L_inf "rays,bo-hl,hsja", L2 "bo-hl,cgba,hsja": the two lowest median L2 distances at
/// 1,000 queries on CIFAR-10 and MNIST and HopSkipJump, whose full-space steps keep improving
/// at 5,000 where CGBA's low-frequency ones stall).
std::string DefaultEnsemble(oracle::Norm norm, oracle::Feedback feedback);

}  // namespace advbo::attacks
