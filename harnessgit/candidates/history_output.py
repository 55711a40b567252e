"""The last history audit's output, for a repeat run over an unchanged repository.

`log --all-history` prints what the objects of the base branch's chain are under
harnessgit.toml's settings: a fact of the refs (which commits), the configuration file
(which rules and limits), harnessgit's version and the options. A repeat run whose key
is the same prints the text the last run printed without judging or sizing anything,
and without importing the checks, the store or the configuration's sections: what it
pays is Python and click, one `git rev-parse` (the repository's place) and a few file
reads (the refs from git's ref files, this file), through `harnessgit.readstore`
(docs/benchmarks.md, hist3). When a transaction journal or a ref lock is there, the
store opens first, as for any command (`readstore.inflight.settled`). Any other key
(a branch moved, a label made, harnessgit.toml edited) runs the audit, whose per-commit
cache (`history_cache`) then judges only the commits it has not judged.

The key covers every branch and label ref (so a move of any of them, the base or not,
only costs a run through the per-commit cache), the bytes of harnessgit.toml, the
version, the options, and the source the audit's verdicts, defaults and text come from
(`source_digest`: an edited rule is another output even before a release). It is not
used when tiktoken is installed: which tokenizer the checks count with is then known
only by loading it. ``<common git dir>/harnessgit/index/history-output`` holds one
output, sealed as the other derived files are (`readstore.derived.seal`: a JSON header
with the format, the key and the body's sha256, then the text); written by rename; a
file that does not check out is not used.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import stat
from pathlib import Path

import harnessgit
from harnessgit import layout
from harnessgit.canonical import sha256_canonical
from harnessgit.readstore import Repository
from harnessgit.readstore.derived import IndexUnreadable, derived_path, seal, unseal

# What the audit's verdicts, default settings and text come from, under harnessgit/.
AUDIT_SOURCES = ("candidates", "checkconfig", "checks", "check_rules.py", "fences.py", "render.py")
_PACKAGE = Path(harnessgit.__file__).parent
NAME = "history-output"
FORMAT = 1
CONFIG_FILE = "harnessgit.toml"  # harnessgit.checkconfig.reader's (not imported: see the module)
_CONFIG_MAX = 1 << 20  # a larger (or irregular) harnessgit.toml is left to the reader's checks


def output_key(store: Repository, *, base: str | None, limit: int | None, as_json: bool) -> str | None:
    """The key of the audit these options would print now; None when it cannot be
    known without running it (no regular harnessgit.toml, tiktoken installed)."""
    path = store.root / CONFIG_FILE
    try:
        info = os.lstat(path)
        if not stat.S_ISREG(info.st_mode) or info.st_size > _CONFIG_MAX:
            return None
        config = path.read_bytes()
    except OSError:
        return None
    if importlib.util.find_spec("tiktoken") is not None:
        return None
    refs = sorted(store.refs.listing("refs/heads", layout.LABELS).items())
    facts = [harnessgit.__version__, FORMAT, hashlib.sha256(config).hexdigest(), refs, base, limit, as_json]
    return sha256_canonical([*facts, source_digest(AUDIT_SOURCES)])


def source_digest(names: tuple[str, ...]) -> str:
    """A digest of the source of ``names`` (folders and modules of harnessgit) and
    of markdown-it-py's version (its ``__init__``, which names it): the parser whose
    structure the rules read. A millisecond or two: some forty files read."""
    digest = hashlib.sha256()
    for name in names:
        found = _PACKAGE / name
        for path in sorted(found.rglob("*.py")) if found.is_dir() else [found]:
            digest.update(path.relative_to(_PACKAGE).as_posix().encode() + b"\0")
            digest.update(path.read_bytes() + b"\0")
    parser = importlib.util.find_spec("markdown_it")
    if parser is not None and parser.origin is not None:
        digest.update(Path(parser.origin).read_bytes())
    return digest.hexdigest()


def read_output(common_dir: Path, key: str) -> str | None:
    """The text printed under ``key`` by the last run, or None."""
    try:
        data = derived_path(common_dir, NAME).read_bytes()
        header, start = unseal(data, FORMAT)
        if header.get("key") != key:
            return None
        return data[start:].decode("utf-8", "surrogatepass")
    except (OSError, ValueError, IndexUnreadable):
        return None  # missing or damaged: the audit runs


def sealed_output(key: str, text: str) -> bytes:
    """The file that keeps ``text`` under ``key`` (`store.index.save_derived` writes it)."""
    body = text.encode("utf-8", "surrogatepass")  # a path git gave as bytes
    return seal({"format": FORMAT, "key": key}, body)
