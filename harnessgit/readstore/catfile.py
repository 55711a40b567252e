"""Reading git objects: a persistent ``git cat-file --batch`` process (the formats
themselves are `harnessgit.objects`).

Reads go through one long-lived cat-file process; bulk reads are pipelined (a
writer thread feeds object ids while the caller consumes and parses objects), so
git inflates objects on one core while Python parses on the other.
"""

from __future__ import annotations

try:
    import fcntl
except ImportError:  # not on Windows
    fcntl = None  # type: ignore[assignment]

import contextlib
import subprocess
import threading
from collections.abc import Iterator

from harnessgit.errors import HarnessgitError
from harnessgit.readstore.git import Git

# A wide pipe lets git inflate objects well ahead of the reader during bulk
# reads, instead of stopping every 64 KiB (Linux's default pipe size).
_PIPE_BYTES = 1024 * 1024
_F_SETPIPE_SZ = 1031  # fcntl.F_SETPIPE_SZ, named in the fcntl module only from Python 3.10 on Linux


def _widen_pipe(proc: subprocess.Popen[bytes]) -> None:
    if fcntl is None:  # not on this platform: the default pipe size
        return
    try:
        assert proc.stdout is not None
        fcntl.fcntl(proc.stdout.fileno(), _F_SETPIPE_SZ, _PIPE_BYTES)
    except OSError:
        pass  # not Linux, or above /proc/sys/fs/pipe-max-size: the default pipe still works


class CatFile:
    """A persistent ``git cat-file --batch`` process."""

    def __init__(self, git: Git) -> None:
        self._git = git
        self._argv = git.argv(["cat-file", "--batch"])
        self._proc: subprocess.Popen[bytes] | None = None
        self._lock = threading.Lock()

    def _start(self) -> subprocess.Popen[bytes]:
        if self._proc is None or self._proc.poll() is not None:
            self._proc = self._git.start(self._argv, stderr=subprocess.DEVNULL, bufsize=_PIPE_BYTES)
            _widen_pipe(self._proc)
        return self._proc

    def close(self) -> None:
        if self._proc is not None:
            if self._proc.stdin:
                self._proc.stdin.close()
            self._proc.wait()
            if self._proc.stdout:
                self._proc.stdout.close()
            self._proc = None

    def read(self, sha: str) -> tuple[str, bytes] | None:
        """(type, content) of one object, or None when it does not exist."""
        found = self.lookup(sha)
        return (found[1], found[2]) if found else None

    def lookup(self, name: str) -> tuple[str, str, bytes] | None:
        """(id, type, content) of the object a full ref name or object id names, or None.

        A long-running cat-file re-reads loose refs and a changed packed-refs file
        on every lookup, so this sees other processes' ref updates; it saves a git
        process per ref read on the hot path of proposing and recording.
        """
        with self._lock:
            proc = self._start()
            assert proc.stdin and proc.stdout
            proc.stdin.write(name.encode("utf-8", "surrogateescape") + b"\n")
            proc.stdin.flush()
            return self._read_one(proc)

    def read_many(self, shas: list[str]) -> Iterator[tuple[str, str, bytes]]:
        """(sha, type, content) for each object, in order, pipelining the requests."""
        for sha, kind, _size, data in self.read_bounded(shas, None):
            assert data is not None
            yield sha, kind, data

    def read_bounded(
        self, shas: list[str], limit: int | None
    ) -> Iterator[tuple[str, str, int, bytes | None]]:
        """(sha, type, size, content) for each object, in order, pipelining the requests:
        the sizes and contents of one ``cat-file --batch``, no ``--batch-check`` first.
        An object over ``limit`` bytes (None: no limit) is read through in bounded chunks
        and dropped (content None), so memory stays bounded whatever the object."""
        with self._lock:
            proc = self._start()
            assert proc.stdin and proc.stdout
            stdin = proc.stdin
            request = b"".join(sha.encode("ascii") + b"\n" for sha in shas)
            failure: list[BaseException] = []

            def feed() -> None:
                try:
                    stdin.write(request)
                    stdin.flush()
                except BaseException as exc:  # surfaced in the reader below
                    failure.append(exc)

            writer = threading.Thread(target=feed, daemon=True)
            writer.start()
            done = 0
            try:
                for sha in shas:
                    found = self._read_entry(proc, limit)
                    if found is None:
                        raise HarnessgitError(f"object {sha} is missing from the repository")
                    done += 1
                    yield sha, found[1], found[2], found[3]
            finally:
                if done < len(shas) or failure:
                    # Unread answers are still in the pipe: this process is out of step.
                    self._kill()
                writer.join()

    def _kill(self) -> None:
        if self._proc is not None:
            self._proc.kill()
            self._proc.wait()
            for stream in (self._proc.stdin, self._proc.stdout):
                if stream:
                    with contextlib.suppress(OSError):
                        stream.close()
            self._proc = None

    @staticmethod
    def _read_one(proc: subprocess.Popen[bytes]) -> tuple[str, str, bytes] | None:
        found = CatFile._read_entry(proc, None)
        if found is None:
            return None
        assert found[3] is not None
        return found[0], found[1], found[3]

    @staticmethod
    def _read_entry(
        proc: subprocess.Popen[bytes], limit: int | None
    ) -> tuple[str, str, int, bytes | None] | None:
        assert proc.stdout
        header = proc.stdout.readline()
        if not header:
            raise HarnessgitError("git cat-file stopped unexpectedly")
        parts = header.split()
        if len(parts) >= 2 and parts[-1] in (b"missing", b"ambiguous"):
            return None
        if len(parts) != 3:
            raise HarnessgitError(f"unexpected git cat-file output: {header[:80]!r}")
        size = int(parts[2])
        sha, kind = parts[0].decode("ascii"), parts[1].decode("ascii")
        if limit is not None and size > limit:
            left = size + 1  # the content and its newline, read through and dropped
            while left > 0:
                chunk = proc.stdout.read(min(left, _PIPE_BYTES))
                if not chunk:
                    raise HarnessgitError("git cat-file stopped unexpectedly")
                left -= len(chunk)
            return sha, kind, size, None
        return sha, kind, size, proc.stdout.read(size + 1)[:size]
