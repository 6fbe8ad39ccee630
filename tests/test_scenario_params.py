"""Scenarios as data: each scenario's parameters are one dataclass, and one adapter
(tsid_py/scenarios/scenario.py) makes its command-line options, what a sweep may vary and the
parameter table of the docs from it. No run here: every check happens before a controller exists."""

from __future__ import annotations

import dataclasses

import pytest

from tsid_py.command import Parser
from tsid_py.errors import InvalidParameterError
from tsid_py.loop.plant import Push
from tsid_py.scenarios import SCENARIOS, balance, com_sinusoid, quadruped, walk
from tsid_py.scenarios.course import com_outside, self_collision
from tsid_py.scenarios.parameters import parameters
from tsid_py.scenarios.runner import LoopSetup
from tsid_py.sweep.scenario_jobs import check_keywords
from tsid_py.sweep.space import Axis, parse_param


def parser_of(name: str) -> Parser:
    parser = Parser(prog=f"tsid-py {name}")
    SCENARIOS[name].SCENARIO.add_arguments(parser)
    return parser


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_the_parser_made_from_the_dataclass_gives_back_its_defaults(name):
    scenario = SCENARIOS[name].SCENARIO
    args = parser_of(name).parse_args([])
    values = {p.name: p.from_cli(getattr(args, p.dest)) for p in scenario.parameters() if p.option}
    assert scenario.params(**values) == scenario.params()


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_every_field_of_a_scenario_is_an_option_of_its_command_with_its_unit(name):
    scenario = SCENARIOS[name].SCENARIO
    options = {
        action.option_strings[0]: action for action in parser_of(name)._actions if action.option_strings
    }
    for p in parameters(scenario.params):
        if p.metadata.get("python_only"):
            assert p.option is None and p.name not in scenario.space()
            continue
        assert p.option in options, f"{name}: {p.name} has no option"
        assert f"[{p.unit}]" in options[p.option].help or not p.unit or p.kind == "flag"


def test_a_bad_value_on_the_command_line_names_the_unit(capsys):
    with pytest.raises(SystemExit) as stop:
        parser_of("hand-contact").parse_args(["--hand-force", "30N"])
    assert stop.value.code == 2
    assert "argument --hand-force: expected a force in newtons, got '30N'" in capsys.readouterr().err


def test_an_option_whose_field_has_another_name_reaches_its_field():
    """hand-contact's ``force`` is --hand-force (--force is the outputs'), self-collision's
    ``avoidance`` is --no-avoidance."""
    hand = SCENARIOS["hand-contact"].SCENARIO
    args = parser_of("hand-contact").parse_args(["--hand-force", "12", "--force"])
    force = next(p for p in hand.parameters() if p.name == "force")
    value = force.from_cli(getattr(args, force.dest))
    assert args.force is True and value == 12.0  # exact: parsed as written
    args = parser_of("self-collision").parse_args(["--no-avoidance"])
    assert (
        args.no_avoidance is False
        and not self_collision.SCENARIO.params(avoidance=args.no_avoidance).avoidance
    )


def test_the_sweep_space_refuses_an_unknown_name_and_values_of_the_wrong_kind():
    with pytest.raises(InvalidParameterError, match="--param gain: balance has no such parameter"):
        check_keywords("balance", [Axis("gain", (1.0,))])
    with pytest.raises(InvalidParameterError, match="--param recovery_params: balance has no such"):
        check_keywords("balance", [Axis("recovery_params", (1.0,))])  # a Python-only field
    with pytest.raises(InvalidParameterError, match="--param amplitude takes numbers, got 'big'"):
        check_keywords("com-sinusoid", [parse_param("amplitude=0.01,big")])
    with pytest.raises(InvalidParameterError, match="'sideways' is not one of none, ankle, step"):
        check_keywords("balance", [parse_param("recovery=none,sideways")])
    with pytest.raises(InvalidParameterError, match="--param avoidance takes true or false"):
        check_keywords("self-collision", [parse_param("avoidance=maybe")])
    (flags,) = check_keywords("self-collision", [parse_param("avoidance=true,false")])
    assert flags.values == (True, False)


def test_a_function_of_ones_own_is_swept_on_its_own_keywords_whatever_its_name():
    """A function named as a scenario of tsid-py is not that scenario: its robots are not checked
    against the biped controller; its objects (params, push) are no table values."""

    def balance(robot: str = "ur5", gain: float = 1.0, params: object = None, push: object = None) -> dict:
        return {"gain": gain}

    (robots,) = check_keywords(balance, [Axis("robot", ("ur5",))])  # an arm: fine for this function
    assert robots.values == ("ur5",)

    def tuned(mode: str = "fast", plant: str = "mine") -> dict:
        return {"mode": mode}

    mode, plant = check_keywords(tuned, [Axis("mode", ("a", "b")), Axis("plant", ("mine",))])  # its own words
    assert (mode.values, plant.values) == (("a", "b"), ("mine",))
    with pytest.raises(InvalidParameterError, match="a push needs a force"):
        check_keywords("balance", [Axis("push_angle", (90.0,)), Axis("plant", ("mujoco",))])
    with pytest.raises(InvalidParameterError, match="--param params: balance has no such parameter"):
        check_keywords(balance, [Axis("params", ("x",))])


