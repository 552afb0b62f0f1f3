import sys


def test_enables_and_imports_numba_from_wheels(ext):
    runtime = ext.sub("runtime")
    version = runtime.prepare_numba()
    assert version == "0.68.1"
    assert ".local" in sys.modules["numba"].__file__
