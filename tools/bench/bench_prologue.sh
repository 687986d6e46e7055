# Sourced by the paper-reproduction scripts (bench_hybrid_batch.sh, bench_uhe_bo.sh,
# bench_macro_bo.sh, bench_rmgpucb.sh): `bench_prologue TARGET` sets up the build if needed,
# builds the driver TARGET and makes sure Debian's matplotlib is there for the PNG curves.
bench_prologue() {
  [ -x "build/tools/$1" ] || bash tools/setup.sh
  cmake --build build --target "$1" >&2
  /usr/bin/python3 -c "import matplotlib" 2> /dev/null || {
    local SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq python3-matplotlib >&2
  }
}
