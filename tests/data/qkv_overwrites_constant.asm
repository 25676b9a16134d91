# The paper's QKV program with a constant block, then a store over that block (the constant
# pool must stay as the program declared it).
load_rm(n = 64, addr_in = 0, addr_out = 0)
load_cm(n = 64, addr_in = 8192, addr_out = 64)
gemm(addr_1 = 0, addr_2 = 64, addr_out = 0)
softmax(n = 64, addr = 0)
mov(n = 64, addr_in = 0, addr_out = 0)
load_rm(n = 64, addr_in = 16384, addr_out = 64)
gemm(addr_1 = 0, addr_2 = 64, addr_out = 0)
mov(n = 64, addr_in = 0, addr_out = 0)
store_rm(n = 64, addr_in = 0, addr_out = 24576)
store_rm(n = 1, addr_in = 0, addr_out = 32768)
.constant addr = 32768, bytes = 0102030405060708
