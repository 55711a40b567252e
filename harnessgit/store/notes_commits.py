"""The commits a transaction writes on a notes ref and on the evidence store, and the
note texts they read back (`Store.refs.commit` writes them; `Store.notes` reads them)."""

from __future__ import annotations

from harnessgit.store.objectdb import Objects
from harnessgit.store.trees import Blob, find_note, note_path

# Note texts kept: at most this many, and about this many bytes.
_NOTE_TEXTS = 256
_NOTE_TEXT_BYTES = 16 * 1024 * 1024


class NoteTexts:
    """Note blob -> text (blobs never change): a note is read back at every append to it."""

    def __init__(self, objects: Objects) -> None:
        self.objects = objects
        self._texts: dict[str, bytes] = {}

    def text(self, blob: str) -> bytes:
        text = self._texts.get(blob)
        if text is None:
            text = self.objects.read_blob(blob)
            self.remember(blob, text)
        return text

    def remember(self, blob: str, text: bytes) -> None:
        if len(text) > _NOTE_TEXT_BYTES // 8:
            return  # a very large note is read again when needed
        if len(self._texts) >= _NOTE_TEXTS or sum(map(len, self._texts.values())) > _NOTE_TEXT_BYTES:
            self._texts.clear()
        self._texts[blob] = text


def notes_commit(texts: NoteTexts, tip: str | None, appends: dict[str, list[bytes]], reason: str) -> str:
    """The notes commit on ``tip`` with ``appends`` (annotated object -> record lines)
    added after each note's text."""
    objects = texts.objects
    root = objects.commit_info(tip).tree if tip else None
    changes: dict[str, Blob | None] = {}
    for target, lines in appends.items():
        found = find_note(objects.read_tree, root, target) if root else None
        content = b""
        path = note_path(target)
        if found:
            path, blob = found
            content = texts.text(blob)
            if content and not content.endswith(b"\n"):
                content += b"\n"
        content += b"".join(line + b"\n" for line in lines)
        blob = objects.write_blob(content)
        texts.remember(blob, content)  # the next append to it reads it back
        changes[path] = Blob(blob)
    tree = objects.edit_tree(root, changes)
    return objects.write_commit(tree, [tip] if tip else [], f"harnessgit: {reason}")


def keep_commit(objects: Objects, tip: str | None, blobs: set[str]) -> str:
    """The evidence store's commit on ``tip`` with ``blobs`` added (parentless: only its tree matters)."""
    root = objects.commit_info(tip).tree if tip else None
    tree = objects.edit_tree(root, {note_path(blob): Blob(blob) for blob in blobs})
    return objects.write_commit(tree, [], "harnessgit evidence store: keeps evidence blobs reachable")


def joined(note: bytes, lines: list[bytes]) -> bytes:
    """A note's text with staged record lines after it."""
    if note and not note.endswith(b"\n"):
        note += b"\n"
    return note + b"".join(line + b"\n" for line in lines)
