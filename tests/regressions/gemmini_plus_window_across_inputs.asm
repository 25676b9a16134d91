loop_ws(DIM_I = 16, DIM_J = 16, DIM_K = 16, A_addr = 336, B_addr = 128, C_addr = 768)
