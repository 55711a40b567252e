"""Cache keys: what an evaluated harness is, and what evaluated it.

A result is keyed by (harness tree id, evaluator fingerprint, model, instance,
repeat). The harness tree id is the git tree id of a tree holding only the
harness files, so it is the same for a candidate, for the merge of that
candidate into main, and for a revert to identical text: none is evaluated twice.
"""

from __future__ import annotations

from collections.abc import Mapping

from harnessgit import globs
from harnessgit.canonical import sha256_canonical
from harnessgit.config import CONFIG_FILE, Config
from harnessgit.object_ids import tree_id
from harnessgit.objects import TreeEntry
from harnessgit.processes.functions import top_level


def harness_files(files: Mapping[str, TreeEntry], config: Config) -> dict[str, TreeEntry]:
    return {path: entry for path, entry in files.items() if globs.matches(path, config.harness.paths)}


def harness_tree_id(files: Mapping[str, TreeEntry], config: Config) -> str:
    return tree_id({path: (e.mode, e.sha) for path, e in harness_files(files, config).items()})


def evaluator_files(files: Mapping[str, TreeEntry], config: Config) -> dict[str, TreeEntry]:
    """The files whose content is part of the fingerprint: ``[evaluator] files`` when
    set; else the files the evaluator command names (``python3 eval.py`` -> eval.py; a
    directory named -> every file under it), so that a README, docs or CI commit
    changes neither the fingerprint nor the cache (issue 12); else, when the command
    names no file of the repository (``make eval``), everything outside the harness,
    harnessgit.toml and the split manifest, as what the evaluator reads is unknown.
    An in-process ``python`` or ``adapter`` evaluator: its package's files. Neither a command nor
    ``files``: no evaluator, so none of its files (issue 20: a skill's prompts beside its
    SKILL.md are not a grader's, and editing them is no regrade); setting an evaluator
    later changes the fingerprint anyway.
    """
    if config.evaluator.files is not None:
        return {p: e for p, e in files.items() if globs.matches(p, config.evaluator.files)}
    if config.evaluator.in_process:
        return python_files(files, config.evaluator.in_process)
    if not config.evaluator.command:
        return {}
    named = command_files(files, config.evaluator.command or [])
    if named:
        return named
    skip = {CONFIG_FILE, config.splits.manifest}
    return {
        path: entry
        for path, entry in files.items()
        if path not in skip and not globs.matches(path, config.harness.paths)
    }


def command_files(files: Mapping[str, TreeEntry], argv: list[str]) -> dict[str, TreeEntry]:
    """The files of ``files`` that an argv names: a path of a file, or of a folder."""
    found: dict[str, TreeEntry] = {}
    for argument in argv:
        path = argument.removeprefix("./").rstrip("/")
        if not path or path.startswith(("-", "/")):
            continue
        found.update({p: e for p, e in files.items() if p == path or p.startswith(path + "/")})
    return found


def python_files(files: Mapping[str, TreeEntry], spec: str) -> dict[str, TreeEntry]:
    """The files of a ``package.module:function`` evaluator: its whole top-level package
    (``package/**``, so a helper module beside it counts), or ``package.py``."""
    top = top_level(spec)
    return {p: e for p, e in files.items() if p == f"{top}.py" or p.startswith(f"{top}/")}


def evaluator_fingerprint(files: Mapping[str, TreeEntry], config: Config) -> str:
    payload: dict[str, object] = {
        "command": config.evaluator.command or [],
        "files": sorted((path, entry.sha) for path, entry in evaluator_files(files, config).items()),
    }
    if config.evaluator.python:  # only then: command evaluators keep the fingerprints on record
        payload["python"] = config.evaluator.python
    if config.evaluator.adapter:  # the adapter and which file each component reads
        payload["adapter"] = config.evaluator.adapter
        payload["components"] = config.evaluator.components
    return sha256_canonical(payload)
