"""What a decision reads: harnessgit.toml and the split manifest as committed.

The gate, `merge`, the frontier and `verify` decide from the base commit's settings,
never from the working tree: an uncommitted ``min_effect = -0.5`` must not let a
losing candidate through, and an uncommitted change to ``splits.json`` must not make
a fresh selection set and reset the error budget (issue 12). Working-tree changes to
those files are reported as ignored, so nobody wonders why an edit had no effect.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from harnessgit.config import CONFIG_FILE, Config, parse_config
from harnessgit.errors import ConfigError
from harnessgit.evaluation.context import ignored_edits_warning, uncommitted_evaluator
from harnessgit.evaluation.splits import Manifest, ManifestError, parse_manifest
from harnessgit.store import Objects, Store

log = logging.getLogger("harnessgit")


@dataclass(frozen=True)
class Settings:
    commit: str  # whose harnessgit.toml and manifest these are
    config: Config
    manifest: Manifest


def committed_settings(objects: Objects, commit: str, *, what: str = "the base") -> Settings:
    """harnessgit.toml and the manifest it names, as ``commit`` holds them."""
    tree = objects.commit_info(commit).tree
    raw = objects.file_at(tree, CONFIG_FILE)
    if raw is None:
        raise ConfigError(
            f"{what} ({commit[:12]}) has no {CONFIG_FILE}: decisions read it from the commit, "
            "so commit it first"
        )
    config = parse_config(raw)
    listed = objects.file_at(tree, config.splits.manifest)
    if listed is None:
        raise ManifestError(
            f"{what} ({commit[:12]}) has no split manifest {config.splits.manifest}: decisions read "
            "it from the commit, so commit it first"
        )
    return Settings(commit, config, parse_manifest(listed, config.splits.manifest))


def warn_ignored(store: Store, settings: Settings, where: str) -> list[str]:
    """The files whose working-tree version differs from the one a decision reads
    (harnessgit.toml, the manifest, the evaluator's files), named in one warning; the
    list is returned."""
    tree = store.objects.commit_info(settings.commit).tree
    ignored = []
    for path in (CONFIG_FILE, settings.config.splits.manifest):
        on_disk = store.root / path
        current = on_disk.read_bytes() if on_disk.is_file() else None
        if current != store.objects.file_at(tree, path):
            ignored.append(path)
    ignored += uncommitted_evaluator(store, settings.config, settings.commit)
    if ignored:
        why = "decisions read the committed settings and run the committed evaluator"
        log.warning("%s: %s", where, ignored_edits_warning(ignored, settings.commit, why))
    return ignored
