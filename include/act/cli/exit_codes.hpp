// Exit codes of the `act` command (DESIGN.md "Errors").
#pragma once

namespace act::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailed = 1;            // no program found, verification failed
inline constexpr int kExitBadInput = 2;          // any act::Error from reading input, bad arguments
inline constexpr int kExitCpuLacksFeature = 3;   // `act run`: this CPU lacks a feature; nothing ran

}  // namespace act::cli
