"""``python -m fortekit``: the ``fortekit`` command.

Example:
    $ python -m fortekit --version
"""

import sys

from fortekit.search.cli import main

if __name__ == "__main__":
    sys.exit(main())
