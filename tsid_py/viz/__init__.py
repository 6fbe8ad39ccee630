"""See a run: live meshcat viewer, rerun (live or an ``.rrd`` file), self-contained HTML replay,
matplotlib plots.

Importing this package imports neither meshcat, rerun nor matplotlib (they load when a viewer, a
replay or a plot is made): headless runs never start anything graphical. ``scene`` computes what
to draw (pure NumPy/Pinocchio); ``meshcat_viewer``, ``rerun_viewer``, ``html_replay`` and
``plots`` draw it.
"""

from tsid_py.viz.html_replay import write_html_replay
from tsid_py.viz.meshcat_viewer import LiveViewer
from tsid_py.viz.plots import write_plots
from tsid_py.viz.rerun_viewer import RerunViewer
from tsid_py.viz.scene import SceneBuilder, SceneFrame

__all__ = ["LiveViewer", "RerunViewer", "SceneBuilder", "SceneFrame", "write_html_replay", "write_plots"]
