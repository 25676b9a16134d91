// compile_time: the paper's compile-time study (§7, Fig. 16) on this machine.
//
// Seeded random kernels (the sound-mode soak generator, testing/random_kernel.hpp) of
// --min-nodes .. --max-nodes nodes per ISA, plus transformer-block-like kernels of about the
// --large node counts (testing/transformer_kernel.hpp: s8[16,16] attention heads, residual adds,
// ReLU MLPs) for --large-isa, by default gemmini: with 320 KiB of scratchpad and accumulator it
// has the largest buffers of the ISAs that compute the blocks' s8 operators (gemmini_hw's
// accumulator is larger, but it computes no elementwise add, subtract or maximum). Each kernel is compiled once and its program verified with the
// simulator against the reference interpreter; a kernel that compiles is compiled --reps times
// more and timed. Kernels without a program (not found / timed out) are counted, not timed: the
// paper's figures are for kernels that have one.
//
// Two times per compiled kernel, each the median of the reps: `median_ms`, the whole compile
// (what a caller waits for, the termination heuristic's wait included), and `best_ms`, when the
// chosen program was found (the paper's `final.time`, Fig. 12 (a), which its Fig. 16 reports).
// The heuristic waits up to patience (2) x that time for a better candidate (the enumeration
// or the extraction step bound may end first), so a compile takes up to about twice best_ms.
//
// Writes DIR/compile_time.json, DIR/compile_time.csv and, when gnuplot is installed (Debian's
// gnuplot-nox), DIR/compile_time.png of compile time against nodes, with the fitted growth
// t = a * nodes^b (least squares on the logarithms of the medians).
//
// --kernel-dir DIR adds the .hlo files of DIR (sorted by name) for every --isa, kind "file": the
// paper's Fig. 16 study is `--isa gemmini --kernels 0 --large none --kernel-dir
// ../shared/kernels/gemmini-act/fuzz` (ACT's NNSmith kernels).
//
//   cmake -S . -B build-bench -DACT_BUILD_BENCHMARKS=ON -DCMAKE_BUILD_TYPE=Release
//   cmake --build build-bench --target compile_time
//   build-bench/bench/compile_time --out compile-time            # 100 kernels/ISA x 20 reps
//   build-bench/bench/compile_time --kernels 10 --reps 3 --out /tmp/ct   # a quick look
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "act/act.hpp"
#include "act/isa/registry.hpp"
#include "act/testing/files.hpp"
#include "act/testing/random_kernel.hpp"
#include "act/testing/transformer_kernel.hpp"

