// H_QKV, the paper's running example (Fig. 4-5; TAIDL v2 tutorial QKV.py), construct for construct.
//
//   d0  HBM, u8[1 MiB], byte-addressed
//   d1  scratchpad, 128 rows of bf16[64] (16 KiB)
//   d2  intermediate buffer, 64 rows of bf16[64] (8 KiB)
//
// Attribute names and order are TAIDL's, so assembly reads `load_rm(n = 64, addr_in = 0, ...)`.
// Constraints: n >= 1 everywhere; n <= 128 for d1 row counts, n <= 64 where d2 is involved.
// Buffer bounds (addr_out + n <= 128, ...) are not written here: every slice must lie inside its
// buffer, which the allocator and the simulator enforce for all ISAs.
// cost: rows moved or processed (one row of 64 bf16 = 128 bytes per step); gemm is a fixed
// 64-row pass. The default cost model sums these.
#pragma once

#include <array>
#include <string_view>

#include "act/isa/description.hpp"
#include "act/isa/validate.hpp"

namespace act::isa {

struct Qkv {
  static constexpr std::string_view name = "qkv";

  static constexpr std::array buffers{
      hbm("d0", 1 << 20),
      Buffer{.name = "d1", .access_dims = {128}, .unit_dims = {64}, .dtype = DType::bf16},
      Buffer{.name = "d2", .access_dims = {64}, .unit_dims = {64}, .dtype = DType::bf16},
  };

  static constexpr std::array instructions{
      // n rows (n * 128 bytes) from HBM at addr_in to d1 rows addr_out..addr_out+n.
      Instruction{.name = "load_rm", .alpha = {"n"}, .beta = {"addr_in", "addr_out"},
                  .inputs = {{"d0", {"addr_in"}, {"n * 128"}}},
                  .outputs = {{"d1", {"addr_out"}, {"n"}}},
                  .constraints = {"n >= 1", "n <= 128"},
                  .semantics = R"(ENTRY load_rm {
  %In1 = u8[`n * 128`] parameter(0)
  %a = u8[`n`, 64, 2] reshape(%In1)
  ROOT %Out0 = bf16[`n`, 64] bitcast-convert(%a)
})",
                  .cost = "n"},

      // Transposing load. TAIDL writes n rows of d1 but its semantic output is bf16[64, n]: the two
      // agree only for n = 64 (a d1 row is always 64 wide), so n = 64 is the validity constraint.
      // Keeping n as alpha keeps TAIDL's assembly signature load_cm(n, addr_in, addr_out).
      Instruction{.name = "load_cm", .alpha = {"n"}, .beta = {"addr_in", "addr_out"},
                  .inputs = {{"d0", {"addr_in"}, {"n * 128"}}},
                  .outputs = {{"d1", {"addr_out"}, {"n"}}},
                  .constraints = {"n == 64"},
                  .semantics = R"(ENTRY load_cm {
  %In1 = u8[`n * 128`] parameter(0)
  %a = u8[`n`, 64, 2] reshape(%In1)
  %b = bf16[`n`, 64] bitcast-convert(%a)
  ROOT %Out0 = bf16[64, `n`] transpose(%b), dimensions={1,0}
})",
                  .cost = "n"},

      // n rows of d1 from addr_in to HBM at addr_out.
      Instruction{.name = "store_rm", .alpha = {"n"}, .beta = {"addr_in", "addr_out"},
                  .inputs = {{"d1", {"addr_in"}, {"n"}}},
                  .outputs = {{"d0", {"addr_out"}, {"n * 128"}}},
                  .constraints = {"n >= 1", "n <= 128"},
                  .semantics = R"(ENTRY store_rm {
  %In1 = bf16[`n`, 64] parameter(0)
  %a = u8[`n`, 64, 2] bitcast-convert(%In1)
  ROOT %Out0 = u8[`n * 128`] reshape(%a)
})",
                  .cost = "n"},

      // Transposing store; n = 64 for the same reason as load_cm.
      Instruction{.name = "store_cm", .alpha = {"n"}, .beta = {"addr_in", "addr_out"},
                  .inputs = {{"d1", {"addr_in"}, {"n"}}},
                  .outputs = {{"d0", {"addr_out"}, {"n * 128"}}},
                  .constraints = {"n == 64"},
                  .semantics = R"(ENTRY store_cm {
  %In1 = bf16[`n`, 64] parameter(0)
  %a = bf16[64, `n`] transpose(%In1), dimensions={1,0}
  %b = u8[64, `n`, 2] bitcast-convert(%a)
  ROOT %Out0 = u8[`n * 128`] reshape(%b)
})",
                  .cost = "n"},

      // n rows from d2 to d1.
      Instruction{.name = "mov", .alpha = {"n"}, .beta = {"addr_in", "addr_out"},
                  .inputs = {{"d2", {"addr_in"}, {"n"}}},
                  .outputs = {{"d1", {"addr_out"}, {"n"}}},
                  .constraints = {"n >= 1", "n <= 64"},
                  .semantics = R"(ENTRY mov {
  %In1 = bf16[`n`, 64] parameter(0)
  ROOT %Out0 = bf16[`n`, 64] copy(%In1)
})",
                  .cost = "n"},

      // d2[addr_out:+64] = d1[addr_1:+64] x d1[addr_2:+64], a fixed 64x64x64 matrix product.
      Instruction{.name = "gemm", .alpha = {}, .beta = {"addr_1", "addr_2", "addr_out"},
                  .inputs = {{"d1", {"addr_1"}, {"64"}}, {"d1", {"addr_2"}, {"64"}}},
                  .outputs = {{"d2", {"addr_out"}, {"64"}}},
                  .semantics = R"(ENTRY gemm {
  %In1 = bf16[64, 64] parameter(0)
  %In2 = bf16[64, 64] parameter(1)
  ROOT %Out0 = bf16[64, 64] dot(%In1, %In2), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})",
                  .cost = "64"},

      // Row-wise softmax of n rows of d2, in place (no max subtraction, as in TAIDL).
      Instruction{.name = "softmax", .alpha = {"n"}, .beta = {"addr"},
                  .inputs = {{"d2", {"addr"}, {"n"}}},
                  .outputs = {{"d2", {"addr"}, {"n"}}},
                  .constraints = {"n >= 1", "n <= 64"},
                  .semantics = R"(ENTRY softmax {
  %In1 = bf16[`n`, 64] parameter(0)
  %a = bf16[`n`, 64] exponential(%In1)
  %r = bf16[`n`] reduce_add(%a), dimensions={1}
  %b = bf16[`n`, 64] broadcast(%r), dimensions={0}
  ROOT %Out0 = bf16[`n`, 64] divide(%a, %b)
})",
                  .cost = "n"},
  };
};

}  // namespace act::isa

ACT_VALIDATE_ISA(act::isa::Qkv);
