# The four AMX-INT8 instructions (tests/unit/native_amx.cpp compares the simulator with the emitted C,
# natively with AMX, else with the tiles emulated in software). Reads HBM [0, 4096) and the
# windows of the strided stores; writes [4096, 10240).
tilezero(dst = 0)
tileloadd(stride = 64, dst = 1, mem_addr = 0)
tileloadd(stride = 128, dst = 2, mem_addr = 1024)
tdpbusd(dst = 0, src0 = 1, src1 = 2)
tileloadd(stride = 64, dst = 3, mem_addr = 3072)
tdpbusd(dst = 3, src0 = 2, src1 = 1)
# tile 4 is read before any write: zeroed first, as in the simulator
tdpbusd(dst = 4, src0 = 1, src1 = 2)
tilestored(stride = 64, src = 0, mem_addr = 4096)
tilestored(stride = 192, src = 3, mem_addr = 5120)
tilestored(stride = 64, src = 4, mem_addr = 8192)
tilestored(stride = 64, src = 2, mem_addr = 9216)
