"""Time of the over-time contact inverse dynamics on long recordings (Talos, two feet); prints JSON.

Also Solo12 on four point feet, trotting every other 0.2 s (the frames on two feet cannot balance
the root; their residual is reported and left out of ``root_residual_max``).

The motion is synthetic and smooth (every joint and the base sway sinusoidally around the
half-sitting posture, sampled at 500 Hz), so recordings of any length are cheap to make. The time
per frame stays constant as the recording grows: the solve is a banded Cholesky factorization.

    python benchmarks/motion_id.py            # 1,000, 10,000 and 100,000 frames (about 40 s in all)
    python benchmarks/motion_id.py --quick    # skip the 100,000 frames
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
import pinocchio as pin

import tsid_py as tsid
from tsid_py.analysis import multi_contact_inverse_dynamics_over_time
from tsid_py.robot_specs import SpecRobot

DT = 0.002  # [s]


def synthetic_motion(robot: SpecRobot, frames: int, seed: int = 0) -> np.ndarray:
    """(frames, nq) configurations: half-sitting plus sinusoids of 0.02-0.1 rad at 0.2-1.5 Hz."""
    rng = np.random.default_rng(seed)
    q0 = robot.default_configuration()
    t = DT * np.arange(frames)[:, None]
    amplitude = rng.uniform(0.02, 0.1, robot.nv)
    frequency = rng.uniform(0.2, 1.5, robot.nv)
    phase = rng.uniform(0.0, 2 * np.pi, robot.nv)
    offsets = amplitude * np.sin(2 * np.pi * frequency * t + phase)
    return np.array([pin.integrate(robot.model, q0, offset) for offset in offsets])


def time_runs(robot: SpecRobot, frame_counts: tuple[int, ...], point_feet: bool) -> list[dict[str, float]]:
    """Time the analysis of synthetic recordings of each length (all feet down, or trotting on points)."""
    feet = list(robot.spec.feet.values())
    results = []
    for frames in frame_counts:
        q = synthetic_motion(robot, frames)
        schedule = np.ones((frames, len(feet)), dtype=bool)
        if point_feet:  # every other 0.2 s, a diagonal pair of feet only (FL, HR): 5 of 6 root rows
            schedule[(np.arange(frames) // 100) % 2 == 1] = [True, False, False, True]
        start = time.perf_counter()
        analysis = multi_contact_inverse_dynamics_over_time(
            robot, q, feet, DT, contact_schedule=schedule, point_contacts=point_feet
        )
        seconds = time.perf_counter() - start
        full_rank = schedule.all(axis=1) | (not point_feet)
        results.append(
            {
                "frames": frames,
                "time_s": round(seconds, 3),
                "time_per_frame_us": round(1e6 * seconds / frames, 1),
                "root_residual_max": float(np.max(np.abs(analysis.root_residual[full_rank]))),
            }
        )
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="skip the 100,000-frame run")
    args = parser.parse_args()
    talos, solo12 = tsid.load_robot("talos"), tsid.load_robot("solo12")
    talos_runs = time_runs(talos, (1_000, 10_000, *(() if args.quick else (100_000,))), point_feet=False)
    solo_runs = time_runs(solo12, (1_000, 10_000), point_feet=True)
    print(
        json.dumps(
            {
                "dt_s": DT,
                "talos_two_feet": {"contacts": list(talos.spec.feet.values()), "runs": talos_runs},
                "solo12_point_feet_trotting": {
                    "contacts": list(solo12.spec.feet.values()),
                    "runs": solo_runs,
                },
            }
        )
    )


if __name__ == "__main__":
    main()
