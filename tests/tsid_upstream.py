"""TSID's own Python tests and exercises, run headless with ``tsid`` = the C++ TSID or tsid_py.compat.

The TSID 1.10.0 sdist (tests/python, exercizes, demo, models) is downloaded from PyPI once, checked
against its sha256 and extracted into the cache (``$TSID_PY_CACHE``, else ``~/.cache/tsid_py``).
Each script runs in a subprocess of this module, from its own folder, with ``sys.modules["tsid"]``
set to the implementation asked for before the script starts:

    python tests/tsid_upstream.py test tests/python/test_Tasks.py --impl compat
    python tests/tsid_upstream.py exercise ex_0 --impl oracle --out /tmp/ex_0.npz

Headless means: no viewer (gepetto, pinocchio's visualizers and ``pin.RobotWrapper``'s display are
stand-ins that record the configurations displayed), no GUI (a tkinter stand-in), no plots
(matplotlib's Agg backend), no real-time sleeps and no prompts. The exercises' logic is untouched:
only their conf modules' values (durations, model paths) are changed, and the demo's, whose conf
values are assignments at the top of the script. Two environment fixes let TSID's tests run where
they otherwise cannot, for either implementation: ``pinocchio.Model.neutralConfiguration``
(removed in Pinocchio 3; ``pin.neutral(model)``) and a ``tests/models`` link to ``models``
(test_Contact.py's models path is one folder short).
"""

from __future__ import annotations

import argparse
import builtins
import hashlib
import os
import re
import sys
import tarfile
import threading
import types
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

VERSION = "1.10.0"
URL = (
    "https://files.pythonhosted.org/packages/6c/5b/"
    "fa66e86b4714ea8fbaffd56bcbf3c1e9fb596e03fe17e4b7559348627b22/tsid-1.10.0.tar.gz"
)
SHA256 = "a46221462012e7be9f6eaea23194e098cfee9ae1af53a3a5406d20a4da624f5e"
TESTS = [
    "test_Constraint.py",
    "test_Contact.py",
    "test_ContactPoint.py",
    "test_Deprecations.py",
    "test_Formulation.py",
    "test_Gravity.py",
    "test_Measured6DWrench.py",
    "test_RobotWrapper.py",
    "test_Solvers.py",
    "test_Tasks.py",
    "test_Trajectories.py",
]


class SdistUnavailableError(Exception):
    """The sdist cannot be had (no network, a bad download)."""


def cache_dir() -> Path:
    return Path(os.environ.get("TSID_PY_CACHE") or Path.home() / ".cache" / "tsid_py")


def sdist_root() -> Path:
    """The extracted sdist (downloaded and checked on first use)."""
    root = cache_dir() / f"tsid-{VERSION}"
    if (root / ".complete").is_file():
        return root
    archive = cache_dir() / f"tsid-{VERSION}.tar.gz"
    if not archive.is_file() or hashlib.sha256(archive.read_bytes()).hexdigest() != SHA256:
        archive.parent.mkdir(parents=True, exist_ok=True)
        try:
            with urllib.request.urlopen(URL, timeout=30) as response:
                payload = response.read()
        except OSError as error:
            raise SdistUnavailableError(
                f"cannot download the TSID {VERSION} sdist from PyPI: {error}"
            ) from error
        if hashlib.sha256(payload).hexdigest() != SHA256:
            raise SdistUnavailableError(
                f"the TSID {VERSION} sdist from PyPI does not have the expected sha256"
            )
        partial = archive.with_suffix(".partial")
        partial.write_bytes(payload)
        partial.replace(archive)
    with tarfile.open(archive) as tar:
        safe = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}  # Python >= 3.10.12
        tar.extractall(cache_dir(), **safe)
    link = root / "tests" / "models"
    if not link.exists():
        link.symlink_to("../models")
    (root / ".complete").write_text("ok\n")
    return root


# ---------------------------------------------------------------------------------------- recipes
@dataclass(frozen=True)
class Recipe:
    """How one exercise runs headless: its script, the conf values changed, the arrays kept."""

    script: str
    conf: str | None = None
    values: dict[str, object] = field(default_factory=dict)
    script_values: dict[str, int] = field(default_factory=dict)  # a demo's own conf assignments
    keep: tuple[str, ...] = ()
    displays: int = 0  # stop after this many displays (an exercise that runs until stopped)
    talos_paths: bool = False  # talos_conf's model paths (see _talos)
    walking_data: bool = False  # conf.DATA_FILE_TSID made by walking_data()
    gui: bool = False  # a user pushes the robot from ex_3's GUI (_drive_gui)


