# relu(x + y): x at HBM 0, y at 128, output at 256
vload(n = 2, addr = 0, dst = 0)
vload(n = 2, addr = 128, dst = 2)
vadd(n = 2, a = 0, b = 2, dst = 4)
vzero(n = 2, dst = 6)
vmax(n = 2, a = 4, b = 6, dst = 4)
vstore(n = 2, src = 4, addr = 256)
