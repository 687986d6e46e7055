// JSONL traces of BO runs: one JSON object per line, written to FILE.partial and renamed to
// FILE only when the run completes, so an interrupted or failed run never leaves a file
// that looks finished.
#pragma once

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "bo/bo_loop.h"

namespace advbo::bo {

/// The JSON record of one BO evaluation: type "evaluation", evaluation, phase, x, y (null
/// if failed), ok, error (null if ok), best_y, acquisition_value, beta, seconds_objective,
/// seconds_bo, and `extra` when the step has algorithm-specific fields. NaN values are
/// written as null.
nlohmann::json StepRecord(const BoStep& step);

/// Eigen vector as a JSON array.
nlohmann::json JsonArray(const Eigen::VectorXd& v);

/// Line-by-line JSONL writer with an atomic finish.
class JsonlTrace {
 public:
  /// Opens path + ".partial" for writing. Throws std::runtime_error naming the file if it
  /// cannot be created.
  explicit JsonlTrace(std::string path);
  /// Appends one record and flushes (a crash keeps every line written so far). A failed
  /// write (e.g. a full disk) removes the .partial file and throws std::runtime_error naming
  /// it: a run never ends with exit status 0 and a trace cut mid-line.
  void Write(const nlohmann::json& record);
  /// Closes and renames the .partial file to the final path. Throws std::runtime_error on
  /// failure (a failed close removes the .partial file first).
  void Commit();
  /// The trace file's path.
  const std::string& path() const { return path_; }

 private:
  [[noreturn]] void Fail(const std::string& what);
  std::string path_;
  std::ofstream out_;
};

}  // namespace advbo::bo
