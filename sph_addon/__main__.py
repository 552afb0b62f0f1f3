"""``python -m sph_addon bake|mesh|info|validate|schema`` (see sph_addon.cli)."""

import sys

from .cli import main

sys.exit(main())
