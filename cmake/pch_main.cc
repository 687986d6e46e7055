// The translation unit that builds the precompiled header of advbo's executables (-fPIE;
// CMakeLists.txt, ADVBO_PCH); libraries reuse advbo_pch's (-fPIC).
int main() { return 0; }
