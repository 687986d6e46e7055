// The advbo command-line tool: one subcommand per file (attack_command.cc, ...), assembled in
// cli/app.cc.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>
#include <string>

#include "bo/allocator.h"
#include "cli/app.h"

int main(int argc, char** argv) {
  advbo::bo::ConfigureAllocatorForLargeMatrices();
  advbo::cli::Cli cli;
  CLI::App& app = cli.app();
  if (const std::string bad = cli.UnknownCommand(argc, argv); !bad.empty()) {
    std::fprintf(stderr, "advbo: error: %s\nRun advbo --help for more information.\n", bad.c_str());
    return 1;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // Bad arguments: one error line in advbo's format, exit status 1, nothing written.
    std::fprintf(stderr, "advbo: error: %s\nRun with --help for more information.\n", e.what());
    return 1;
  }
  try {
    return cli.Run();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "advbo: error: %s\n", e.what());
    return 1;
  }
}