def _erd() -> Path:
    from tsid_py.robot_specs import example_robot_data_dir

    return example_robot_data_dir()


def _talos() -> dict[str, object]:
    """talos_conf's paths (its URDF path joins an absolute part, which pathlib reads as absolute)."""
    robots = _erd()
    return {
        "urdf": robots / "talos_data/robots/talos_reduced.urdf",
        "srdf": robots / "talos_data/srdf/talos.srdf",
        "path": robots / "../..",
    }


RECIPES = {
    "ex_0": Recipe(
        "exercizes/ex_0_ur5_joint_space_control.py",
        "ur5_conf",
        {"N_SIMULATION": 400},
        keep=("q", "v", "dv", "tau", "dv_des"),
    ),
    "ex_1_ur5": Recipe(
        "exercizes/ex_1_ur5.py",
        "ur5_reaching_conf",
        {"N_SIMULATION": 400},
        keep=("q", "v", "tau", "ee_pos", "ee_acc_des"),
    ),
    "ex_1": Recipe(
        "exercizes/ex_1.py",
        "romeo_conf",
        {"N_SIMULATION": 300},
        keep=("q", "v", "com_pos", "com_vel", "com_acc", "com_acc_des", "tau"),
    ),
    "ex_2": Recipe(
        "exercizes/ex_2.py",
        "romeo_conf",
        {"N_SIMULATION": 300},
        keep=("q", "v", "com_pos", "com_vel", "com_acc", "com_acc_des", "tau"),
    ),
    "ex_3": Recipe(
        "exercizes/ex_3_biped_balance_with_gui.py", "talos_conf", displays=16, talos_paths=True, gui=True
    ),
    "ex_4_walking": Recipe(
        "exercizes/ex_4_walking.py",
        "ex_4_conf",
        {"T_pre": 0.3, "T_post": 0.1},
        keep=("q", "v", "com_pos", "x_LF", "x_RF", "f_LF", "f_RF", "tau", "q_log"),
        walking_data=True,
    ),
    "demo_quadruped": Recipe(
        "demo/demo_quadruped.py",
        script_values={"N_SIMULATION": 600},
        keep=("q", "v", "com_pos", "com_acc_des", "tau"),
    ),
}


# -------------------------------------------------------------------------- headless stand-ins
class _Nothing:
    """Answers every call and attribute with itself (a GUI client, a viewer's ``gui``)."""

    def __getattr__(self, name: str) -> _Nothing:
        return self

    def __call__(self, *args: object, **kwargs: object) -> _Nothing:
        return self


class _StopError(Exception):
    """Ends an exercise that runs until stopped."""


class _Display:
    """A viewer that records the configurations it is asked to display."""

    shown: list[np.ndarray] = []
    limit = 0
    on_display: object = None

    def __init__(self, model: object = None, *args: object, **kwargs: object) -> None:
        self.model = model
        self.collision_model = self.visual_model = None
        self.viewer = self.viz = _Nothing()

    def display(self, q: object) -> None:
        _Display.shown.append(np.array(q, dtype=float))
        if callable(_Display.on_display):
            _Display.on_display(len(_Display.shown))
        if _Display.limit and len(_Display.shown) >= _Display.limit:
            raise _StopError

    def __getattr__(self, name: str) -> _Nothing:  # initViewer, displayCollisions, ...
        return _Nothing()


