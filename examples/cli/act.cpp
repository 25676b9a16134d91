// The `act` command: the tool of act/cli/main.hpp over the accelerators act ships.
#include <act/cli/main.hpp>
#include <act/isa/registry.hpp>

int main(int argc, char** argv) { return act::cli::main<act::isa::BuiltinIsas>(argc, argv); }
