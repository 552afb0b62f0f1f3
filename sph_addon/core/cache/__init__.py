"""The cache and files: the cache directory, its checks and lock, atomic writes, PLY/OBJ/JSON I/O, previews."""
