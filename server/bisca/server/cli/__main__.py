"""``python -m bisca.server.cli``: the ``bisca`` command."""

import sys

from ._main import main

sys.exit(main())
