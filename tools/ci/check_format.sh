#!/usr/bin/env bash
# Fails (exit 1) when a C++ source or header of the repository is not clang-formatted
# (.clang-format: Google base). Run by ctest as `clang_format`; `clang-format -i FILE` fixes.
set -euo pipefail
cd "$(dirname "$0")/../.."
if git rev-parse --is-inside-work-tree > /dev/null 2>&1; then
  mapfile -t files < <(git ls-files '*.cc' '*.h')
else
  mapfile -t files < <(find src attacks defenses models tests tools -name '*.cc' -o -name '*.h')
fi
"${CLANG_FORMAT:-clang-format}" --dry-run -Werror "${files[@]}"
echo "clang-format: ${#files[@]} files formatted"
