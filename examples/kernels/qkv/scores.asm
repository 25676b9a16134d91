# S = Q x K^T on QKV, written by hand.
# HBM: q at 0, k at 8192 (bf16[64,64] each); output scores at 16384.
load_rm(n = 64, addr_in = 0, addr_out = 0)      # Q -> d1[0:64]
load_cm(n = 64, addr_in = 8192, addr_out = 64)  # K^T -> d1[64:128]
gemm(addr_1 = 0, addr_2 = 64, addr_out = 0)     # d2 = Q x K^T
mov(n = 64, addr_in = 0, addr_out = 0)          # d2 -> d1[0:64]
store_rm(n = 64, addr_in = 0, addr_out = 16384)
