"""Deprecated path: this module moved to :mod:`toolcycle.models.text.constrained`.

Importing ``toolcycle.models.constrained`` still works (the same names, the same
objects) and warns with a ``DeprecationWarning``; the path goes in a later release
(toolcycle._public_api, CHANGELOG.md).
"""

from toolcycle._public_api import warn_moved
from toolcycle.models.text.constrained import *  # noqa: F403  (the moved module's public names)

warn_moved(__name__)
