"""The files a review shows: the patch's files with their sizes, each marked a harness
or an evaluator file, and a harness file's characters and tokens on each side (as the
checks count them). Read from the store; `review.diff` parses the patch."""

from __future__ import annotations

import dataclasses

from harnessgit import globs
from harnessgit.checks import Content
from harnessgit.checks.tokens import Tokenizer
from harnessgit.config import Config
from harnessgit.evaluation.fingerprint import evaluator_files
from harnessgit.review.diff import FileDiff, parse_patch
from harnessgit.store import Store


def changed_files(
    store: Store, config: Config, deciding: Config, base: str, head: str, tokenizer: Tokenizer
) -> list[FileDiff]:
    """The files of the patch with their sizes, each marked a harness file (under the
    working tree's [harness] paths, as `check` reads them) or, outside the harness, one
    of the evaluator's files at either side (under the settings the gate reads); a
    harness file with its characters and tokens on each side (`_measured`)."""
    files = parse_patch(store.history.diff_patch(base, head))
    graders = {
        path for side in (base, head) for path in evaluator_files(store.objects.files_at(side), deciding)
    }
    sizes_of: dict[str, tuple[str | None, str | None]] = {}
    for change in store.history.diff_raw(base, head):
        sizes_of[change.path] = (
            change.old.sha if change.old else None,
            change.new.sha if change.new else None,
        )
    sizes = store.objects.object_sizes([sha for pair in sizes_of.values() for sha in pair if sha])
    found = []
    for item in files:
        old, new = sizes_of.get(item.path, (None, None))
        found.append(
            dataclasses.replace(
                item,
                size_before=sizes.get(old) if old else None,
                size_after=sizes.get(new) if new else None,
                harness=globs.matches(item.path, config.harness.paths),
                evaluator=item.path in graders or item.old_path in graders,
            )
        )
    limit = config.checks.max_file_bytes
    harness = {
        sha
        for item in found
        if item.harness
        for sha in sizes_of.get(item.path, ())
        if sha and sizes.get(sha, 0) <= limit
    }
    return _measured(store, config, found, sizes_of, harness, tokenizer)


def _measured(
    store: Store,
    config: Config,
    files: list[FileDiff],
    blobs: dict[str, tuple[str | None, str | None]],
    harness: set[str],
    tokenizer: Tokenizer,
) -> list[FileDiff]:
    """Each harness file with its characters and tokens before and after, as the checks
    count them (blobs over [checks] max_file_bytes, or not UTF-8 text, are not read)."""
    limit = config.checks.max_file_bytes
    texts = {
        sha: Content.from_bytes(data, max_bytes=limit).text
        for sha, data in store.objects.read_blobs(sorted(harness)).items()
    }

    def measure(sha: str | None) -> tuple[int | None, int | None]:
        text = texts.get(sha) if sha else None
        return (None, None) if text is None else (len(text), tokenizer.count(text))

    measured = []
    for item in files:
        if not item.harness:
            measured.append(item)
            continue
        old, new = blobs.get(item.path, (None, None))
        (chars_before, tokens_before), (chars_after, tokens_after) = measure(old), measure(new)
        measured.append(
            dataclasses.replace(
                item,
                chars_before=chars_before,
                chars_after=chars_after,
                tokens_before=tokens_before,
                tokens_after=tokens_after,
            )
        )
    return measured
