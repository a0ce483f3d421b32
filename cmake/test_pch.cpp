// Hosts the precompiled header every test target reuses (cmake/SystoleTargets.cmake,
// systole_test_pch): CMake builds a target's precompiled header beside one of its sources, so
// this target exists for that and is never linked into anything.
