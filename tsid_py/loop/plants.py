"""The built-in plants by name: what ``--plant`` of the ``tsid-py`` scenarios chooses from."""

from __future__ import annotations

from tsid_py.errors import InvalidParameterError
from tsid_py.loop.plant import IntegratorPlant, Plant
from tsid_py.planning.terrain import Terrain
from tsid_py.robot_specs import SpecRobot

PLANTS = {
    "integrator": "integrates the controller's own dv on the manifold (no physics; the default)",
    "pinocchio": "rigid contacts with Pinocchio's constraint dynamics (physics outside the QP)",
    "mujoco": "MuJoCo, built from the same robot spec (pip install 'tsid_py[sim]')",
    "mujoco-urdf": (
        "MuJoCo built another way, as a user converts the URDF: MuJoCo's own importer, box feet "
        "1 cm under the soles, no joint damping (a check that the controller holds in a model it "
        "was not built from)"
    ),
}
PUSHABLE = (
    "pinocchio",
    "mujoco",
    "mujoco-urdf",
)  # the plants with physics a push acts on (the integrator has none)


def check_plant(name: str) -> None:
    """InvalidParameterError unless ``name`` is a key of :data:`PLANTS`."""
    if name not in PLANTS:
        raise InvalidParameterError(f"unknown plant {name!r}: choose from {', '.join(PLANTS)}")


def make_plant(name: str, robot: SpecRobot, terrain: Terrain | None = None) -> Plant:
    """A new plant of kind ``name`` (a key of :data:`PLANTS`) for ``robot``, on ``terrain`` (the
    floor by default: the MuJoCo plant builds its blocks; the integrator has no ground to touch;
    the other plants know only the floor)."""
    check_plant(name)
    if name == "integrator":
        return IntegratorPlant(robot)
    if terrain is not None and not terrain.flat and name != "mujoco":
        raise InvalidParameterError(
            f"the {name} plant's ground is the floor only: terrain {terrain.name} needs --plant mujoco"
        )
    if name == "pinocchio":
        from tsid_py.loop.pinocchio_plant import PinocchioPlant

        return PinocchioPlant(robot)
    from tsid_py.loop.mujoco_plant import MujocoPlant

    if name == "mujoco-urdf":
        from tsid_py.loop.mujoco_model import build_mujoco_model_from_urdf

        return MujocoPlant(robot, model=build_mujoco_model_from_urdf(robot))
    return MujocoPlant(robot, terrain=terrain)
