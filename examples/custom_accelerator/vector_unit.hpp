// A toy accelerator defined outside act, in one header: a vector unit with eight 16-lane f32
// registers next to HBM. It is what a compiler engineer writes for a new accelerator.
#pragma once

#include <act/act.hpp>

namespace toy {

struct VectorUnit {
  static constexpr std::string_view name = "vector_unit";

  static constexpr std::array buffers{
      act::isa::hbm("d0", 1 << 16),
      act::isa::Buffer{.name = "vreg", .access_dims = {8}, .unit_dims = {16}, .dtype = act::DType::f32},
  };

  static constexpr std::array instructions{
      act::isa::Instruction{
          .name = "vload",  // n rows of 16 f32 from HBM into registers dst..dst+n-1
          .alpha = {"n"},
          .beta = {"addr", "dst"},
          .inputs = {{"d0", {"addr"}, {"n * 64"}}},
          .outputs = {{"vreg", {"dst"}, {"n"}}},
          .constraints = {"n >= 1", "n <= 8"},
          .semantics = R"(ENTRY vload {
            %In1 = u8[`n * 64`] parameter(0)
            %rows = u8[`n`, 16, 4] reshape(%In1)
            ROOT %Out0 = f32[`n`, 16] bitcast-convert(%rows)
          })",
          .cost = "n",
      },
      act::isa::Instruction{
          .name = "vstore",
          .alpha = {"n"},
          .beta = {"src", "addr"},
          .inputs = {{"vreg", {"src"}, {"n"}}},
          .outputs = {{"d0", {"addr"}, {"n * 64"}}},
          .constraints = {"n >= 1", "n <= 8"},
          .semantics = R"(ENTRY vstore {
            %In1 = f32[`n`, 16] parameter(0)
            %bytes = u8[`n`, 16, 4] bitcast-convert(%In1)
            ROOT %Out0 = u8[`n * 64`] reshape(%bytes)
          })",
          .cost = "n",
      },
      act::isa::Instruction{
          .name = "vadd",
          .alpha = {"n"},
          .beta = {"a", "b", "dst"},
          .inputs = {{"vreg", {"a"}, {"n"}}, {"vreg", {"b"}, {"n"}}},
          .outputs = {{"vreg", {"dst"}, {"n"}}},
          .constraints = {"n >= 1", "n <= 8"},
          .semantics = R"(ENTRY vadd {
            %In1 = f32[`n`, 16] parameter(0)
            %In2 = f32[`n`, 16] parameter(1)
            ROOT %Out0 = f32[`n`, 16] add(%In1, %In2)
          })",
      },
      act::isa::Instruction{
          .name = "vmax",
          .alpha = {"n"},
          .beta = {"a", "b", "dst"},
          .inputs = {{"vreg", {"a"}, {"n"}}, {"vreg", {"b"}, {"n"}}},
          .outputs = {{"vreg", {"dst"}, {"n"}}},
          .constraints = {"n >= 1", "n <= 8"},
          .semantics = R"(ENTRY vmax {
            %In1 = f32[`n`, 16] parameter(0)
            %In2 = f32[`n`, 16] parameter(1)
            ROOT %Out0 = f32[`n`, 16] maximum(%In1, %In2)
          })",
      },
      act::isa::Instruction{
          .name = "vzero",
          .alpha = {"n"},
          .beta = {"dst"},
          .outputs = {{"vreg", {"dst"}, {"n"}}},
          .constraints = {"n >= 1", "n <= 8"},
          .semantics = R"(ENTRY vzero {
            %zero = f32[] constant(0)
            ROOT %Out0 = f32[`n`, 16] broadcast(%zero), dimensions={}
          })",
      },
  };
};

ACT_VALIDATE_ISA(toy::VectorUnit);

}  // namespace toy
