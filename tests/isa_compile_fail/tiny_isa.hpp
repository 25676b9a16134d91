// A small ISA shared by the compile-fail cases. Each case defines one of the macros below to
// break exactly one thing, then includes this header; valid.cpp defines none. With
// TINY_NO_VALIDATE_MACRO the header leaves out ACT_VALIDATE_ISA, as a user may: then the first
// use of the ISA type must reject it.
#pragma once

#include "act/isa/validate.hpp"

#ifndef TINY_LOAD_LENGTH
#define TINY_LOAD_LENGTH "n * 32"  // bytes load_rm reads
#endif
#ifndef TINY_LOAD_RESHAPE
#define TINY_LOAD_RESHAPE "u8[`n`, 8, 4]"  // must hold n * 32 bytes
#endif
#ifndef TINY_MOV_RESULT
#define TINY_MOV_RESULT "s32[`n`, 8] copy(%In1)"
#endif
#ifndef TINY_STORE_BUFFER
#define TINY_STORE_BUFFER "d0"
#endif
#ifndef TINY_MOV_PARAMETER
#define TINY_MOV_PARAMETER "s32[`n`, 8]"  // must be the input slice's shape: n rows of s32[8]
#endif
#ifndef TINY_MOV_CONSTRAINT
#define TINY_MOV_CONSTRAINT "n <= 16"
#endif
#ifndef TINY_LOAD_C
#define TINY_LOAD_C "memcpy(&d1[$addr_out], $&addr_in, $n * 32);"  // C of load_rm (isa/c_mapping.hpp)
#endif

namespace {
using namespace act::isa;

// A C mapping, so that ACT_VALIDATE_ISA checks one too (validated here, never emitted).
constexpr std::array kTinyCInstructions{
    CInstruction{"load_rm", TINY_LOAD_C, {"c"}},
    CInstruction{"mov", "memcpy(&d1[$addr_out], &d1[$addr_in], $n * 32);", {"c"}},
    CInstruction{"store_rm", "memcpy($&addr_out, &d1[$addr_in], $n * 32);", {"c"}},
};
constexpr CMapping kTinyC{.features = {CFeature{.name = "c", .usable = "1"}},
                          .registers = {CRegisterFile{.buffer = "d1", .declare = "int32_t d1_$unit[8];"}},
                          .instructions = kTinyCInstructions};

struct Tiny {
  static constexpr std::string_view name = "tiny";
  static constexpr const CMapping* c_mapping = &kTinyC;
  static constexpr std::array buffers{
      hbm("d0", 4096),
      Buffer{.name = "d1", .access_dims = {16}, .unit_dims = {8}, .dtype = act::DType::s32},
  };
  static constexpr std::array instructions{
      Instruction{.name = "load_rm", .alpha = {"n"}, .beta = {"addr_in", "addr_out"},
                  .inputs = {{"d0", {"addr_in"}, {TINY_LOAD_LENGTH}}},
                  .outputs = {{"d1", {"addr_out"}, {"n"}}},
                  .constraints = {"n >= 1", "n <= 16"},
                  .semantics = "ENTRY load_rm {\n"
                               "  %In1 = u8[`n * 32`] parameter(0)\n"
                               "  %a = " TINY_LOAD_RESHAPE " reshape(%In1)\n"
                               "  ROOT %Out0 = s32[`n`, 8] bitcast-convert(%a)\n"
                               "}"},
      Instruction{.name = "mov", .alpha = {"n"}, .beta = {"addr_in", "addr_out"},
                  .inputs = {{"d1", {"addr_in"}, {"n"}}},
                  .outputs = {{"d1", {"addr_out"}, {"n"}}},
                  .constraints = {"n >= 1", TINY_MOV_CONSTRAINT},
                  .semantics = "ENTRY mov {\n"
                               "  %In1 = " TINY_MOV_PARAMETER " parameter(0)\n"
                               "  ROOT %Out0 = " TINY_MOV_RESULT "\n"
                               "}"},
      Instruction{.name = "store_rm", .alpha = {"n"}, .beta = {"addr_in", "addr_out"},
                  .inputs = {{"d1", {"addr_in"}, {"n"}}},
                  .outputs = {{TINY_STORE_BUFFER, {"addr_out"}, {"n * 32"}}},
                  .semantics = R"(ENTRY store_rm {
  %In1 = s32[`n`, 8] parameter(0)
  %a = u8[`n`, 8, 4] bitcast-convert(%In1)
  ROOT %Out0 = u8[`n * 32`] reshape(%a)
})"},
  };
};
}  // namespace

#ifndef TINY_NO_VALIDATE_MACRO
ACT_VALIDATE_ISA(Tiny);
#endif
