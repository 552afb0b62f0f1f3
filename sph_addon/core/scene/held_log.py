"""Log records held while a scene is checked: said only if no refusal follows.

A check logs what it notices on the way (a preset's ignored parameters, a mesh it read); when a later
check refuses the scene, those lines would stand before the error as if they still mattered, or
contradict it. The records of the checking thread are held and given back to the logging machinery
when the checks pass, in their order, and dropped when they refuse the scene.
"""

from __future__ import annotations

import logging
import threading
from contextlib import contextmanager

PACKAGE = "sph_addon"


class _Held(logging.Handler):
    def __init__(self, thread: int):
        super().__init__(logging.NOTSET)
        self.thread = thread
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.thread == self.thread:
            self.records.append(record)
        else:  # another thread's (a bake running beside a check): its own news, passed on
            logging.getLogger().handle(record)


@contextmanager
def held_records(refusals: type[BaseException]):
    """Hold the package's log records of this thread; give them back on leaving, unless ``refusals``
    (an exception type) ends the block."""
    logger = logging.getLogger(PACKAGE)
    held = _Held(threading.get_ident())
    propagate = logger.propagate
    logger.addHandler(held)
    logger.propagate = False
    refused = False
    try:
        yield
    except refusals:
        refused = True
        raise
    finally:
        logger.removeHandler(held)
        logger.propagate = propagate
        if not refused:
            for record in held.records:
                logging.getLogger(record.name).handle(record)
