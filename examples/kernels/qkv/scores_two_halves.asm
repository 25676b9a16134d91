# S = Q x K^T on QKV, storing the result in two 32-row halves, second half first.
load_rm(n = 64, addr_in = 0, addr_out = 0)
load_cm(n = 64, addr_in = 8192, addr_out = 64)
gemm(addr_1 = 0, addr_2 = 64, addr_out = 0)
mov(n = 64, addr_in = 0, addr_out = 0)
store_rm(n = 32, addr_in = 32, addr_out = 20480)
store_rm(n = 32, addr_in = 0, addr_out = 16384)
