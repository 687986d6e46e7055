// Fuzz harnesses of advbo's input parsers. Each takes arbitrary bytes and
// feeds them to one parser the way a user's file or option would reach it; the parser may
// refuse the input with its documented exception (data::DataError, std::invalid_argument,
// std::runtime_error), anything else — a crash, a sanitizer report, another exception, a
// hang — is a bug. Built as libFuzzer executables with -DADVBO_FUZZ=ON (clang) and, in every
// build, into test_fuzz_regressions, which replays the committed inputs of
// tests/fuzz/corpus/<target>/.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace advbo::fuzz {

/// MNIST IDX parser (data::ParseMnist, behind data::ReadMnist): the first two bytes
/// (big-endian) give the length of the images file, the rest is the labels file.
int FuzzMnist(const uint8_t* data, size_t size);
/// CIFAR-10 batch parser (data::ParseCifar10, behind data::ReadCifar10) on the bytes.
int FuzzCifar10(const uint8_t* data, size_t size);
/// Image decoder (data::DecodeImage; data::ReadImages shares its conversion) on the bytes.
int FuzzImages(const uint8_t* data, size_t size);
/// Spec parsers: defense pipelines and game defenders (defenses/), attack specs including
/// BOS^2 settings (attacks::MakeAttack), the bench attack list (experiment::SplitAttackList).
int FuzzSpecs(const uint8_t* data, size_t size);
/// `advbo bo --bounds` / `--init` / `--candidates` parsers (cli/parse.h); the first byte
/// picks --dim.
int FuzzBounds(const uint8_t* data, size_t size);

/// The harnesses by name ("mnist", "cifar10", "images", "specs", "bounds").
using Harness = int (*)(const uint8_t*, size_t);
std::vector<std::pair<std::string, Harness>> Harnesses();

}  // namespace advbo::fuzz
