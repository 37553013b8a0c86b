"""Demonstrations: record expert episodes, store them as HDF5 (LIBERO/robomimic layout), check them."""
