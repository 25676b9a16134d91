# An instruction QKV does not have, on line 3.
load_rm(n = 64, addr_in = 0, addr_out = 0)
  transpose(n = 64, addr = 0)
