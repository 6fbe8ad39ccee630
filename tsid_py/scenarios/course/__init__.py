"""The TSID course's questions as scenarios: each runs from ``tsid-py NAME``, prints a JSON summary
(``--json``) and draws its answer (``--plot DIR`` writes ``NAME_outcome.png``). docs/course.md
gives the questions, the commands and the answers measured."""

from tsid_py.scenarios.course import (
    com_outside,
    contact_gains,
    gains_weights,
    hand_contact,
    self_collision,
    sinusoid_sweep,
)

COURSE = {
    "com-outside": com_outside,
    "sinusoid-sweep": sinusoid_sweep,
    "contact-gains": contact_gains,
    "gains-weights": gains_weights,
    "hand-contact": hand_contact,
    "self-collision": self_collision,
}

__all__ = [
    "COURSE",
    "com_outside",
    "contact_gains",
    "gains_weights",
    "hand_contact",
    "self_collision",
    "sinusoid_sweep",
]
