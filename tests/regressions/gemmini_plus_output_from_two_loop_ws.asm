loop_ws(DIM_I = 16, DIM_J = 16, DIM_K = 16, A_addr = 224, B_addr = 416, C_addr = 896)
loop_ws(DIM_I = 16, DIM_J = 16, DIM_K = 16, A_addr = 192, B_addr = 592, C_addr = 1920)
