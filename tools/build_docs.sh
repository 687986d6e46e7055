#!/usr/bin/env bash
# Builds the C++ API reference (Doxygen, docs/Doxyfile) into build/docs/html/ from the public
# headers of src/, attacks/ and defenses/. Any Doxygen warning -- above all an undocumented
# public symbol -- fails the build (exit 1) and is printed; the ctest `docs_build` runs this.
# Installs Debian's doxygen when it is missing and this runs as root (tools/setup.sh does).
#
#   bash tools/build_docs.sh        # then open build/docs/html/index.html
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v doxygen > /dev/null; then
  if [ "$(id -u)" = 0 ]; then
    apt-get install -y --no-install-recommends doxygen > /dev/null
  else
    echo "build_docs: doxygen is not installed (apt-get install doxygen, or bash tools/setup.sh)" >&2
    exit 1
  fi
fi
rm -rf build/docs
mkdir -p build/docs
log=build/docs/warnings.txt
if ! doxygen docs/Doxyfile > /dev/null 2> "$log" || [ -s "$log" ]; then
  sed "s#$(pwd)/##" "$log" >&2
  echo "build_docs: $(grep -c -E "(warning|error):" "$log") Doxygen problem(s); the reference was not built" >&2
  exit 1
fi
echo "build_docs: build/docs/html/index.html"
