"""One ``git update-ref --stdin`` process for many transactions.

A transaction through a new ``git update-ref`` costs a process start (5-15 ms on a
loaded 2-core machine, issue 13), and an evolve iteration writes several. git runs
any number of ``start`` ... ``prepare`` / ``commit`` transactions in one ``--stdin``
session (git >= 2.28), each all or nothing, answering ``start: ok``, ``prepare: ok``,
``commit: ok``; any error ends the session with git's usual message and status, and
input cut short aborts the open transaction. So a failed transaction reads exactly
as a one-shot ``update-ref`` would, and the next one starts a new session.

The reflog message is per session: only transactions whose reason is also in the
commits they write (notes, pins, the evidence store: `Refs.commit`) come here;
branch and label moves keep their own ``-m`` reason.
"""

from __future__ import annotations

import contextlib
import subprocess

from harnessgit.readstore.git import Git, Result

MESSAGE = "harnessgit: records (the reason is in each notes commit's message)"


class RefSession:
    def __init__(self, git: Git) -> None:
        self.git = git
        self.argv = git.argv(["update-ref", "-m", MESSAGE, "--stdin"])
        self._proc: subprocess.Popen[bytes] | None = None

    def run(self, lines: list[str]) -> Result:
        """One transaction: ``lines`` from ``start`` to ``commit``."""
        proc = self._start()
        assert proc.stdin and proc.stdout and proc.stderr
        expected = sum(1 for line in lines if line in ("start", "prepare", "commit"))
        answers: list[bytes] = []
        try:
            proc.stdin.write(("\n".join(lines) + "\n").encode())
            proc.stdin.flush()
            while len(answers) < expected:
                line = proc.stdout.readline()
                if not line:
                    break
                answers.append(line)
        except BrokenPipeError:
            pass
        except BaseException:  # an interrupt mid-transaction: git aborts what was not committed
            self.close()
            raise
        stdout = b"".join(answers)
        if len(answers) == expected:
            return Result(0, stdout, "")
        # The session ended: git said why on stderr and exited, as a one-shot would.
        self._proc = None
        with contextlib.suppress(OSError):
            proc.stdin.close()
        stderr = proc.stderr.read().decode("utf-8", "replace")
        return Result(proc.wait(), stdout, stderr)

    def _start(self) -> subprocess.Popen[bytes]:
        if self._proc is None or self._proc.poll() is not None:
            self._proc = self.git.start(self.argv, stderr=subprocess.PIPE)
        return self._proc

    def close(self) -> None:
        """End the session (an open transaction is aborted by git)."""
        proc, self._proc = self._proc, None
        if proc is None:
            return
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
