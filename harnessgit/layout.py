"""Where harnessgit keeps things in the user's repository (docs/design.md, "Git layout").

Always fully qualified: ``git notes --ref X`` silently prefixes ``refs/notes/``.
"""

from __future__ import annotations

CANDIDATES = "refs/heads/harnessgit/cand/"
ARCHIVE = "refs/harnessgit/archive/"
LABELS = "refs/harnessgit/labels/"

NOTES_EVALS = "refs/notes/harnessgit/evals"
NOTES_EVIDENCE = "refs/notes/harnessgit/evidence"
NOTES_GATE = "refs/notes/harnessgit/gate"
NOTES_LABELS = "refs/notes/harnessgit/labels"  # the audit trail of label moves
NOTES_MODELS = "refs/notes/harnessgit/models"  # model checkpoints and their parents (issue 19)
NOTES_CALIBRATION = "refs/notes/harnessgit/calibration"  # A/A calibrations (`harnessgit calibrate`)

# A trailer on every candidate commit, so `git log` alone tells which candidate it is.
CANDIDATE_TRAILER = "Harnessgit-Candidate"


def candidate_ref(candidate: str) -> str:
    return CANDIDATES + candidate


def archive_ref(candidate: str) -> str:
    return ARCHIVE + candidate


def branch_ref(branch: str) -> str:
    return "refs/heads/" + branch
