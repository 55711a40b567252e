"""harnessgit.toml's values are taken as they are typed, never coerced (issue 15, defect 14).

A string is never a number, a float never an integer, a boolean neither; a number is
finite (`timeout = 1e400` is infinity in TOML, and meant no timeout at all); paths the
configuration names stay inside the repository (`[splits] manifest = "/etc/passwd"`
was read).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from harnessgit.config import load_check_config, load_config, parse_config
from harnessgit.errors import ConfigError

HUGE = "1" + "0" * 400  # a TOML integer no float can hold


@pytest.mark.parametrize(
    ("text", "message"),
    [
        # Strings are not numbers, floats not integers, booleans neither.
        ('[evaluator]\nbatch_size = "10"', "evaluator.batch_size: must be an integer, not '10'"),
        ("[evaluator]\nbatch_size = 10.0", "evaluator.batch_size: must be an integer, not 10.0"),
        ("[evaluator]\nbatch_size = true", "evaluator.batch_size: must be an integer, not True"),
        ('[gate]\nalpha = "0.05"', "gate.alpha: must be a number, not '0.05'"),
        ("[gate]\nalpha = false", "gate.alpha: must be a number, not False"),
        ('[gate]\nseed = "0"', "gate.seed: must be an integer, not '0'"),
        # Numbers are finite: infinity meant "no timeout", NaN passes no comparison.
        ("[evaluator]\ntimeout = 1e400", "evaluator.timeout: must be a finite number, not inf"),
        ("[evaluator]\ntimeout = inf", "evaluator.timeout: must be a finite number, not inf"),
        ("[evaluator]\ntimeout = +inf", "evaluator.timeout: must be a finite number, not inf"),
        ("[gate]\nmin_effect = nan", "gate.min_effect: must be a finite number, not nan"),
        ("[gate]\nalpha = -inf", "gate.alpha: must be a finite number, not -inf"),
        (
            f"[evaluator]\ntimeout = {HUGE}",
            "evaluator.timeout: must be a finite number, not an integer beyond 1.8e308",
        ),
        (
            '[proposer]\nkind = "openai"\nmodel = "m"\nprice_per_1k_input = inf',
            "proposer.price_per_1k_input: must be a finite number, not inf",
        ),
        ('[proposer]\ntimeout = "60"', "proposer.timeout: must be a number, not '60'"),
        # The split manifest is a file of the repository.
        (
            '[splits]\nmanifest = "/etc/passwd"',
            "splits.manifest: '/etc/passwd' is not a path inside the repository",
        ),
        ('[splits]\nmanifest = "../splits.json"', "splits.manifest: '../splits.json' is not a path inside"),
        ('[splits]\nmanifest = "data/../../x.json"', "splits.manifest: 'data/../../x.json' is not a path"),
        ('[splits]\nmanifest = ""', "splits.manifest: '' is not a path inside the repository"),
    ],
)
def test_values_are_never_coerced(text: str, message: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_config(text.encode())
    assert str(info.value).startswith(f"harnessgit.toml: {message}")
    assert "\n" not in str(info.value) and len(str(info.value)) < 200


def test_what_is_typed_right_is_read() -> None:
    config = parse_config(
        b"[evaluator]\ntimeout = 30\nbatch_size = 5\n[gate]\nalpha = 0.1\n"
        b'[splits]\nmanifest = "data/splits.json"\n'
    )
    assert config.evaluator.timeout == 30.0 and isinstance(config.evaluator.timeout, float)
    assert config.evaluator.batch_size == 5 and config.gate.alpha == 0.1
    assert config.splits.manifest == "data/splits.json"


def test_a_config_file_linked_out_of_the_repository_is_refused(tmp_path: Path) -> None:
    # A cloned repository's harnessgit.toml -> /dev/zero ran `harnessgit status` (and the
    # pre-commit hook) out of memory (not tried here: without the fix it would take the
    # machine's memory); -> ../private.toml read a file outside the repository.
    root = tmp_path / "repo"
    root.mkdir()
    private = tmp_path / "private.toml"
    private.write_text('[harness]\npaths = ["SKILL.md"]\n')
    (root / "harnessgit.toml").symlink_to(Path("..", "private.toml"))
    for load in (load_config, load_check_config):
        with pytest.raises(ConfigError) as info:
            load(root)
        assert str(info.value) == (
            f"harnessgit.toml leads out of the repository through a symbolic link (to {private})"
        )


def test_a_config_file_linked_inside_the_repository_is_read(tmp_path: Path) -> None:
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "harnessgit.toml").write_text('[harness]\npaths = ["SKILL.md"]\n')
    (tmp_path / "harnessgit.toml").symlink_to(Path("config", "harnessgit.toml"))
    assert load_config(tmp_path).harness.paths == ["SKILL.md"]
