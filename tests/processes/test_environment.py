"""The environment of an evaluator or proposer command: an allow-list."""

from __future__ import annotations

import pytest

from harnessgit.config import parse_config
from harnessgit.errors import ConfigError
from harnessgit.processes.environment import check_names, child_environment

HARNESSGIT = {
    "PATH": "/usr/bin",
    "HOME": "/home/u",
    "LC_CTYPE": "C.UTF-8",
    "PYTHONPATH": "/src",
    "VIRTUAL_ENV": "/venv",
    "OPENAI_API_KEY": "sk-live",
    "GITHUB_TOKEN": "ghp_x",
    "HTTPS_PROXY": "http://user:pw@proxy:3128",
    "GIT_DIR": "/repo/.git",
    "AWS_SECRET_ACCESS_KEY": "s",
    "AWS_REGION": "eu-west-1",
    "HARNESSGIT_RUN": "outer",
}


def test_defaults_pass_and_nothing_else() -> None:
    env = child_environment(environ=HARNESSGIT)
    assert env == {
        "PATH": "/usr/bin",
        "HOME": "/home/u",
        "LC_CTYPE": "C.UTF-8",
        "PYTHONPATH": "/src",
        "VIRTUAL_ENV": "/venv",
    }


def test_listed_names_and_prefixes_pass_and_harnessgit_sets_its_own() -> None:
    env = child_environment(
        ["OPENAI_API_KEY", "AWS_*"], {"HARNESSGIT_SPLIT": "selection"}, environ=HARNESSGIT
    )
    assert env["OPENAI_API_KEY"] == "sk-live" and env["AWS_REGION"] == "eu-west-1"
    assert env["AWS_SECRET_ACCESS_KEY"] == "s" and env["HARNESSGIT_SPLIT"] == "selection"
    assert "GITHUB_TOKEN" not in env and "HTTPS_PROXY" not in env and "HARNESSGIT_RUN" not in env


def test_globs_match_as_in_scrub_env_and_case_counts() -> None:
    env = child_environment(["AWS_[RS]*", "openai_api_key"], environ=HARNESSGIT)
    assert env["AWS_REGION"] == "eu-west-1" and env["AWS_SECRET_ACCESS_KEY"] == "s"
    assert "OPENAI_API_KEY" not in env


def test_a_listed_name_that_is_not_set_is_not_invented() -> None:
    assert "NOT_SET" not in child_environment(["NOT_SET"], environ=HARNESSGIT)


@pytest.mark.parametrize("name", ["", "A B", "A=B", "$HOME", "A.B", "A-B"])
def test_names_are_checked(name: str) -> None:
    with pytest.raises(ValueError, match="is not an environment variable name"):
        check_names([name])


@pytest.mark.parametrize("section", ["[evaluator]", '[proposer]\nkind = "command"'])
def test_a_bad_name_in_the_configuration_is_one_clear_error(section: str) -> None:
    name = "evaluator" if section == "[evaluator]" else "proposer"
    with pytest.raises(ConfigError, match=rf"{name}\.env.*'MY KEY' is not an environment variable name"):
        parse_config(f'{section}\nenv = ["MY KEY"]\n'.encode())
