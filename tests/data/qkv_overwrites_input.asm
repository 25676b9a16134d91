# The paper's QKV program, then one more store: the first output row over V's first row.
# The output is right, but the program destroys an input.
load_rm(n = 64, addr_in = 0, addr_out = 0)
load_cm(n = 64, addr_in = 8192, addr_out = 64)
gemm(addr_1 = 0, addr_2 = 64, addr_out = 0)
softmax(n = 64, addr = 0)
mov(n = 64, addr_in = 0, addr_out = 0)
load_rm(n = 64, addr_in = 16384, addr_out = 64)
gemm(addr_1 = 0, addr_2 = 64, addr_out = 0)
mov(n = 64, addr_in = 0, addr_out = 0)
store_rm(n = 64, addr_in = 0, addr_out = 24576)
store_rm(n = 1, addr_in = 0, addr_out = 16384)
