"""Small URDFs written for the tests: a biped whose parts the spec tools must tell apart.

The biped: a 10 kg pelvis, two legs of hip pitch, knee and ankle pitch (y axis) and ankle roll
(x axis), 0.4 m thigh and shin, and a foot with a box under it (20 x 10 cm, 3 cm thick) whose
bottom face is 6.5 cm below the ankle, where a fixed joint puts a ``*_sole`` frame. With
``toes``, each foot ends in a toe joint (y axis) at its front edge and a 6 cm toe box whose
bottom is level with the foot's: the foot link then has a child.
"""

from __future__ import annotations

from pathlib import Path

LEG = 0.4  # [m] thigh and shin
ANKLE_TO_SOLE = 0.065  # [m]


def _inertial(mass: float, size: tuple[float, float, float], z: float = 0.0) -> str:
    a, b, c = size
    ixx, iyy, izz = (mass / 12 * (b * b + c * c), mass / 12 * (a * a + c * c), mass / 12 * (a * a + b * b))
    return (
        f'<inertial><origin xyz="0 0 {z}"/><mass value="{mass}"/>'
        f'<inertia ixx="{ixx}" iyy="{iyy}" izz="{izz}" ixy="0" ixz="0" iyz="0"/></inertial>'
    )


def _box(size: tuple[float, float, float], xyz: tuple[float, float, float]) -> str:
    return (
        f'<collision><origin xyz="{xyz[0]} {xyz[1]} {xyz[2]}"/>'
        f'<geometry><box size="{size[0]} {size[1]} {size[2]}"/></geometry></collision>'
    )


def _joint(name: str, kind: str, parent: str, child: str, xyz: str, axis: str = "0 1 0") -> str:
    limit = '<limit lower="-2" upper="2" effort="300" velocity="10"/>' if kind == "revolute" else ""
    return (
        f'<joint name="{name}" type="{kind}"><parent link="{parent}"/><child link="{child}"/>'
        f'<origin xyz="{xyz}"/><axis xyz="{axis}"/>{limit}</joint>'
    )


def biped_urdf(toes: bool = False) -> str:
    """The toy biped's URDF text (see the module docstring)."""
    parts = ['<robot name="toy_biped">', f'<link name="pelvis">{_inertial(10.0, (0.2, 0.3, 0.1))}</link>']
    for side, y in (("right", -0.1), ("left", 0.1)):
        foot = (0.2, 0.1, 0.03)
        parts += [
            f'<link name="{side}_thigh">{_inertial(3.0, (0.05, 0.05, LEG), -LEG / 2)}</link>',
            f'<link name="{side}_shin">{_inertial(2.0, (0.05, 0.05, LEG), -LEG / 2)}</link>',
            f'<link name="{side}_ankle">{_inertial(0.2, (0.03, 0.03, 0.03))}</link>',
            f'<link name="{side}_foot">{_inertial(1.0, foot, -0.05)}{_box(foot, (0.0, 0.0, -0.05))}</link>',
            f'<link name="{side}_sole"/>',
            _joint(f"{side}_hip_pitch", "revolute", "pelvis", f"{side}_thigh", f"0 {y} -0.05"),
            _joint(f"{side}_knee", "revolute", f"{side}_thigh", f"{side}_shin", f"0 0 {-LEG}"),
            _joint(f"{side}_ankle_pitch", "revolute", f"{side}_shin", f"{side}_ankle", f"0 0 {-LEG}"),
            _joint(f"{side}_ankle_roll", "revolute", f"{side}_ankle", f"{side}_foot", "0 0 0", "1 0 0"),
            _joint(f"{side}_sole_joint", "fixed", f"{side}_foot", f"{side}_sole", f"0 0 {-ANKLE_TO_SOLE}"),
        ]
        if toes:
            toe = (0.06, 0.1, 0.03)
            parts += [
                f'<link name="{side}_toe">{_inertial(0.2, toe, -0.05)}{_box(toe, (0.03, 0.0, -0.05))}</link>',
                _joint(f"{side}_toe_joint", "revolute", f"{side}_foot", f"{side}_toe", "0.1 0 0"),
            ]
    return "\n".join([*parts, "</robot>"]) + "\n"


def write_biped(folder: Path, toes: bool = False) -> Path:
    """The toy biped's URDF written in ``folder``; its path."""
    path = folder / ("toy_biped_toes.urdf" if toes else "toy_biped.urdf")
    path.write_text(biped_urdf(toes))
    return path
