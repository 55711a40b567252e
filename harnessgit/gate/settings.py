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
from harnessgit.evaluation.splits import Manifest, ManifestError, parse_manifest
from harnessgit.store import Store

log = logging.getLogger("harnessgit")


@dataclass(frozen=True)
class Settings:
    commit: str  # whose harnessgit.toml and manifest these are
    config: Config
    manifest: Manifest


def committed_settings(store: Store, commit: str, *, what: str = "the base") -> Settings:
    """harnessgit.toml and the manifest it names, as ``commit`` holds them."""
    tree = store.commit_info(commit).tree
    raw = store.file_at(tree, CONFIG_FILE)
    if raw is None:
        raise ConfigError(
            f"{what} ({commit[:12]}) has no {CONFIG_FILE}: decisions read it from the commit, "
            "so commit it first"
        )
    config = parse_config(raw)
    listed = store.file_at(tree, config.splits.manifest)
    if listed is None:
        raise ManifestError(
            f"{what} ({commit[:12]}) has no split manifest {config.splits.manifest}: decisions read "
            "it from the commit, so commit it first"
        )
    return Settings(commit, config, parse_manifest(listed, config.splits.manifest))


def warn_ignored(store: Store, settings: Settings, where: str) -> list[str]:
    """The files whose working-tree version differs from the one ``settings`` read
    (harnessgit.toml, the manifest), each named in one warning; the list is returned."""
    tree = store.commit_info(settings.commit).tree
    ignored = []
    for path in (CONFIG_FILE, settings.config.splits.manifest):
        on_disk = store.root / path
        committed = store.file_at(tree, path)
        current = on_disk.read_bytes() if on_disk.is_file() else None
        if current != committed:
            ignored.append(path)
    if ignored:
        log.warning(
            "%s: the working tree's %s differ%s from %s's and %s ignored: decisions read the committed %s",
            where,
            " and ".join(ignored),
            "s" if len(ignored) == 1 else "",
            settings.commit[:12],
            "is" if len(ignored) == 1 else "are",
            "file" if len(ignored) == 1 else "files",
        )
    return ignored
