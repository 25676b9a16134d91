// Programs built into one shared object and loaded, ready to call.
//
//   act::native::NativeBuild built(kernels, isa);             // CKernel{program, image, {.function_name}}
//   const act::native::NativeKernel& k3 = built.kernel("k3");
//   if (const char* missing = k3.init()) ...                    // the CPU lacks `missing`
//   k3.run(hbm); ... k3.release();
//
// With BuildOptions::emulate, the ISA mapping's emulated features (AMX's tile instructions) run
// in software (isa/c_mapping.hpp), so a CPU without them can still execute the file.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "act/core/error.hpp"
#include "act/isa/description.hpp"
#include "act/native/compiler.hpp"
#include "act/native/emit_c.hpp"
#include "act/native/shared_library.hpp"

namespace act::native {

// The flags that make the ISA mapping's emulation take over (throws when it has none).
inline BuildOptions with_emulation(BuildOptions options, const isa::IsaView& isa) {
  if (!isa.c_mapping || isa.c_mapping->emulation_define.empty())
    throw Error(ErrorKind::Unsupported, fmt::format("ISA {}'s C mapping emulates no CPU feature", isa.name));
  options.extra_flags.push_back(fmt::format("-D{}", isa.c_mapping->emulation_define));
  return options;
}

// A zeroed HBM image for a native kernel: `bytes` long, aligned to max(alignment, 64).
class HbmBuffer {
 public:
  HbmBuffer(std::int64_t bytes, std::int64_t alignment = 64) : size_(static_cast<std::size_t>(std::max<std::int64_t>(bytes, 1))) {
    const auto a = static_cast<std::size_t>(std::max<std::int64_t>(alignment, 64));
    const std::size_t rounded = (size_ + a - 1) / a * a;
    data_.reset(static_cast<std::uint8_t*>(std::aligned_alloc(a, rounded)));
    if (!data_) throw Error(ErrorKind::Execution, fmt::format("cannot allocate {} bytes of HBM", rounded));
    std::memset(data_.get(), 0, rounded);
  }
  std::span<std::uint8_t> bytes() const { return {data_.get(), size_}; }

 private:
  struct Free {
    void operator()(std::uint8_t* p) const { std::free(p); }
  };
  std::size_t size_;
  std::unique_ptr<std::uint8_t, Free> data_;
};

class NativeBuild {
 public:
  NativeBuild(std::span<const CKernel> kernels, const isa::IsaView& isa, const BuildOptions& options = {})
      : source_(emit_c(kernels, isa)) {
    const auto so = build_shared_object(source_, directory_.path(), "act_kernels", options);
    command_ = fmt::format("{}", fmt::join(build_command(options, directory_.path() / "act_kernels.c", so), " "));
    library_ = std::make_unique<SharedLibrary>(so);
    for (const auto& k : kernels) {
      const std::string name = c_identifier(k.options.function_name.empty() ? "kernel" : k.options.function_name);
      kernels_.emplace(name, NativeKernel::load(*library_, name));
    }
  }

  const NativeKernel& kernel(std::string_view name) const {
    const auto it = kernels_.find(std::string(name));
    if (it == kernels_.end()) throw Error(ErrorKind::Internal, fmt::format("no native kernel '{}' was built", name));
    return it->second;
  }
  const std::string& source() const { return source_; }
  const std::string& command() const { return command_; }  // the compiler's command line

 private:
  TemporaryDirectory directory_;  // declared first: removed after the library is closed
  std::string source_;
  std::string command_;
  std::unique_ptr<SharedLibrary> library_;
  std::map<std::string, NativeKernel> kernels_;
};

}  // namespace act::native
