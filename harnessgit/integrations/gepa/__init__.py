"""GEPA and harnessgit: record a GEPA run in git (`GitRecorder`, docs/gepa.md).

    from harnessgit.integrations.gepa import GitRecorder

    recorder = GitRecorder(".", components={"system_prompt": "prompts/system.md"},
                           adapter=adapter, model="gpt-4.1-mini", valset=valset)
    result = gepa.optimize(..., adapter=adapter, valset=valset, callbacks=[recorder])
    recorder.close()

Importing this package does not import gepa: the recorder only receives its events.
"""

from __future__ import annotations

from harnessgit.integrations.gepa.options import content_instance_id
from harnessgit.integrations.gepa.recorder import GitRecorder

__all__ = ["GitRecorder", "content_instance_id"]
