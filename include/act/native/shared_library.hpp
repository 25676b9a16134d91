// A shared object loaded with dlopen, and the four functions an emitted kernel exports
// (native/emit_c.hpp): NAME_init, NAME, NAME_release, NAME_hbm_bytes.
#pragma once

#include <dlfcn.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "act/core/error.hpp"

namespace act::native {

class SharedLibrary {
 public:
  explicit SharedLibrary(const std::filesystem::path& file) : handle_(::dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL)) {
    if (!handle_) throw Error(ErrorKind::Execution, fmt::format("cannot load '{}': {}", file.string(), ::dlerror()));
  }
  ~SharedLibrary() {
    if (handle_) ::dlclose(handle_);
  }
  SharedLibrary(const SharedLibrary&) = delete;
  SharedLibrary& operator=(const SharedLibrary&) = delete;

  template <class Function>
  Function* symbol(std::string_view name) const {
    void* address = ::dlsym(handle_, std::string(name).c_str());
    if (!address) throw Error(ErrorKind::Execution, fmt::format("the shared object exports no '{}'", name));
    return reinterpret_cast<Function*>(address);
  }

 private:
  void* handle_;
};

// The entry points of one emitted kernel.
struct NativeKernel {
  const char* (*init)(void) = nullptr;  // nullptr when ready, else the missing CPU feature
  void (*run)(std::uint8_t* hbm) = nullptr;
  void (*release)(void) = nullptr;
  std::size_t (*hbm_bytes)(void) = nullptr;

  static NativeKernel load(const SharedLibrary& library, std::string_view name) {
    NativeKernel k;
    k.init = library.symbol<const char*(void)>(fmt::format("{}_init", name));
    k.run = library.symbol<void(std::uint8_t*)>(name);
    k.release = library.symbol<void(void)>(fmt::format("{}_release", name));
    k.hbm_bytes = library.symbol<std::size_t(void)>(fmt::format("{}_hbm_bytes", name));
    return k;
  }
};

}  // namespace act::native
