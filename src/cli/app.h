// The advbo command line as a library: every subcommand registered on one CLI::App, so the
// binary (main.cc) and the option-walk tests (tests/cli/option_walk_test.cc) parse exactly
// the same options with exactly the same validators.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <vector>

namespace advbo::cli {

/// The whole advbo CLI. Construction registers attack, bo, bench, game, macro, fbo and serve
/// and then adds NonEmptyFinite() to every value-taking option (validators.h), so an empty
/// or non-finite value is refused while parsing, before any work. Not copyable (CLI::App).
class Cli {
 public:
  Cli();
  Cli(const Cli&) = delete;
  Cli& operator=(const Cli&) = delete;

  /// The parser; call app().parse(argc, argv) (throws CLI::ParseError on bad arguments).
  CLI::App& app() { return app_; }

  /// "" when argv[1] is an option or a known subcommand, else the message naming the unknown
  /// command, the list of commands and the closest one ("did you mean").
  std::string UnknownCommand(int argc, char** argv) const;

  /// Runs the subcommand that app().parse selected; returns its exit status. Errors of the
  /// run propagate as exceptions (main prints them as "advbo: error: ...").
  int Run() const;

 private:
  CLI::App app_;
  std::vector<std::function<int()>> runners_;
};

}  // namespace advbo::cli
