"""Inverse dynamics from observed motion: record Talos swaying, then recover its torques and foot wrenches.

1. Run the CoM-sinusoid controller and keep only the configurations q (what a motion-capture
   system would give) in an NPZ file.
2. Analyze it with `tsid-py analyze` (tsid_py/analysis/cli.py; the same code runs here).
3. Compare the recovered joint torques and total ground reaction with what the controller applied.

    python demos/inverse_dynamics_from_motion.py --duration 4 --out-dir analysis_out
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

from tsid_py.analysis import cli as analyze
from tsid_py.scenarios import com_sinusoid


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=float, default=4.0, help="recorded time [s] (default: 4)")
    parser.add_argument("--out-dir", type=Path, default=Path("analysis_out"), help="where files go")
    args = parser.parse_args(argv)
    args.out_dir.mkdir(parents=True, exist_ok=True)

    log = com_sinusoid.run("talos", args.duration, progress=True).log.arrays()
    motion, result_file = args.out_dir / "motion.npz", args.out_dir / "result.npz"
    np.savez(motion, q=log["q"], dt=0.002)

    status = analyze.main(
        [str(motion), "--robot", "talos", "--json", "--out", str(result_file), "--plot", str(args.out_dir)]
    )
    if status:
        return status
    with np.load(result_file) as result:
        torque_error = np.abs(result["joint_torques"] - log["tau"])
        vertical_force = result["total_contact_wrench"][:, 2]
    applied_vertical = sum(forces.reshape(-1, 4, 3)[:, :, 2].sum(axis=1) for forces in _foot_forces(log))
    comparison = {
        "joint_torque_difference_max_nm": float(torque_error.max()),
        "vertical_force_difference_max_n": float(np.abs(vertical_force - applied_vertical).max()),
        "note": "torques differ where the feet share the load differently; the total wrench is unique",
    }
    print(json.dumps(comparison))
    return 0


def _foot_forces(log: dict[str, np.ndarray]) -> list[np.ndarray]:
    """The logged corner forces (T, 12) of each foot, in the foot frames (flat on the ground)."""
    return [values for name, values in log.items() if name.startswith("forces/")]


if __name__ == "__main__":
    sys.exit(main())
