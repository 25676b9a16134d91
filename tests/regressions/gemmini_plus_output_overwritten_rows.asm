loop_ws(DIM_I = 16, DIM_J = 16, DIM_K = 16, A_addr = 256, B_addr = 176, C_addr = 1536)
loop_ws(DIM_I = 16, DIM_J = 16, DIM_K = 16, A_addr = 208, B_addr = 240, C_addr = 832)
loop_ws(DIM_I = 16, DIM_J = 16, DIM_K = 16, A_addr = 176, B_addr = 32, C_addr = 512)
