"""Deprecated path: this module moved to :mod:`toolcycle.models.local.packs`.

Importing ``toolcycle.models.packs`` still works (the same names, the same
objects) and warns with a ``DeprecationWarning``; the path goes in a later release
(toolcycle._public_api, CHANGELOG.md).
"""

from toolcycle._public_api import run_moved_module, warn_moved

if __name__ == "__main__":  # `python -m toolcycle.models.packs ...`, as docs once taught
    run_moved_module("toolcycle.models.packs")
else:
    from toolcycle.models.local.packs import *  # noqa: F403  (the moved module's public names)

    warn_moved(__name__)
