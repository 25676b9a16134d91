loop_ws(DIM_I = 16, DIM_J = 16, DIM_K = 16, A_addr = 464, B_addr = 272, C_addr = 2816)
loop_ws(DIM_I = 16, DIM_J = 16, DIM_K = 16, A_addr = 448, B_addr = 64, C_addr = 2240)
loop_ws(DIM_I = 16, DIM_J = 16, DIM_K = 16, A_addr = 400, B_addr = 512, C_addr = 1856)
loop_ws(DIM_I = 16, DIM_J = 16, DIM_K = 16, A_addr = 400, B_addr = 96, C_addr = 1792)
