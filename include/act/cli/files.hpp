// Reading and writing the `act` tool's files: inputs bounded in size, outputs checked after they
// are closed (a full disk shows there), errors located in their file ("k.hlo:3:7: ...").
#pragma once

#include <cstddef>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include <fmt/format.h>

#include "act/cli/context.hpp"
#include "act/core/error.hpp"
#include "act/hlo/inline.hpp"
#include "act/hlo/module.hpp"
#include "act/hlo/parser.hpp"

namespace act::cli {

// Input files (HLO, assembly) are read whole up to this size: 64 MiB is 250x the largest
// module of the corpus, and far beyond any tiled kernel.
inline constexpr std::size_t kMaxInputBytes = std::size_t{64} << 20;

// An act::Error from reading a file, already formatted as "FILE:line:column: kind: message".
struct FileError {
  std::string message;
};

// Reads a whole text input, at most kMaxInputBytes: a device that never ends (/dev/zero) or a
// huge file gets an error instead of filling memory, and a directory is not an empty file.
inline std::string read_file(std::string_view path) {
  std::error_code ec;
  if (std::filesystem::is_directory(std::filesystem::path(path), ec))
    throw Error(ErrorKind::Io, fmt::format("'{}' is a directory, not a file", path));
  std::ifstream in{std::string(path), std::ios::binary};
  if (!in) throw Error(ErrorKind::Io, fmt::format("cannot open '{}'", path));
  std::string text;
  std::vector<char> chunk(1 << 16);
  while (in) {
    in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    text.append(chunk.data(), static_cast<std::size_t>(in.gcount()));
    if (text.size() > kMaxInputBytes)
      throw Error(ErrorKind::Io,
                  fmt::format("'{}' is larger than act's limit of {} MiB for an input file", path, kMaxInputBytes >> 20));
  }
  if (in.bad()) throw Error(ErrorKind::Io, fmt::format("cannot read '{}'", path));
  return text;
}

// Runs `f`, prefixing the file name to errors located in its text ("a.hlo:3:7: parse error: ...").
template <class F>
auto in_file(std::string_view path, F&& f) {
  try {
    return f();
  } catch (const Error& e) {
    throw FileError{fmt::format("{}:{}{}", path, e.location().known() ? "" : " ", e.what())};
  }
}

inline hlo::Module load_module(Context& context, std::string_view path) {
  context.phase = fmt::format("reading '{}'", path);
  const std::string text = read_file(path);
  context.phase = fmt::format("parsing '{}'", path);
  return in_file(path, [&] { return hlo::parse_module(text); });
}

// The kernel to compile or verify: the module's entry, or the computation --computation names
// (a fused computation of an XLA dump), with its calls and fusions inlined (hlo/inline.hpp).
inline hlo::Module load_kernel(Context& context, std::string_view path, std::optional<std::string_view> computation) {
  hlo::Module module = load_module(context, path);
  return in_file(path, [&] {
    if (computation) module = hlo::select_computation(module, *computation);
    return hlo::inline_calls(module);
  });
}

// Writes `text` to `path` and checks that it reached the file (a full disk shows at flush or
// close, not at the write).
inline void write_file(Context& context, std::string_view path, const std::string& text) {
  context.phase = fmt::format("writing '{}'", path);
  std::ofstream out{std::string(path), std::ios::binary};
  if (!out) throw Error(ErrorKind::Io, fmt::format("cannot open '{}' for writing", path));
  out << text;
  out.close();
  if (!out) throw Error(ErrorKind::Io, fmt::format("cannot write '{}'", path));
}

// Writes to standard output and checks that it got there (stdout may be a full disk or a
// closed pipe).
inline void write_stdout(const std::string& text) {
  std::cout << text << std::flush;
  if (!std::cout || std::fflush(stdout) != 0 || std::ferror(stdout)) throw Error(ErrorKind::Io, "cannot write to standard output");
}

// True when `a` and `b` name the same existing file (so `-o` cannot overwrite the input).
inline bool same_file(std::string_view a, std::string_view b) {
  std::error_code ec;
  const bool same = std::filesystem::equivalent(std::filesystem::path(a), std::filesystem::path(b), ec);
  return !ec && same;
}

}  // namespace act::cli
