"""The split manifest: which instances train, select and test.

``{"train": [...], "selection": [...], "test": [...]}``: lists of unique instance
ids, disjoint across splits. The train split produces experience, the selection
split decides (frontier, gate), the test split is reported and never decides
(SkillOpt's discipline, arXiv 2605.23904).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TypedDict

from harnessgit.canonical import sha256_canonical
from harnessgit.confine import check_relative, leads_out
from harnessgit.errors import HarnessgitError

SPLITS = ("train", "selection", "test")
MAX_ID_LENGTH = 512


class ManifestError(HarnessgitError):
    pass


class SplitFields(TypedDict):
    """A split as the records scored on it spell it: its name, its instance set's hash
    (`Manifest.split_hash`) and the whole manifest's."""

    split: str
    split_hash: str
    manifest: str


@dataclass(frozen=True)
class Manifest:
    splits: dict[str, list[str]]
    hash: str  # of the whole manifest, order of ids ignored

    def ids(self, split: str) -> list[str]:
        if split not in self.splits:
            known = ", ".join(sorted(self.splits)) or "none"
            raise ManifestError(f"unknown split {split!r} (the manifest has: {known})")
        return self.splits[split]

    def split_hash(self, split: str) -> str:
        """Identifies one split's instance set: what makes selection scores comparable.

        Editing the train split must not look like a fresh selection set (that would
        reset the gate's alpha spending), so comparability uses this, not `hash`.
        """
        return sha256_canonical({split: sorted(self.ids(split))})

    def fields(self, split: str) -> SplitFields:
        """``split`` for a record scored on it: ``EvalRecord(**manifest.fields(split), ...)``."""
        return SplitFields(split=split, split_hash=self.split_hash(split), manifest=self.hash)


def parse_manifest(data: bytes, name: str = "manifest") -> Manifest:
    try:
        raw = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise ManifestError(f"{name} is not valid JSON: {exc}") from None
    except RecursionError:  # a hostile repository's 100,000-deep array (issue 28)
        raise ManifestError(f"{name} nests arrays or objects too deeply to read") from None
    if not isinstance(raw, dict):
        raise ManifestError(f"{name} must be a JSON object of split name -> list of instance ids")
    splits: dict[str, list[str]] = {}
    owner: dict[str, str] = {}
    for split, ids in raw.items():
        if not isinstance(ids, list):
            raise ManifestError(f"{name}: split {split!r} must be a list of instance ids")
        seen: set[str] = set()
        for value in ids:
            if not isinstance(value, str) or not value or len(value) > MAX_ID_LENGTH:
                raise ManifestError(f"{name}: split {split!r} has an invalid instance id {value!r}")
            if any(char in value for char in "\n\r\0"):
                raise ManifestError(f"{name}: instance id {value!r} contains a line break")
            if value in seen:
                raise ManifestError(f"{name}: instance {value!r} appears twice in split {split!r}")
            if value in owner:
                raise ManifestError(
                    f"{name}: instance {value!r} is in both {owner[value]!r} and {split!r}: "
                    "splits must be disjoint"
                )
            seen.add(value)
            owner[value] = split
        splits[split] = list(ids)
    return Manifest(splits, sha256_canonical({split: sorted(ids) for split, ids in splits.items()}))


def load_manifest(root: Path, relative: str) -> Manifest:
    """The working tree's manifest, which must be a file of the repository: a path
    outside it (``/etc/passwd``, ``../x.json``) or a link leading out of it
    (``splits.json -> ~/other/splits.json``) would let a cloned repository's
    configuration read any file (issue 15, defect 14)."""
    try:
        check_relative(relative)
    except ValueError as exc:
        raise ManifestError(f"split manifest: {exc} ([splits] manifest in harnessgit.toml)") from None
    path = root / relative
    target = leads_out(root, path)
    if target is not None:
        raise ManifestError(
            f"split manifest {relative} leads out of the repository through a symbolic link "
            f"(to {target}): keep the manifest inside the repository"
        )
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise ManifestError(
            f"split manifest {relative} not found ([splits] manifest in harnessgit.toml)"
        ) from None
    except OSError as exc:
        raise ManifestError(f"cannot read split manifest {relative}: {exc.strerror}") from None
    return parse_manifest(data, relative)
