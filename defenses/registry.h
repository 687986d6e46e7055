// The one registry of advbo's defenses: every stage a --defense spec can name, with
// what it is, its settings and its source; `--defense`'s help, the pairing of each defense with
// the adaptive attack that knows it (DefensePipeline::AdaptiveAttack, computed, never
// restated) and the README's defense table are generated from it, and a test checks that
// ParseDefense takes every entry.
#pragma once

#include <string>
#include <vector>

namespace advbo::defenses {

/// Where a defense acts.
enum class DefenseKind {
  kInput,     ///< transforms the query before the model (defense.h)
  kOutput,    ///< post-processes the scores after the model (output_defense.h)
  kDetector,  ///< watches the queries and refuses or flags (stateful_detector.h)
  kGame,      ///< a defender playing a repeated game against the attack (game_defense.h)
};

/// One registered defense.
struct DefenseEntry {
  std::string name;  ///< spec name ("jpeg"); settings follow a colon ("jpeg:quality=75")
  /// Where the stage acts: on the input, on the output or as a stateful detector.
  DefenseKind kind = DefenseKind::kInput;
  std::string example;      ///< a whole spec that ParseDefense / ParseGameDefense takes
  std::string summary;      ///< one line: what it does and its source
  bool randomized = false;  ///< whether the same image can get different answers
};

/// Every defense, in help order: input, output, detector, game.
const std::vector<DefenseEntry>& DefenseRegistry();

/// The adaptive attack against `example` around attack `base` ("eot:k=10/square" for noise),
/// as DefensePipeline::AdaptiveAttack (or the game defender's EOT) builds it.
std::string AdaptiveAttackOf(const DefenseEntry& entry, const std::string& base);

/// `--defense`'s help: one line per kind listing its examples, and the adaptive attack each
/// kind is evaluated with.
std::string DefenseHelp();

/// The registry as a markdown table (defense, where, what and source, adaptive attack),
/// the one README.md shows between "<!-- defense registry -->" markers (a test keeps them
/// equal).
std::string DefenseTable();

}  // namespace advbo::defenses
