"""CoM sinusoid: a biped on both feet sways its CoM sideways.

The reference is c(t) = c_0 + a sin(2 pi f t) along y (a = 0.05 m, f = 0.5 Hz by default),
around the initial CoM c_0, with its exact velocity and acceleration. The reported CoM error is
the distance between the CoM and this reference at every step.
"""

from __future__ import annotations

from tsid_py.controllers.biped import BipedController
from tsid_py.scenarios.sway import sway_scenario

SCENARIO = sway_scenario("com-sinusoid", BipedController, __doc__)
run, main = SCENARIO.run, SCENARIO.main