def _headless(exercises: Path) -> None:
    """Viewer, GUI, plots, sleeps and prompts replaced; example_robot_data's path finder provided
    (the example-robot-data 6 wheel has no Python module)."""
    import subprocess
    import time

    import matplotlib
    import pinocchio as pin
    import pinocchio.visualize  # the confs read pin.visualize, which Pinocchio 4 does not import

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.show = lambda *args, **kwargs: None
    time.sleep = lambda seconds: None
    os.system = lambda command: 0
    subprocess.getstatusoutput = lambda command: (0, "1")
    builtins.input = lambda prompt="": "n"

    def build_from_urdf(filename: object, package_dirs: object = None, root_joint: object = None, *a: object):
        path = str(filename)
        model = pin.buildModelFromUrdf(path, root_joint) if root_joint else pin.buildModelFromUrdf(path)
        return _Display(model)

    pin.RobotWrapper.BuildFromURDF = staticmethod(build_from_urdf)
    pin.visualize.GepettoVisualizer = _Display
    for name in ("gepetto", "gepetto.corbaserver"):
        sys.modules[name] = types.ModuleType(name)
    sys.modules["gepetto"].corbaserver = sys.modules["gepetto.corbaserver"]
    sys.modules["gepetto.corbaserver"].Client = _Nothing
    loader = types.ModuleType("example_robot_data.robots_loader")
    loader.getModelPath = lambda subpath, printmsg=False: str(_erd())
    sys.modules["example_robot_data"] = types.ModuleType("example_robot_data")
    sys.modules["example_robot_data"].robots_loader = loader
    sys.modules["example_robot_data.robots_loader"] = loader
    sys.modules["tkinter"] = _fake_tkinter()
    sys.path.insert(0, str(exercises))


class _Widget:
    value = "0"

    def __init__(self, *args: object, **kwargs: object) -> None:
        pass

    def get(self) -> str:
        return type(self).value

    def __getattr__(self, name: str) -> _Nothing:  # pack, config, ...
        return _Nothing()


def _fake_tkinter() -> types.ModuleType:
    tk = types.ModuleType("tkinter")
    for name in ("Tk", "Scale", "Button", "Label", "Frame", "Entry"):
        setattr(tk, name, type(name, (_Widget,), {}))
    for name in ("HORIZONTAL", "SUNKEN", "X", "LEFT", "TOP", "BOTTOM"):
        setattr(tk, name, name.lower())
    tk.mainloop = lambda: None
    return tk


# --------------------------------------------------------------------------------- walking data
def walking_data(root: Path, path: Path, dt: float) -> None:
    """A walk for ex_4_walking.py (which reads it from ``conf.DATA_FILE_TSID``; TSID makes it with
    LMPC_walking, which is not on PyPI): two 5 cm steps of Romeo, left foot first, planned by
    tsid_py's footstep and LIPM planners. The exercise switches contacts at each change of
    ``contact_phase`` (the stance foot) and adds its own offset to the positions."""
    import pinocchio as pin

    from tsid_py.planning import plan_com_from_zmp, plan_straight_walk
    from tsid_py.robot_specs import SoleGeometry

    models = root / "models" / "romeo"
    model = pin.buildModelFromUrdf(str(models / "urdf/romeo.urdf"), pin.JointModelFreeFlyer())
    pin.loadReferenceConfigurations(model, str(models / "srdf/romeo_collision.srdf"), False)
    data = model.createData()
    q = model.referenceConfigurations["half_sitting"].copy()
    pin.framesForwardKinematics(model, data, q)
    right, left = (pin.SE3(data.oMf[model.getFrameId(f)]) for f in ("RAnkleRoll", "LAnkleRoll"))
    com = pin.centerOfMass(model, data, q)
    sole = SoleGeometry(lxp=0.10, lxn=0.05, lyp=0.05, lyn=0.05, lz=0.07)  # ex_4_conf's
    plan = plan_straight_walk(
        sole,
        right,
        left,
        com,
        2,
        0.05,
        single_support=0.3,
        double_support=0.1,
        t_start=0.1,
        t_settle=0.1,
        first="left",
    )
    lipm = plan_com_from_zmp(plan.zmp_reference, plan.t_end, com, right.translation[2] - sole.lz, dt=0.01)
    first, second = plan.steps
    times = np.arange(first.t_lift, second.t_land + 0.05, dt)
    arrays: dict[str, list] = {k: [] for k in ("com", "dcom", "ddcom", "cop")}
    for side in ("RF", "LF"):
        for prefix in ("x_", "dx_", "ddx_"):
            arrays[prefix + side] = []
    for t in times:
        sample = lipm.sample(t)
        arrays["com"].append(sample.pos)
        arrays["dcom"].append(sample.vel)
        arrays["ddcom"].append(sample.acc)
        arrays["cop"].append(lipm.zmp(t))
        standing = plan.placements(t)
        swing = plan.swinging(t)
        for side, key in (("right", "RF"), ("left", "LF")):
            if swing is not None and swing.side == side:
                foot = swing.swing_trajectory(0.03).sample(t)
                pos, vel, acc = foot.pos[:3], foot.vel[:3], foot.acc[:3]
            else:
                pos, vel, acc = standing[side].translation, np.zeros(3), np.zeros(3)
            arrays["x_" + key].append(pos)
            arrays["dx_" + key].append(vel)
            arrays["ddx_" + key].append(acc)
    phase = np.where(times < first.t_land, "right", np.where(times < second.t_land, "left", "right"))
    np.savez(path, contact_phase=phase, **{k: np.array(v).T for k, v in arrays.items()})


