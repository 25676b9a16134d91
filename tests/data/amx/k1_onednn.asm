# act assembly for ISA amx
# K1 (cnn_inf_amx): oneDNN's code as the paper prints it (App. G), tmmN written N.
# HBM image: A u8[32,64] at 0x0000, B i8[32,64]{T(16,4)} at 0x0800, out s32[32,32]{T(16,16)} at 0x1000.
tilezero(dst = 0)
tilezero(dst = 1)
tilezero(dst = 2)
tilezero(dst = 3)
tileloadd(dst = 4, mem_addr = 0x0000, stride = 64)
tileloadd(dst = 5, mem_addr = 0x0400, stride = 64)
tileloadd(dst = 6, mem_addr = 0x0800, stride = 64)
tileloadd(dst = 7, mem_addr = 0x0c00, stride = 64)
tdpbusd(dst = 0, src0 = 4, src1 = 6)
tdpbusd(dst = 1, src0 = 4, src1 = 7)
tdpbusd(dst = 2, src0 = 5, src1 = 6)
tdpbusd(dst = 3, src0 = 5, src1 = 7)
tilestored(src = 0, mem_addr = 0x1000, stride = 64)
tilestored(src = 1, mem_addr = 0x1400, stride = 64)
tilestored(src = 2, mem_addr = 0x1800, stride = 64)
tilestored(src = 3, mem_addr = 0x1c00, stride = 64)
