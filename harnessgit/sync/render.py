"""The text `harnessgit sync` prints."""

from __future__ import annotations

from harnessgit.render import listing, plural
from harnessgit.sync.sync import SyncResult


def sync_text(result: SyncResult) -> str:
    if not result.here and not result.pushed:
        lines = [f"in sync with {result.remote}: nothing to fetch or push"]
    else:
        lines = [
            f"synced with {result.remote}: {plural(len(result.here), 'ref')} updated here, "
            f"{plural(len(result.pushed), 'ref')} pushed"
        ]
    if result.retired:
        lines.append(f"retired everywhere (archived on one side): {listing(result.retired, 5)}")
    if result.rounds > 1:
        lines.append(f"{result.remote} or a ref here moved during the sync: {result.rounds} rounds")
    lines += [f"note: {conflict}" for conflict in result.conflicts]
    return "\n".join(lines)
