"""Where particles come from and go: volumes filled at the start, inflows, bound meshes, outflows."""
