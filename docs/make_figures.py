"""Make the documentation's figures with the library's own plots: ``python docs/make_figures.py``.

Each figure is what ``tsid-py SCENARIO --plot DIR`` (or ``tsid-py analyze --plot``) writes, saved
into docs/images as a small PNG (64-colour palette). About a minute on two cores. The three
screenshots of the 3-D view (balance.png, quadruped.png, reach.png) are headless Chromium's
renderings of the ``--html`` replays:

    tsid-py balance --duration 1 --html balance.html
    chromium --headless --no-sandbox --window-size=640,480 --virtual-time-budget=2000 \
        --screenshot=docs/images/balance.png balance.html
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

IMAGES = Path(__file__).resolve().parent / "images"
TSID_PY = [sys.executable, "-m", "tsid_py.cli"]

# (command arguments, {plot written: name in docs/images})
RUNS = [
    (["balance"], {"balance_contact_forces.png": "balance_contact_forces.png"}),
    (
        ["com-sinusoid", "--duration", "4"],
        {
            "com-sinusoid_com.png": "com-sinusoid_com.png",
            "com-sinusoid_contact_forces.png": "com-sinusoid_contact_forces.png",
        },
    ),
    (["step"], {"step_foot_heights.png": "step_foot_heights.png", "step_com.png": "step_com.png"}),
    (["walk"], {"walk_top_view.png": "walk_top_view.png"}),
    (["walk", "--robot", "romeo"], {"walk_top_view.png": "walk_romeo_top_view.png"}),
    (["reach"], {"reach-target_end_effector.png": "reach-target_end_effector.png"}),
    (["quadruped"], {"quadruped_top_view.png": "quadruped_top_view.png"}),
]


def save_small(source: Path, target: Path) -> None:
    """``source`` as a 64-colour palette PNG at ``target`` (a third of matplotlib's size)."""
    from PIL import Image

    with Image.open(source) as image:
        image.convert("RGB").quantize(colors=64, method=Image.Quantize.MEDIANCUT).save(target, optimize=True)


def main() -> int:
    IMAGES.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory() as scratch:
        for k, (arguments, figures) in enumerate(RUNS):
            out = Path(scratch) / str(k)
            subprocess.run(
                [*TSID_PY, *arguments, "--json", "--plot", str(out)], check=True, stdout=subprocess.DEVNULL
            )
            for written, name in figures.items():
                save_small(out / written, IMAGES / name)
                print(f"docs/images/{name}")
        motion = Path(scratch) / "motion"
        demo = Path(__file__).resolve().parents[1] / "demos" / "inverse_dynamics_from_motion.py"
        subprocess.run(
            [sys.executable, str(demo), "--duration", "4", "--out-dir", str(motion)],
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for written in ("joint_torques.png", "contact_forces.png"):
            save_small(motion / written, IMAGES / f"analyze_{written}")
            print(f"docs/images/analyze_{written}")
        shutil.rmtree(motion)
    return 0


if __name__ == "__main__":
    sys.exit(main())
