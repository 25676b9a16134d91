# An empty program: no instruction, no constant.
