// The translation unit that builds advbo's one precompiled header (CMakeLists.txt,
// ADVBO_PCH): every other C++ target reuses it (target_precompile_headers REUSE_FROM).
int advbo_pch_anchor() { return 0; }
