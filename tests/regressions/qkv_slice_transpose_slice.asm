# The program that exists for qkv_slice_transpose_slice.hlo (found by `act soak --mode complete`):
# load rows 38..101 of in0 transposed into d1, store rows 17..48 of that.
load_cm(n = 64, addr_in = 4864, addr_out = 0)
store_rm(n = 32, addr_in = 17, addr_out = 16384)
