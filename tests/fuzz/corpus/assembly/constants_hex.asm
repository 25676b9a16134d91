.constant addr = 32768, bytes = 803f0000
.constant addr = 0x8004, bytes = 00ff # trailing
gemm(addr_out = 0x10, addr_1 = 0, addr_2 = 64)
