# act assembly for ISA amx
# K2 (rnn_inf_amx): oneDNN's code as the paper prints it (App. G), tmmN written N.
# HBM image: A u8[16,64] at 0x0000, B i8[32,64]{T(16,4)} at 0x0400, out s32[16,32]{T(16,16)} at 0x0c00.
tilezero(dst = 0)
tilezero(dst = 1)
tileloadd(dst = 2, mem_addr = 0x0000, stride = 64)
tileloadd(dst = 3, mem_addr = 0x0400, stride = 64)
tileloadd(dst = 4, mem_addr = 0x0800, stride = 64)
tdpbusd(dst = 0, src0 = 2, src1 = 3)
tdpbusd(dst = 1, src0 = 2, src1 = 4)
tilestored(src = 0, mem_addr = 0x0c00, stride = 64)
tilestored(src = 1, mem_addr = 0x1000, stride = 64)
