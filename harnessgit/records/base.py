"""The base of every record: the numbers a record may hold, the fields all share, the
models' settings, and where a record says it was made."""

from __future__ import annotations

import os
import socket
import uuid
from datetime import datetime, timezone
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, field_serializer

SCHEMA_VERSION = 1

# What the numbers in a record can be; every float must be finite as well (the models'
# allow_inf_nan=False): a NaN score read from a note once crashed the gate (issue 15).
Score = Annotated[float, Field(ge=0, le=1)]  # a score, or a mean of scores
Difference = Annotated[float, Field(ge=-1, le=1)]  # between two scores or means
Probability = Annotated[float, Field(ge=0, le=1)]
Level = Annotated[float, Field(gt=0, lt=1)]  # alpha, alpha_k and the alpha spent
Count = Annotated[int, Field(ge=0)]
Seconds = Annotated[float, Field(ge=0)]


def new_record_id() -> str:
    return uuid.uuid4().hex


def this_worker() -> str:
    """``machine:pid`` of this process, for the records that say where they were made.
    The machine is ``HARNESSGIT_MACHINE`` when set (the name the sync script gives this
    machine's evidence store), else the host name."""
    return f"{os.environ.get('HARNESSGIT_MACHINE') or socket.gethostname()}:{os.getpid()}"


# defer_build: pydantic builds a model's validator on its first use, not at import. Built
# eagerly, the thirteen record models cost about 60 ms of CPU at every start of harnessgit
# (issue 17), while a read command validates two or three kinds.
RECORD_CONFIG = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False, defer_build=True)


class Record(BaseModel):
    model_config = RECORD_CONFIG

    v: int = Field(default=SCHEMA_VERSION, ge=1, le=SCHEMA_VERSION)
    id: str = Field(default_factory=new_record_id)
    kind: str
    ts: datetime
    supersedes: str | None = None

    @field_serializer("ts")
    def _ts(self, ts: datetime) -> str:
        return ts.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
