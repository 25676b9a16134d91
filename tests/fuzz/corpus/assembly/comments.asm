softmax(n = 1, addr = 0)   # one row

# blank lines and comments
store_cm(n = 64, addr_in = 0, addr_out = -0x0)
