# QKV attention as the ACT tutorial's compiled backend prints it (isa_facts.md §4): the same
# nine instructions as the paper's program, with Q in d1[64] and K^T in d1[0].
# HBM: q at 0, k at 8192, v at 16384 (bf16[64,64] each); output at 24576.
load_rm(n = 64, addr_in = 0, addr_out = 64)
load_cm(n = 64, addr_in = 8192, addr_out = 0)
gemm(addr_1 = 64, addr_2 = 0, addr_out = 0)
softmax(n = 64, addr = 0)
mov(n = 64, addr_in = 0, addr_out = 64)
load_rm(n = 64, addr_in = 16384, addr_out = 0)
gemm(addr_1 = 64, addr_2 = 0, addr_out = 0)
mov(n = 64, addr_in = 0, addr_out = 0)
store_rm(n = 64, addr_in = 0, addr_out = 24576)
