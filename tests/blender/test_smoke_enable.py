import os
import sys

import pytest

pytestmark = pytest.mark.smoke


def test_enables_and_imports_numba_from_a_private_copy_of_the_wheels(ext):
    runtime = ext.sub("runtime")
    version = runtime.prepare_numba()
    assert version == "0.68.1"
    # Not the shared extensions site-packages, which Blender rewrites under a running bake
    # whenever an extension is enabled or disabled (test_private_numba.py).
    assert sys.modules["numba"].__file__.startswith(runtime.user_dir("runtime") + os.sep)
