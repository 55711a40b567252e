"""The history audit's verdict cache: each file version judged once, across runs.

The rules that read one version of a file alone (length, format, duplication:
`RuleSpec.cached`) give a verdict that depends only on the version's text, its path,
its kind with the limits its overrides set, the tokenizer, the ``[checks]`` settings
and harnessgit's own rules. `checks.verdicts` keys each verdict by the first five
(`verdict_key`: the text by its digest, as git names a blob by its bytes); this file
keeps the verdicts of one fingerprint of the last two, so that an audit after the
per-commit cache (`history_cache`) no longer holds (a label moved, a branch was
rewritten, a commit is new) judges only the versions it has not seen. The change rules
(growth, collapse, edit size) read a pair of versions and, for collapse, the change's
other files: those are kept per commit, by `history_cache`.

The fingerprint: harnessgit's version, this format, every ``[checks]`` setting, the
markdown-it-py version (the structure the rules read) and a digest of the rules' source
(`harnessgit/checks/`, `check_rules.py`, `fences.py`): an edited rule is a new
fingerprint even before a release. Another fingerprint is another file's worth: the
file is replaced, never mixed.

Derived, like the notes indexes (docs/design.md, "Reading fast"):
``<common git dir>/harnessgit/index/check-verdicts``, sealed as the others are
(`store.index_file.seal`: a JSON header with the format, the fingerprint and the
body's sha256, then one JSON object of key -> findings); written by rename, after
merging what a concurrent audit of the same fingerprint saved meanwhile. A file that
does not check out is rebuilt by the run, with one warning; `doctor` finds it too.
Never a source of truth: deleting it costs one slower run.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator, MutableMapping
from dataclasses import asdict
from importlib import metadata
from typing import Any

import harnessgit
from harnessgit.candidates.history_output import source_digest
from harnessgit.canonical import sha256_canonical
from harnessgit.check_findings import Finding
from harnessgit.config import Config
from harnessgit.store import Store
from harnessgit.store.index import index_path, save_derived
from harnessgit.store.index_file import IndexUnreadable, seal, unseal

NAME = "check-verdicts"
FORMAT = 1
_RULE_SOURCES = ("checks", "check_rules.py", "fences.py")  # under harnessgit/
log = logging.getLogger("harnessgit")


def rules_digest() -> str:
    """A digest of the source of every module the rules' verdicts come from."""
    return source_digest(_RULE_SOURCES)


def fingerprint(config: Config) -> str:
    """What a kept verdict depends on besides what `checks.verdicts.verdict_key` names."""
    try:
        parser = metadata.version("markdown-it-py")
    except metadata.PackageNotFoundError:
        parser = "unknown"
    facts = [harnessgit.__version__, FORMAT, repr(config.checks), parser, rules_digest()]
    return sha256_canonical(facts)


class Verdicts(MutableMapping[str, list[Finding]]):
    """The kept verdicts of one fingerprint, to hand to `checks.verdicts.keep_verdicts`:
    the file is read when a verdict is first asked for (an audit whose commits are all
    in the per-commit cache asks for none); `save` writes it when the run added some."""

    def __init__(self, store: Store, key: str) -> None:
        self.store, self.key = store, key
        self._verdicts: dict[str, list[Finding]] | None = None
        self._read = 0

    @property
    def verdicts(self) -> dict[str, list[Finding]]:
        if self._verdicts is None:
            self._verdicts = _load(self.store, self.key, warn=True)
            self._read = len(self._verdicts)
        return self._verdicts

    def __getitem__(self, key: str) -> list[Finding]:
        return self.verdicts[key]

    def __setitem__(self, key: str, found: list[Finding]) -> None:
        self.verdicts[key] = found

    def __delitem__(self, key: str) -> None:
        del self.verdicts[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.verdicts)

    def __len__(self) -> int:
        return len(self.verdicts)

    def save(self) -> None:
        if self._verdicts is None or len(self._verdicts) == self._read:
            return
        merged = {**_load(self.store, self.key, warn=False), **self._verdicts}  # a concurrent audit's too
        body = json.dumps(
            {key: [asdict(f) for f in found] for key, found in sorted(merged.items())},
            separators=(",", ":"),
        ).encode("utf-8", "surrogatepass")
        save_derived(self.store, NAME, seal({"format": FORMAT, "fingerprint": self.key}, body))


def check_file(store: Store) -> str | None:
    """For `doctor`: what is wrong with the file (None: missing, or it reads back)."""
    path = index_path(store, NAME)
    if not path.exists():
        return None
    try:
        _read(path.read_bytes())
    except (OSError, IndexUnreadable) as exc:
        return f"the history audit's verdict cache cannot be used: {exc}"
    return None


def _load(store: Store, key: str, *, warn: bool) -> dict[str, list[Finding]]:
    path = index_path(store, NAME)
    try:
        data = path.read_bytes()
    except OSError:
        return {}  # none yet (or unreadable: rebuilt, and saved if it can be)
    try:
        header, verdicts = _read(data)
    except IndexUnreadable as exc:
        if warn and not _other_format(data):  # another version's file is replaced quietly
            log.warning("%s: %s; rebuilt by this run", path, exc)
        return {}
    return verdicts if header.get("fingerprint") == key else {}


def _other_format(data: bytes) -> bool:
    try:
        header = json.loads(data.partition(b"\n")[0])
    except ValueError:
        return False
    return isinstance(header, dict) and header.get("format") not in (None, FORMAT)


def _read(data: bytes) -> tuple[dict[str, Any], dict[str, list[Finding]]]:
    header, start = unseal(data, FORMAT)
    try:
        body = json.loads(data[start:].decode("utf-8", "surrogatepass"))
        return header, {str(key): [Finding(**f) for f in found] for key, found in body.items()}
    except (ValueError, TypeError, AttributeError) as exc:
        raise IndexUnreadable(f"its body does not read back ({exc.__class__.__name__})") from None
