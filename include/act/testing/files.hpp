// Reading kernels and programs from files, with act::Error (kind Io) when a file is missing.
#pragma once

#include <fstream>
#include <sstream>
#include <string>

#include "act/core/error.hpp"
#include "act/hlo/parser.hpp"
#include "act/isa/description.hpp"
#include "act/sim/assembly.hpp"

namespace act::testing {

inline std::string read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(ErrorKind::Io, "cannot open '" + path + "'");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

inline hlo::Module load_kernel(const std::string& path) { return hlo::parse_module(read_text_file(path)); }

inline sim::Program load_program(const std::string& path, const isa::IsaView& isa) {
  return sim::parse_program(read_text_file(path), isa);
}

}  // namespace act::testing
