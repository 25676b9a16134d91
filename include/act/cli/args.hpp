// The arguments of one `act` subcommand: options (`--name value`, `--name=value`, `--flag`) and
// positionals, with numbers range-checked (never narrowed or wrapped).
#pragma once

#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "act/sim/kernel_image.hpp"

namespace act::cli {

// Timeouts and hang limits: at most 10^6 s (11.6 days), so deadlines stay far inside the clock.
inline constexpr double kMaxSeconds = 1e6;
// Counts a user may ask for: trials, kernels, jobs.
inline constexpr std::int64_t kMaxTrials = 1'000'000;
inline constexpr std::int64_t kMaxKernels = 1'000'000;
inline constexpr std::int64_t kMaxJobs = 1024;

// A bad command line: reported with the command's usage, exit 2.
struct UsageError {
  std::string message;
};

class Args {
 public:
  explicit Args(std::vector<std::string_view> args) : args_(std::move(args)), used_(args_.size(), false) {}

  bool flag(std::string_view name) {
    for (std::size_t i = 0; i < args_.size(); ++i)
      if (!used_[i] && args_[i] == name) return used_[i] = true;
    return false;
  }
  std::optional<std::string_view> option(std::string_view name) {
    for (std::size_t i = 0; i < args_.size(); ++i) {
      if (used_[i]) continue;
      if (args_[i] == name) {
        if (i + 1 >= args_.size()) throw UsageError{fmt::format("{} needs a value", name)};
        used_[i] = used_[i + 1] = true;
        return args_[i + 1];
      }
      if (args_[i].size() > name.size() && args_[i].substr(0, name.size()) == name && args_[i][name.size()] == '=') {
        used_[i] = true;
        return args_[i].substr(name.size() + 1);
      }
    }
    return std::nullopt;
  }
  // `--isa NAME`, which every command but parse and isas needs.
  std::string_view required(std::string_view name, std::string_view what) {
    const auto value = option(name);
    if (!value) throw UsageError{fmt::format("{} {} is required", name, what)};
    return *value;
  }
  // An integer in [min, max]; anything else (not a number, out of range) is a usage error,
  // never a silently narrowed or wrapped value.
  std::int64_t integer_option(std::string_view name, std::int64_t fallback, std::int64_t min,
                              std::int64_t max = std::numeric_limits<std::int64_t>::max()) {
    const auto text = option(name);
    if (!text) return fallback;
    std::int64_t value = 0;
    const auto [ptr, ec] = std::from_chars(text->data(), text->data() + text->size(), value);
    if (ec != std::errc() || ptr != text->data() + text->size() || value < min || value > max) {
      if (max == std::numeric_limits<std::int64_t>::max())
        throw UsageError{fmt::format("{} needs an integer >= {}, got '{}'", name, min, *text)};
      throw UsageError{fmt::format("{} needs an integer from {} to {}, got '{}'", name, min, max, *text)};
    }
    return value;
  }
  // A finite number of seconds in (0, kMaxSeconds] (or [0, ...] when zero_allowed): larger
  // values would overflow the clock's deadline arithmetic.
  std::optional<double> seconds_option(std::string_view name, bool zero_allowed = false) {
    const auto text = option(name);
    if (!text) return std::nullopt;
    double seconds = -1;
    const auto [ptr, ec] = std::from_chars(text->data(), text->data() + text->size(), seconds);
    const bool ok = ec == std::errc() && ptr == text->data() + text->size() && std::isfinite(seconds) &&
                    (zero_allowed ? seconds >= 0 : seconds > 0) && seconds <= kMaxSeconds;
    if (!ok)
      throw UsageError{fmt::format("{} needs a number of seconds {} 0 and <= {:g}, got '{}'", name, zero_allowed ? ">=" : ">",
                                   kMaxSeconds, *text)};
    return seconds;
  }
  // `--align N`: HBM region alignment of the kernel image (a power of two; default 64).
  sim::ImageOptions image_options() {
    sim::ImageOptions image;
    image.alignment = integer_option("--align", image.alignment, 1);
    if ((image.alignment & (image.alignment - 1)) != 0 || image.alignment > (std::int64_t{1} << 30))
      throw UsageError{fmt::format("--align needs a power of two from 1 to 2^30, got {}", image.alignment)};
    return image;
  }
  // The remaining arguments, which must be exactly `count` positionals.
  std::vector<std::string_view> positionals(std::size_t count) { return positionals(count, count); }
  // The remaining arguments, which must be from `min` to `max` positionals.
  std::vector<std::string_view> positionals(std::size_t min, std::size_t max) {
    std::vector<std::string_view> out;
    for (std::size_t i = 0; i < args_.size(); ++i) {
      if (used_[i]) continue;
      if (args_[i].size() > 1 && args_[i][0] == '-') throw UsageError{fmt::format("unknown option '{}'", args_[i])};
      out.push_back(args_[i]);
    }
    if (out.size() < min || out.size() > max)
      throw UsageError{fmt::format("expected {}{} file argument{}, got {}", min, max == min ? "" : fmt::format(" or {}", max),
                                   max == 1 ? "" : "s", out.size())};
    return out;
  }

 private:
  std::vector<std::string_view> args_;
  std::vector<bool> used_;
};

}  // namespace act::cli