namespace {

using Clock = std::chrono::steady_clock;

struct Settings {
  std::vector<std::string> isas;  // empty: every built-in ISA
  bool isas_given = false;        // --isa was used
  std::size_t kernels = 100;
  int reps = 20;
  std::uint64_t seed = 1;
  double timeout = 5;
  int min_nodes = 7, max_nodes = 89;
  std::vector<int> large{150, 270, 390};
  std::string large_isa = "gemmini";  // where the transformer-like --large kernels are compiled
  std::filesystem::path out = "compile-time";
  std::filesystem::path kernel_dir;  // empty: no kernels from files
};

struct Row {
  std::string isa, kind;  // kind: "random", "large" or "file"
  std::size_t index = 0;
  std::uint64_t seed = 0;
  int nodes = 0;
  std::string outcome;  // verified / miscompiled / not found / timed out / rejected
  std::size_t instructions = 0;
  double first_ms = 0;     // the first compile, whatever its outcome (a 'no program' costs this)
  std::vector<double> ms;  // the timed reps
  std::vector<double> best_ms;  // per timed rep: when the chosen program was found
  act::codegen::Statistics median_stats;
  std::string file;  // kind "file": the kernel's file name
  static double median_of(std::vector<double> s) {
    if (s.empty()) return 0;
    std::sort(s.begin(), s.end());
    return s.size() % 2 ? s[s.size() / 2] : (s[s.size() / 2 - 1] + s[s.size() / 2]) / 2;
  }
  double median() const { return median_of(ms); }
  double best_median() const { return median_of(best_ms); }
  double max() const { return ms.empty() ? 0 : *std::max_element(ms.begin(), ms.end()); }
};

[[noreturn]] void usage(const std::string& problem) {
  std::cerr << "compile_time: " << problem << "\n"
            << "usage: compile_time [--isa NAME]... [--kernels N] [--reps N] [--seed N] [--timeout S] [--min-nodes N]\n"
               "                    [--max-nodes N] [--large N,N,...|none] [--large-isa NAME] [--kernel-dir DIR] [--out DIR]\n";
  std::exit(2);
}

Settings parse(int argc, char** argv) {
  Settings s;
  auto value = [&](int& i) -> std::string {
    if (i + 1 >= argc) usage(fmt::format("{} needs a value", argv[i]));
    return argv[++i];
  };
  auto integer = [&](int& i, long long lo) {
    const std::string flag = argv[i], text = value(i);
    char* end = nullptr;
    const long long v = std::strtoll(text.c_str(), &end, 10);
    if (text.empty() || *end || v < lo) usage(fmt::format("{} needs an integer >= {}, got '{}'", flag, lo, text));
    return v;
  };
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--isa") s.isas.push_back(value(i));
    else if (a == "--kernels") s.kernels = static_cast<std::size_t>(integer(i, 0));
    else if (a == "--reps") s.reps = static_cast<int>(integer(i, 1));
    else if (a == "--seed") s.seed = static_cast<std::uint64_t>(integer(i, 0));
    else if (a == "--timeout") s.timeout = static_cast<double>(integer(i, 1));
    else if (a == "--min-nodes") s.min_nodes = static_cast<int>(integer(i, 3));
    else if (a == "--max-nodes") s.max_nodes = static_cast<int>(integer(i, 3));
    else if (a == "--large-isa") s.large_isa = value(i);
    else if (a == "--out") s.out = value(i);
    else if (a == "--kernel-dir") s.kernel_dir = value(i);
    else if (a == "--large") {
      const std::string list = value(i);
      s.large.clear();
      if (list == "none") continue;
      std::size_t p = 0;
      while (p <= list.size()) {
        const std::size_t q = std::min(list.find(',', p), list.size());
        const std::string part = list.substr(p, q - p);
        char* end = nullptr;
        const long v = std::strtol(part.c_str(), &end, 10);
        if (part.empty() || *end || v < 43) usage(fmt::format("--large needs node counts >= 43 (one transformer block), got '{}'", list));
        s.large.push_back(static_cast<int>(v));
        p = q + 1;
      }
    } else usage(fmt::format("unknown option '{}'", a));
  }
  if (s.min_nodes > s.max_nodes) usage("--min-nodes is above --max-nodes");
  s.isas_given = !s.isas.empty();
  if (s.isas.empty())
    for (auto name : act::isa::isa_names()) s.isas.emplace_back(name);
  return s;
}

