"""Ready-made controllers that own a formulation and the usual tasks."""

from tsid_py.controllers.biped import BipedController, BipedParams, ControlOutput

__all__ = ["BipedController", "BipedParams", "ControlOutput"]
