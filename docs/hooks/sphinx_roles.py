"""A griffe extension for the API reference: Sphinx roles in docstrings read as code.

The package's docstrings are Google style, with Sphinx roles for names (":class:`~tsid_py.loop.ControlLoop`",
":meth:`compute`"); Markdown would show the role literally. This turns each into a code span:
the last component with "~" (as Sphinx shows it), the full name otherwise.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

ROLE = re.compile(r":(?:class|func|meth|attr|mod|data|exc|obj|const):`(~?)([^`]+)`")


def plain(text: str) -> str:
    """``text`` with every Sphinx role replaced by a code span."""
    return ROLE.sub(lambda m: f"`{m.group(2).rsplit('.', 1)[-1] if m.group(1) else m.group(2)}`", text)


class SphinxRoles(griffe.Extension):
    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = plain(obj.docstring.value)
