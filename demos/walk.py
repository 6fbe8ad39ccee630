"""Walking demo: Talos (or --robot romeo) walks straight ahead on a LIPM plan made by tsid_py.

The scenario lives in tsid_py/scenarios/walk.py (so that `tsid-py walk` runs the same code from an
installed package); the planning (footsteps, ZMP preview control, swing-foot trajectories) is in
tsid_py/planning/. With --plot FILE the demo also draws, seen from above, the CoM, the planned ZMP,
the ZMP of the contact forces and the footprints (needs matplotlib).

    python demos/walk.py                              # Talos, 8 steps of 0.2 m
    python demos/walk.py --robot romeo --steps 8 --step-length 0.1 --json
    python demos/walk.py --plot walk.png
"""

import argparse
import sys

import numpy as np
import pinocchio as pin

from tsid_py.planning.support import sole_polygon
from tsid_py.robot_specs import load_spec
from tsid_py.scenarios import walk
from tsid_py.scenarios.cli_support import report
from tsid_py.scenarios.runner import RunResult


def plot_from_above(result: RunResult, robot: str, path: str) -> None:
    """CoM, planned and measured ZMP, and every footprint (where a foot touched down) on the ground."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Polygon

    arrays = result.log.arrays()
    sole = load_spec(robot).sole
    fig, ax = plt.subplots(figsize=(11, 3.6))
    for side, color in (("right", "tab:red"), ("left", "tab:blue")):
        feet, touching = arrays[f"feet/{side}"], arrays[f"in_contact/{side}"].astype(int)
        for k in np.flatnonzero(np.diff(np.r_[0, touching]) == 1):
            corners = sole_polygon(sole, pin.SE3(np.eye(3), feet[k]))
            ax.add_patch(Polygon(corners[[0, 2, 3, 1]], closed=True, fill=False, color=color, lw=1))
    ax.plot(*arrays["com"][:, :2].T, "k", lw=1.5, label="CoM")
    ax.plot(*arrays["zmp_ref"].T, "g--", lw=1, label="ZMP, planned (LIPM)")
    ax.plot(*arrays["zmp"].T, "m", lw=0.7, alpha=0.8, label="ZMP of the contact forces")
    ax.set_aspect("equal")
    ax.set_xlabel("x [m]")
    ax.set_ylabel("y [m]")
    ax.set_title(
        f"{robot} walking {result.summary['footsteps']} steps, seen from above (right foot red, left blue)"
    )
    ax.legend(loc="upper left", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    walk.add_arguments(parser)
    parser.add_argument("--plot", metavar="FILE", help="save a top view of the walk to FILE (png, svg, ...)")
    args = parser.parse_args()
    result = walk.run_from_args(args)
    print(report(result, args.json))
    if args.plot:
        plot_from_above(result, args.robot, args.plot)
    return 1 if result.summary["qp_failures"] else 0


if __name__ == "__main__":
    sys.exit(main())
