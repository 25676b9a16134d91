// The system C compiler, found at run time, building emitted C into a shared object.
//
//   auto cc = act::native::find_c_compiler();        // $ACT_CC, $CC, then cc, gcc, g++, clang on PATH
//   act::native::TemporaryDirectory dir;
//   auto so = act::native::build_shared_object(source, dir.path(), "k3", {.compiler = *cc});
//
// Flags: c_compile_flags() (-x c -std=c11 -ffp-contract=off), -O2, -fPIC -shared, plus
// BuildOptions::extra_flags (e.g. -DACT_EMULATE_AMX). The kernels carry their CPU features as
// target attributes, so no -m flag is needed. POSIX only (fork/exec through posix_spawn).
#pragma once

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include <fmt/format.h>

#include "act/core/error.hpp"
#include "act/native/emit_c.hpp"

extern char** environ;

namespace act::native {

// A fresh directory under the system's temporary directory, removed with its contents.
class TemporaryDirectory {
 public:
  TemporaryDirectory() {
    std::string pattern = (std::filesystem::temp_directory_path() / "act-native-XXXXXX").string();
    if (!::mkdtemp(pattern.data())) throw Error(ErrorKind::Io, fmt::format("cannot create a temporary directory like '{}'", pattern));
    path_ = pattern;
  }
  ~TemporaryDirectory() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TemporaryDirectory(const TemporaryDirectory&) = delete;
  TemporaryDirectory& operator=(const TemporaryDirectory&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

namespace compiler_detail {

inline std::optional<std::string> on_path(std::string_view program) {
  if (program.find('/') != std::string_view::npos)
    return ::access(std::string(program).c_str(), X_OK) == 0 ? std::optional<std::string>(program) : std::nullopt;
  const char* path = std::getenv("PATH");
  if (!path) return std::nullopt;
  std::stringstream dirs{std::string(path)};
  for (std::string dir; std::getline(dirs, dir, ':');) {
    if (dir.empty()) continue;
    const std::string candidate = dir + "/" + std::string(program);
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return std::nullopt;
}

inline std::string read_text(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace compiler_detail

// $ACT_CC, then $CC, then the first of cc, gcc, g++, clang on PATH; nothing when none exists.
inline std::optional<std::string> find_c_compiler() {
  for (const char* variable : {"ACT_CC", "CC"})
    if (const char* value = std::getenv(variable); value && *value)
      if (auto found = compiler_detail::on_path(value)) return found;
  for (const char* program : {"cc", "gcc", "g++", "clang"})
    if (auto found = compiler_detail::on_path(program)) return found;
  return std::nullopt;
}

struct BuildOptions {
  std::string compiler;                  // empty: find_c_compiler()
  std::string optimization = "-O2";
  std::vector<std::string> extra_flags;  // e.g. -DACT_EMULATE_AMX
};

// The full command line build_shared_object runs (for messages and reports).
inline std::vector<std::string> build_command(const BuildOptions& options, const std::filesystem::path& source,
                                              const std::filesystem::path& output) {
  std::string compiler = options.compiler;
  if (compiler.empty()) {
    const auto found = find_c_compiler();
    if (!found) throw Error(ErrorKind::Unsupported, "no C compiler found (set ACT_CC or CC, or put cc, gcc, g++ or clang on PATH)");
    compiler = *found;
  }
  std::vector<std::string> command{compiler};
  for (auto& f : c_compile_flags()) command.push_back(f);
  command.push_back(options.optimization);
  command.insert(command.end(), {"-fPIC", "-shared", "-Wall"});
  for (const auto& f : options.extra_flags) command.push_back(f);
  command.insert(command.end(), {source.string(), "-o", output.string()});
  return command;
}

// Writes `source` to DIRECTORY/STEM.c and compiles it to DIRECTORY/STEM.so; returns the latter.
// A compiler failure is Error(Execution) carrying its diagnostics.
inline std::filesystem::path build_shared_object(std::string_view source, const std::filesystem::path& directory, std::string_view stem,
                                                 const BuildOptions& options = {}) {
  const auto c_file = directory / fmt::format("{}.c", stem);
  const auto so_file = directory / fmt::format("{}.so", stem);
  const auto log_file = directory / fmt::format("{}.log", stem);
  {
    std::ofstream out(c_file, std::ios::binary);
    if (!out || !(out << source)) throw Error(ErrorKind::Io, fmt::format("cannot write '{}'", c_file.string()));
  }
  const std::vector<std::string> command = build_command(options, c_file, so_file);
  std::vector<char*> argv;
  for (const auto& a : command) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  pid_t pid = 0;
  const int spawned = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) throw Error(ErrorKind::Execution, fmt::format("cannot run the C compiler '{}': {}", command[0], std::strerror(spawned)));
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) throw Error(ErrorKind::Execution, "lost the C compiler process");
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw Error(ErrorKind::Execution, fmt::format("the C compiler failed ({}):\n{}", fmt::join(command, " "),
                                                  compiler_detail::read_text(log_file)));
  return so_file;
}

}  // namespace act::native
