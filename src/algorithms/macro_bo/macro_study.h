// An epsilon-Macro-BO study (Kharkovskii 2020 thesis, Ch. 4, Sec. 4.4): one planner (eps-Macro-BO,
// its anytime variant, nonmyopic GP-UCB or GP-BUCB) run as an episode on each of R
// realisations of a synthetic field, with mean +- standard error of the average normalised
// output and the simple regret. The library behind `advbo macro`.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "algorithms/macro_bo/field.h"
#include "algorithms/macro_bo/macro_bo.h"
#include "bo/trace.h"

namespace advbo::algorithms {

/// A study's settings, with the CLI's defaults.
struct MacroStudyOptions {
  std::string algo = "emacro";     ///< ParseMacroAlgo name (recorded as given)
  std::string field = "plankton";  ///< FieldNames()
  MacroOptions planner;            ///< H, N, beta, epsilon, anytime iterations
  int per_location = 20;           ///< macro-actions per location (MakeField)
  int realisations = 1;            ///< R >= 1; realisation r uses seed + r
  /// Seed of the first realisation and the planner's samples.
  uint64_t seed = 0;
  /// Throws std::invalid_argument when the planner is out of range (MacroOptions::Validate),
  /// per_location < 1 or realisations < 1 (the field and algorithm names are checked by
  /// MakeField / ParseMacroAlgo).
  void Validate() const;
};

/// The validated study: the first realisation (built, so a bad field fails early), the
/// trace's config record, and "" or a warning about the planning tree's size.
struct PreparedMacroStudy {
  /// The validated options.
  MacroStudyOptions options;
  /// The first realisation of the field.
  MacroField first;
  /// The trace's config record.
  nlohmann::json config;
  /// "" or a warning about the planning tree's size.
  std::string warning;
};

/// Validates the planner options (MacroOptions::Validate) and builds the first realisation.
/// Throws std::invalid_argument naming the bad option or field.
PreparedMacroStudy PrepareMacroStudy(const MacroStudyOptions& o);

/// Mean and standard error over realisations.
struct MeanSe {
  /// Mean and standard error of the mean.
  ///@{
  double mean = 0, se = 0;
  ///@}
};

/// What a study measured.
struct MacroStudyResult {
  MeanSe output;       ///< average normalised output (eq. of Sec. 4.4)
  MeanSe regret;       ///< simple regret
  double nodes = 0;    ///< explored tree nodes per episode (mean)
  double seconds = 0;  ///< planning time per episode (mean)
  int fallbacks = 0;   ///< most-likely-observation values used (eq. 4.9 / 4.12)
};

/// Runs the R episodes; writes "step" and "episode" records and the summary to `trace` (may
/// be null; not committed here); progress(done, mean output, mean regret) after each episode.
MacroStudyResult RunMacroStudy(const PreparedMacroStudy& p, bo::JsonlTrace* trace,
                               const std::function<void(int, double, double)>& progress);

}  // namespace advbo::algorithms
