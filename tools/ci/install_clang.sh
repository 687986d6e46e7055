#!/usr/bin/env bash
# Installs clang 14 and its sanitizer / libFuzzer runtimes (Debian 12: clang,
# libclang-rt-14-dev) when they are missing. Used by the sanitizer build
# (tools/ci/run_sanitized_tests.sh: clang compiles it in about 40 % of GCC's time) and the fuzz
# build (tools/ci/run_fuzz.sh: libFuzzer is clang's).
set -euo pipefail
if ! command -v clang++ > /dev/null ||
  [ ! -e /usr/lib/llvm-14/lib/clang/14.0.6/lib/linux/libclang_rt.fuzzer-x86_64.a ]; then
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends clang \
    libclang-rt-14-dev >&2
fi