# ----------------------------------------------------------------------------------------- runs
def _install(impl: str) -> None:
    from tsid_py.threads import limit_blas_threads

    limit_blas_threads()  # tsid_py's advice for any control loop, for both implementations
    if impl == "compat":
        import tsid_py.compat

        sys.modules["tsid"] = tsid_py.compat
    else:
        import tsid  # noqa: F401  (the C++ TSID)


def run_test(script: Path, impl: str) -> None:
    """Run one of TSID's tests/python/test_*.py as __main__ (an exception or exit code fails it)."""
    import runpy

    import pinocchio as pin

    _install(impl)
    pin.Model.neutralConfiguration = property(pin.neutral)  # removed in Pinocchio 3
    os.chdir(script.parent)
    sys.path.insert(0, str(script.parent))
    sys.argv = [str(script)]
    runpy.run_path(str(script), run_name="__main__")


def run_exercise(name: str, impl: str, out: Path) -> None:
    """Run an exercise headless and save the arrays it logged (and the configurations displayed)."""
    import importlib

    recipe = RECIPES[name]
    root = sdist_root()
    script = root / recipe.script
    _install(impl)
    _headless(root / "exercizes")
    os.chdir(script.parent)
    sys.path.insert(0, str(script.parent))
    sys.argv = [str(script)]
    if recipe.conf:
        conf = importlib.import_module(recipe.conf)
        values = dict(recipe.values)
        if recipe.talos_paths:
            values.update(_talos())
        if recipe.walking_data:
            data = out.with_suffix(".walk.npz")
            walking_data(root, data, conf.dt)
            values["DATA_FILE_TSID"] = str(data)
        for key, value in values.items():
            assert hasattr(conf, key), f"{recipe.conf} has no {key}"
            setattr(conf, key, value)
        for key, value in list(vars(conf).items()):  # the C++ TSID takes paths as str only
            if isinstance(value, Path):
                setattr(conf, key, str(value))
    source = script.read_text()
    for key, value in recipe.script_values.items():
        source, count = re.subn(rf"^{key} = .*$", f"{key} = {value}", source, count=1, flags=re.M)
        assert count == 1, f"{recipe.script} has no {key} assignment"
    _Display.limit = recipe.displays
    scope: dict[str, object] = {"__name__": "__main__", "__file__": str(script)}
    if recipe.gui:
        _drive_gui(scope)
    exec(compile(source, str(script), "exec"), scope)
    for thread in [t for t in threading.enumerate() if t is not threading.current_thread()]:
        thread.join()
    kept = {key: np.asarray(scope[key], dtype=float) for key in recipe.keep}
    np.savez(out, displayed=np.array(_Display.shown), **kept)


def _drive_gui(scope: dict[str, object]) -> None:
    """ex_3 runs until its window closes: it stops after ``displays`` displays, and at the 5th
    a user pushes the robot from the GUI (a CoM velocity of 0.1 m/s along x, y and z)."""
    threading.excepthook = lambda args: (
        None
        if args.exc_type is _StopError
        else sys.__excepthook__(args.exc_type, args.exc_value, args.exc_traceback)
    )

    def user(count: int) -> None:
        if count == 5:
            sys.modules["tkinter"].Entry.value = "0.1"  # every field of the CoM velocity entry
            scope["push_robot"]()
            sys.modules["tkinter"].Entry.value = "0"

    _Display.on_display = user


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("what", choices=["test", "exercise"])
    parser.add_argument("target", help="a test script (relative to the sdist) or an exercise name")
    parser.add_argument("--impl", choices=["compat", "oracle"], default="compat")
    parser.add_argument("--out", type=Path, help="where an exercise's arrays are saved (.npz)")
    args = parser.parse_args()
    if args.what == "test":
        run_test(sdist_root() / args.target, args.impl)
    else:
        run_exercise(args.target, args.impl, args.out.resolve())


if __name__ == "__main__":
    main()
