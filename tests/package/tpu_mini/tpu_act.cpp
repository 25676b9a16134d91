// The `act` tool for tpu_mini: every subcommand of act's own (compile, verify, rules, isas, ...).
#include <act/cli/main.hpp>

#include "tpu_mini.hpp"

int main(int argc, char** argv) { return act::cli::main<tpu::TpuMini>(argc, argv); }
