"""Cache keys: what an evaluated harness is, and what evaluated it.

A result is keyed by (harness tree id, evaluator fingerprint, model, instance,
repeat). The harness tree id is the git tree id of a tree holding only the
harness files, so it is the same for a candidate, for the merge of that
candidate into main, and for a revert to identical text: none is evaluated twice.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping

from harnessgit import globs
from harnessgit.config import CONFIG_FILE, Config
from harnessgit.objects import TreeEntry, tree_id


def harness_files(files: Mapping[str, TreeEntry], config: Config) -> dict[str, TreeEntry]:
    return {path: entry for path, entry in files.items() if globs.matches(path, config.harness.paths)}


def harness_tree_id(files: Mapping[str, TreeEntry], config: Config) -> str:
    return tree_id({path: (e.mode, e.sha) for path, e in harness_files(files, config).items()})


def evaluator_files(files: Mapping[str, TreeEntry], config: Config) -> dict[str, TreeEntry]:
    """The files whose content is part of the fingerprint.

    Default: everything outside the harness, except harnessgit.toml and the split
    manifest (changing gate settings or adding train instances does not change
    what a score means for one instance).
    """
    if config.evaluator.files is not None:
        return {p: e for p, e in files.items() if globs.matches(p, config.evaluator.files)}
    skip = {CONFIG_FILE, config.splits.manifest}
    return {
        path: entry
        for path, entry in files.items()
        if path not in skip and not globs.matches(path, config.harness.paths)
    }


def evaluator_fingerprint(files: Mapping[str, TreeEntry], config: Config) -> str:
    payload = {
        "command": config.evaluator.command or [],
        "files": sorted((path, entry.sha) for path, entry in evaluator_files(files, config).items()),
    }
    canonical = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()
