"""Errors that pipelines raise as data about the input, not as crashes."""

from __future__ import annotations


class BadInput(ValueError):
    """The content itself is unusable (empty, too large, binary, undecodable ...).

    Retrying cannot help, so tasks fail the stage at once with this message.
    """
