"""``python -m dpjax``: the ``dpjax`` command (:mod:`dpjax.cli`)."""

import sys

from dpjax.cli import main

if __name__ == "__main__":
    sys.exit(main())