def test_a_sweep_from_python_checks_its_points_before_any_run(tmp_path):
    """run_sweep refuses, as the command does, a name balance does not have: no run, no table."""
    from tsid_py.sweep import ScenarioJob, run_sweep

    points = [{"kp_com": 5.0, "duration": 0.1}, {"kp_com": 10.0, "duration": 0.1}]
    with pytest.raises(InvalidParameterError, match="--param kp_com: balance has no such parameter"):
        run_sweep(ScenarioJob("balance"), points, tmp_path / "table.csv", workers=1)
    assert not (tmp_path / "table.csv").exists()
    late = [{"duration": d, "push_fy": 100.0, "plant": "pinocchio"} for d in (0.5, 2.0)]  # pushed at 1 s
    with pytest.raises(InvalidParameterError, match=r"push_t: push .* starts at 1 s, when the 0.5 s run"):
        run_sweep(ScenarioJob("balance"), late, tmp_path / "table.csv", workers=1)
    assert not (tmp_path / "table.csv").exists()


def test_the_sweep_space_is_the_dataclass_and_the_loop():
    space = com_sinusoid.SCENARIO.space()
    assert list(space)[:6] == ["robot", "duration", "dt", "backend", "amplitude", "frequency"]
    assert {"plant", "mode", "check_every"} <= set(space) and space["check_every"].kind == "whole"
    assert SCENARIOS["walk"].SCENARIO.space()["steps"].kind == "whole"


def test_run_takes_the_fields_by_keyword_and_refuses_what_is_not_one():
    with pytest.raises(
        InvalidParameterError, match="balance has no parameter 'durration' .did you mean duration"
    ):
        balance.run(durration=1.0)
    with pytest.raises(InvalidParameterError, match="not both"):
        balance.run(duration=0.1, plant="pinocchio", setup=LoopSetup())
    with pytest.raises(InvalidParameterError, match="capture_point takes True or False, got 'false'"):
        com_outside.run(duration=0.1, capture_point="false")  # a word would be true
    with pytest.raises(InvalidParameterError, match="duration takes a number, got True"):
        balance.run(duration=True)
    with pytest.raises(InvalidParameterError, match="push must be a tsid_py.loop.Push"):
        balance.run(duration=0.1, plant="pinocchio", push=((0.0, 10.0, 0.0), 0.0, 0.1))
    with pytest.raises(InvalidParameterError, match="com-sinusoid.run takes no push argument"):
        com_sinusoid.run(duration=0.1, push=Push((0.0, 10.0, 0.0), 0.0, 0.1))
    with pytest.raises(InvalidParameterError, match=r"at most 2 arguments by position \(robot, duration\)"):
        balance.run("talos", 1.0, 0.001)  # dt was third: refused, not read as another parameter
    with pytest.raises(InvalidParameterError, match=r"at most 2 arguments by position \(robot, duration\)"):
        com_sinusoid.run("talos", 1.0, 0.001)
    assert walk.SCENARIO.make_params("talos", 4, 0.1).step_length == 0.1  # exact: as given, by position


def test_two_scenarios_that_differ_in_defaults_share_their_descriptions():
    sway, legs = com_sinusoid.SCENARIO.params(), quadruped.SCENARIO.params()
    assert (sway.robot, legs.robot) == ("talos", "solo12")
    help_of = {p.name: p.describe() for p in parameters(quadruped.SCENARIO.params)}
    assert help_of["amplitude"] == "sway amplitude along y [m] (default: 0.02)"
    assert dataclasses.is_dataclass(legs) and isinstance(legs, type(sway).__mro__[1])


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_the_docs_table_lists_every_parameter(name):
    scenario = SCENARIOS[name].SCENARIO
    table = scenario.reference()
    for p in scenario.parameters():
        assert f"| `{p.name}` |" in table


def test_a_sweep_point_from_python_runs_with_its_values_read_as_checked():
    """A flag given as a word passes the check as False, and the run gets False (it used to get
    the word, and every run raised)."""
    from tsid_py.sweep import ScenarioJob

    job = ScenarioJob("com-outside")
    point = {"capture_point": "false", "duration": 0.01}
    job.check([point])
    summary = job(point).summary
    assert summary["capture_point"] is False and summary["steps"] == 5
