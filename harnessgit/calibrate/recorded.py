"""The calibration on record: the newest for an evaluator, model and selection set.

Apart from calibrate.py so that `gate`, which prints one line about it, does not import
the calibration run (its noise model, evaluator batches and request types) to find it.
"""

from __future__ import annotations

from harnessgit import layout
from harnessgit.records import CalibrationRecord, live
from harnessgit.store import Store


def latest(store: Store, *, fingerprint: str, model: str, split_hash: str) -> CalibrationRecord | None:
    """The newest calibration of this evaluator and model on this selection set."""
    found = [
        record
        for records in store.notes.records(layout.NOTES_CALIBRATION).values()
        for record in live(records)
        if isinstance(record, CalibrationRecord)
        and (record.fingerprint, record.model, record.split_hash) == (fingerprint, model, split_hash)
    ]
    return max(found, key=lambda r: r.ts, default=None)
