"""The one error hierarchy of harnessgit, and the exit codes of DESIGN.md.

Every failure a user can cause or fix is a `HarnessgitError` with a message that
fits on one line; the CLI prints it and exits 3. Nothing here imports harnessgit.
"""

from __future__ import annotations

EXIT_OK = 0
EXIT_NO = 1  # an expected "no": gate failed, check failed, verify found problems
EXIT_USAGE = 2
EXIT_ERROR = 3
EXIT_INCONCLUSIVE = 4  # the gate (or merge) could not tell: neither pass nor fail
EXIT_INTERRUPTED = 130


def verdict_exit(verdict: str) -> int:
    """The exit code of a gate verdict: pass 0, fail 1, inconclusive 4."""
    return {"pass": EXIT_OK, "inconclusive": EXIT_INCONCLUSIVE}.get(verdict, EXIT_NO)


class HarnessgitError(Exception):
    """A failure with a message a user can act on."""

    exit_code = EXIT_ERROR
    label = "error"  # the CLI prints "harnessgit: <label>: <message>"


class GateRefused(HarnessgitError):
    """The gate will not compare: a precondition fails (the candidate does not descend
    from the base tip, is merged already, changes the grader, fails the checks, or the
    selection set is too small). An expected "no", decided before anything is
    evaluated or recorded: no gate attempt is spent."""

    exit_code = EXIT_NO
    label = "refused"


class NotARepository(HarnessgitError):
    pass


class UnknownRevision(HarnessgitError):
    pass


class InvalidName(HarnessgitError):
    """A user-supplied name that is not safe to hand to git."""


class ConfigError(HarnessgitError):
    pass


class ProposalError(HarnessgitError):
    pass


class CarryConflict(ProposalError):
    """An edit that cannot be carried onto another commit: ``paths`` are the harness
    files whose three-way merge failed."""

    def __init__(self, message: str, paths: list[str]) -> None:
        super().__init__(message)
        self.paths = paths


class ProposerFailed(HarnessgitError):
    """A proposer could not produce an answer at all: unreachable or failing
    endpoint after its retries, a rejected API key, a proposer command that
    crashed or timed out. A bad answer is not this: it is a RejectedProposal."""


class RecordError(HarnessgitError):
    """A record or evidence file that does not parse."""


class ConcurrentUpdate(HarnessgitError):
    """Another process moved a ref this operation required to be unchanged."""


class GitFailed(HarnessgitError):
    """git itself failed in a way harnessgit did not anticipate."""

    def __init__(self, args: list[str], returncode: int, stderr: str) -> None:
        self.git_args = args
        self.returncode = returncode
        self.stderr = stderr
        last = stderr.strip().splitlines()[-1] if stderr.strip() else f"exit {returncode}"
        super().__init__(f"git {args[0] if args else ''} failed: {last}")
