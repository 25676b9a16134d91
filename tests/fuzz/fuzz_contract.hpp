// Shared checks for the parser fuzz targets: what a parser may do with arbitrary text.
// A violation calls fuzz_fail, which aborts so libFuzzer records the input as a crash.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "act/core/error.hpp"

namespace act::fuzz {

[[noreturn]] inline void fuzz_fail(const char* what, std::string_view detail = {}) {
  std::fprintf(stderr, "fuzz contract violated: %s\n%.*s\n", what, static_cast<int>(detail.size()), detail.data());
  std::abort();
}

// A text error must point into the text: a known line:column no further than one past its end.
inline void check_error_location(const Error& error, std::string_view text) {
  if (error.kind() != ErrorKind::Parse && error.kind() != ErrorKind::Shape) return;  // e.g. Isa: no text position required
  const SourceLocation where = error.location();
  if (!where.known() || where.column < 1) fuzz_fail("parse/shape error without a line:column", error.what());
  int lines = 1;
  for (char c : text) lines += c == '\n';
  if (where.line > lines) fuzz_fail("error line past the end of the text", error.what());
}

}  // namespace act::fuzz
