"""See a run: live meshcat viewer, self-contained HTML replay, matplotlib plots.

Nothing here imports meshcat or matplotlib at import time: headless runs never start anything
graphical. ``scene`` computes what to draw (pure NumPy/Pinocchio); ``meshcat_viewer``,
``html_replay`` and ``plots`` draw it.
"""
