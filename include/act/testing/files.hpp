// Reading kernels and programs from files, with act::Error (kind Io) when a file is missing.
#pragma once

#include <string>

#include "act/core/linkage.hpp"
#include "act/hlo/module.hpp"
#include "act/isa/description.hpp"
#include "act/sim/assembly.hpp"

namespace act::testing {

ACT_API std::string read_text_file(const std::string& path);
ACT_API hlo::Module load_kernel(const std::string& path);
ACT_API sim::Program load_program(const std::string& path, const isa::IsaView& isa);

}  // namespace act::testing

#if ACT_DEFINES_IMPLEMENTATION
#include <fstream>
#include <sstream>

#include "act/core/error.hpp"
#include "act/hlo/parser.hpp"

namespace act::testing {

ACT_API std::string read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(ErrorKind::Io, "cannot open '" + path + "'");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

ACT_API hlo::Module load_kernel(const std::string& path) { return hlo::parse_module(read_text_file(path)); }

ACT_API sim::Program load_program(const std::string& path, const isa::IsaView& isa) {
  return sim::parse_program(read_text_file(path), isa);
}

}  // namespace act::testing
#endif
