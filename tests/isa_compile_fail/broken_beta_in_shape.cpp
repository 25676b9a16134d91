// Must NOT compile: mov's semantics use the beta attribute addr_in in a shape.
#include "act/isa/validate.hpp"

namespace {
using namespace act::isa;

struct Tiny {
  static constexpr std::string_view name = "tiny";
  static constexpr std::array buffers{
      hbm("d0", 4096),
      Buffer{.name = "d1", .access_dims = {16}, .unit_dims = {8}, .dtype = act::DType::s32},
  };
  static constexpr std::array instructions{
      Instruction{.name = "load_rm", .alpha = {"n"}, .beta = {"addr_in", "addr_out"},
                  .inputs = {{"d0", {"addr_in"}, {"n * 32"}}},
                  .outputs = {{"d1", {"addr_out"}, {"n"}}},
                  .constraints = {"n >= 1", "n <= 16"},
                  .semantics = R"(ENTRY load_rm {
  %In1 = u8[`n * 32`] parameter(0)
  %a = u8[`n`, 8, 4] reshape(%In1)
  ROOT %Out0 = s32[`n`, 8] bitcast-convert(%a)
})"},
      Instruction{.name = "mov", .alpha = {"n"}, .beta = {"addr_in", "addr_out"},
                  .inputs = {{"d1", {"addr_in"}, {"n"}}},
                  .outputs = {{"d1", {"addr_out"}, {"n"}}},
                  .semantics = R"(ENTRY mov {
  %In1 = s32[`n`, 8] parameter(0)
  ROOT %Out0 = s32[`addr_in`, 8] copy(%In1)
})"},
  };
};
}  // namespace

ACT_VALIDATE_ISA(Tiny);
