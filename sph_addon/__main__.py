"""``python -m sph_addon bake|mesh|info|validate|schema`` (see sph_addon.cli)."""

import logging
import os
import sys

from .cli import main
from .core.errors import EXIT_INTERRUPTED

code = main()
if code == EXIT_INTERRUPTED:
    # The bake has stopped cleanly and closed its files, but a KeyboardInterrupt that a second signal
    # raised inside numba's compiler can be reported as unhandled there, and CPython then ends the
    # process with SIGINT at shutdown (status -2, not 130). Leave without the interpreter's shutdown.
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
sys.exit(code)