template <class Isa>
Row measure(const act::hlo::Module& kernel, const Settings& s, Row row) {
  const act::isa::IsaView isa = act::isa::view<Isa>();
  act::codegen::Options options;
  options.timeout = std::chrono::duration<double>(s.timeout);
  row.nodes = act::testing::node_count(kernel);
  const act::Backend<Isa> backend;
  act::codegen::CompileOutcome first;
  const auto start = Clock::now();
  try {
    first = backend.try_compile(kernel, options);
  } catch (const act::Error& e) {
    row.outcome = "rejected";
    return row;
  }
  row.first_ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  if (!first) {
    row.outcome = first.statistics.stop == act::codegen::StopReason::Timeout ? "timed out" : "not found";
    return row;
  }
  act::sim::VerifyOptions v;
  v.seed = row.seed;
  row.outcome = act::sim::verify(kernel, isa, first.result->program, v).ok ? "verified" : "miscompiled";
  row.instructions = first.result->program.instructions.size();
  std::vector<std::pair<double, act::codegen::Statistics>> reps;
  for (int r = 0; r < s.reps; ++r) {
    const auto t0 = Clock::now();
    const act::codegen::CompileOutcome again = backend.try_compile(kernel, options);
    const double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    reps.emplace_back(ms, again.statistics);
    row.ms.push_back(ms);
    row.best_ms.push_back(again.statistics.best_seconds * 1e3);
  }
  std::sort(reps.begin(), reps.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  row.median_stats = reps[reps.size() / 2].second;
  return row;
}

Row run_kernel(const std::string& isa_name, const act::hlo::Module& kernel, const Settings& s, Row row) {
  return act::isa::with_isa(isa_name, [&](auto tag) {
    using Isa = typename decltype(tag)::type;
    return measure<Isa>(kernel, s, std::move(row));
  });
}

struct Fit {
  double a = 0, b = 0;
  std::size_t points = 0;
};

Fit fit_power_law(const std::vector<Row>& rows) {
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  Fit f;
  for (const Row& r : rows)
    if (!r.ms.empty() && r.nodes > 0 && r.median() > 0) {
      const double x = std::log(r.nodes), y = std::log(r.median());
      sx += x, sy += y, sxx += x * x, sxy += x * y;
      ++f.points;
    }
  const double n = static_cast<double>(f.points);
  if (f.points < 2 || n * sxx - sx * sx == 0) return f;
  f.b = (n * sxy - sx * sy) / (n * sxx - sx * sx);
  f.a = std::exp((sy - f.b * sx) / n);
  return f;
}

std::string json_string(const std::string& s) { return act::sim::formats_detail::json_string(s); }

void write_outputs(const std::vector<Row>& rows, const Settings& s) {
  std::filesystem::create_directories(s.out);
  const Fit fit = fit_power_law(rows);
  std::ofstream csv(s.out / "compile_time.csv");
  csv << "isa,kind,index,file,seed,nodes,outcome,instructions,first_ms,median_ms,max_ms,init_ms,rewrite_ms,extract_ms,schedule_emit_ms,csp_ms,pii_graphs,best_ms\n";
  std::ofstream json(s.out / "compile_time.json");
  json << fmt::format("{{\"reps\": {}, \"seed\": {}, \"timeout\": {}, \"min_nodes\": {}, \"max_nodes\": {},\n", s.reps, s.seed,
                      s.timeout, s.min_nodes, s.max_nodes);
  json << fmt::format(" \"fit\": {{\"a_ms\": {:.6g}, \"exponent\": {:.4f}, \"points\": {}}},\n \"kernels\": [", fit.a, fit.b, fit.points);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    const auto& st = r.median_stats;
    csv << fmt::format("{},{},{},{},{},{},{},{},{:.3f},{:.3f},{:.3f},{:.3f},{:.3f},{:.3f},{:.3f},{:.3f},{},{:.3f}\n", r.isa, r.kind, r.index, r.file,
                       r.seed, r.nodes, r.outcome, r.instructions, r.first_ms, r.median(), r.max(), st.init_seconds * 1e3,
                       st.rewrite_seconds * 1e3, st.extract_seconds * 1e3, st.schedule_emit_seconds * 1e3, st.csp_seconds * 1e3,
                       st.pii_graphs, r.best_median());
    json << fmt::format(
        "{}\n  {{\"isa\": {}, \"kind\": {}, \"index\": {}, \"file\": {}, \"seed\": {}, \"nodes\": {}, \"outcome\": {}, \"instructions\": {}, \"first_ms\": {:.3f}, "
        "\"median_ms\": {:.3f}, \"best_ms\": {:.3f}, \"max_ms\": {:.3f}, \"modules_ms\": {{\"init\": {:.3f}, \"rewrite\": {:.3f}, \"extract\": {:.3f}, "
        "\"schedule_emit\": {:.3f}, \"csp\": {:.3f}}}}}",
        i ? "," : "", json_string(r.isa), json_string(r.kind), r.index, json_string(r.file), r.seed, r.nodes, json_string(r.outcome), r.instructions, r.first_ms,
        r.median(), r.best_median(), r.max(), st.init_seconds * 1e3, st.rewrite_seconds * 1e3, st.extract_seconds * 1e3,
        st.schedule_emit_seconds * 1e3, st.csp_seconds * 1e3);
  }
  json << "]}\n";

  // Summary per ISA and kind, to stdout.
  // median / p90 / max: of the whole compile; best: the median of the kernels' best_ms.
  std::cout << fmt::format("{:<6} {:<7} {:>7} {:>9} {:>9} {:>9} {:>10} {:>10} {:>10} {:>10}\n", "isa", "kind", "kernels", "verified",
                           "not found", "timed out", "median ms", "p90 ms", "max ms", "best ms");
  std::vector<std::pair<std::string, std::string>> groups;
  for (const Row& r : rows)
    if (std::find(groups.begin(), groups.end(), std::pair(r.isa, r.kind)) == groups.end()) groups.emplace_back(r.isa, r.kind);
  for (const auto& [isa, kind] : groups) {
    std::size_t n = 0, verified = 0, not_found = 0, timed_out = 0;
    std::vector<double> medians, best_medians;
    double worst = 0;
    for (const Row& r : rows) {
      if (r.isa != isa || r.kind != kind) continue;
      ++n;
      verified += r.outcome == "verified";
      not_found += r.outcome == "not found";
      timed_out += r.outcome == "timed out";
      if (!r.ms.empty()) medians.push_back(r.median()), best_medians.push_back(r.best_median()), worst = std::max(worst, r.max());
    }
    std::sort(medians.begin(), medians.end());
    const double med = medians.empty() ? 0 : medians[medians.size() / 2];
    const double p90 = medians.empty() ? 0 : medians[std::min(medians.size() - 1, medians.size() * 9 / 10)];
    std::cout << fmt::format("{:<6} {:<7} {:>7} {:>9} {:>9} {:>9} {:>10.2f} {:>10.2f} {:>10.2f} {:>10.2f}\n", isa, kind, n, verified,
                             not_found, timed_out, med, p90, worst, Row::median_of(best_medians));
  }
  std::cout << fmt::format("fitted growth over {} compiled kernels: t = {:.4g} ms * nodes^{:.3f}\n", fit.points, fit.a, fit.b);

  if (std::system("command -v gnuplot >/dev/null 2>&1") != 0) {
    std::cout << "gnuplot not found (apt-get install gnuplot-nox): no PNG\n";
    return;
  }
  const std::filesystem::path data = s.out / "compile_time.dat", script = s.out / "compile_time.gp";
  {
    std::ofstream d(data);
    for (const auto& [isa, kind] : groups) {
      d << "# " << isa << " " << kind << "\n";
      for (const Row& r : rows)
        if (r.isa == isa && r.kind == kind && !r.ms.empty()) d << r.nodes << " " << r.median() << " " << r.max() << "\n";
      d << "\n\n";
    }
    std::ofstream g(script);
    // noenhanced: ISA names such as gemmini_hw print as written, not with subscripts.
    g << "set terminal pngcairo size 900,600 noenhanced\nset output '" << (s.out / "compile_time.png").string() << "'\n"
      << "set logscale xy\nset xlabel 'nodes'\nset ylabel 'compile time (ms), median of " << s.reps << "'\nset key left top\n"
      << fmt::format("set title 'act compile time; fit t = {:.3g} ms * nodes^{:.2f}'\n", fit.a, fit.b) << "plot ";
    for (std::size_t i = 0; i < groups.size(); ++i)
      g << "'" << data.string() << "' index " << i << " using 1:2 with points title '" << groups[i].first << " " << groups[i].second
        << "', ";
    g << fmt::format("{:.6g} * x**{:.6g} with lines title 'fit'\n", fit.a, fit.b);
  }
  if (std::system(fmt::format("gnuplot '{}'", script.string()).c_str()) != 0) std::cout << "gnuplot failed: no PNG\n";
  else std::cout << "wrote " << (s.out / "compile_time.png").string() << "\n";
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const Settings s = parse(argc, argv);
    std::vector<Row> rows;
    for (const std::string& name : s.isas) {
      const act::isa::IsaView isa = act::isa::find_view(name);
      const act::testing::KernelTraits traits = act::testing::kernel_traits(isa);
      if (traits.empty() && s.kernels > 0) {
        std::cerr << fmt::format("{}: no random kernels (no on-chip buffer of rows to draw tiles from)\n", name);
        continue;
      }
      // Element-addressed buffers only (Gemmini's spad and acc): random kernels only when asked
      // for by --isa; about a third of them time out (docs/soak.md), and the default study is
      // the one docs/compile-time/README.md reports.
      const bool unit_rows = std::any_of(isa.buffers.begin(), isa.buffers.end(), [](const auto& b) { return !b.is_hbm && b.unit_dims.size() == 1; });
      const std::size_t random_kernels = unit_rows || s.isas_given ? s.kernels : 0;
      if (random_kernels < s.kernels)
        std::cerr << fmt::format("{}: no random kernels by default (element-addressed buffers); ask with --isa {}\n", name, name);
      act::testing::RandomKernelOptions k;
      k.min_nodes = s.min_nodes;
      k.max_nodes = s.max_nodes;
      for (std::size_t i = 0; i < random_kernels; ++i) {
        Row row{name, "random", i, act::testing::derive_seed(s.seed, i)};
        const act::hlo::Module kernel = act::testing::random_kernel(traits, row.seed, k);
        rows.push_back(run_kernel(name, kernel, s, row));
        std::cerr << fmt::format("\r{} random {}/{}", name, i + 1, random_kernels) << std::flush;
      }
      std::cerr << "\n";
    }
    for (std::size_t i = 0; i < s.large.size(); ++i) {
      act::testing::TransformerKernelOptions k;
      k.target_nodes = s.large[i];
      Row row{s.large_isa, "large", i, act::testing::derive_seed(s.seed + 1'000'003, i)};
      rows.push_back(run_kernel(s.large_isa, act::testing::transformer_kernel(k, row.seed), s, row));
      std::cerr << fmt::format("{} large {} nodes: {}\n", s.large_isa, rows.back().nodes, rows.back().outcome);
    }
    if (!s.kernel_dir.empty()) {
      std::vector<std::filesystem::path> files;
      for (const auto& entry : std::filesystem::directory_iterator(s.kernel_dir))
        if (entry.path().extension() == ".hlo") files.push_back(entry.path());
      std::sort(files.begin(), files.end());
      for (const std::string& name : s.isas)
        for (std::size_t i = 0; i < files.size(); ++i) {
          Row row{name, "file", i, 0};
          row.file = files[i].filename().string();
          rows.push_back(run_kernel(name, act::testing::load_kernel(files[i].string()), s, row));
          std::cerr << fmt::format("{} {}: {}\n", name, row.file, rows.back().outcome);
        }
    }
    write_outputs(rows, s);
    const bool miscompiled = std::any_of(rows.begin(), rows.end(), [](const Row& r) { return r.outcome == "miscompiled"; });
    if (miscompiled) std::cout << "MISCOMPILED kernels: see the CSV\n";
    return miscompiled ? 1 : 0;
  } catch (const act::Error& e) {
    std::cerr << "compile_time: " << e.what() << "\n";
    return 2;
  }
}
