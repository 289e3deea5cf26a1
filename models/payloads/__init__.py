"""The producer contract: pydantic requests and results of every public task.

Task names are stable API. Producers may send plain dicts with `send_task(name, kwargs=...)`;
each task validates them here first, so a malformed payload fails at once and writes nothing.
One module per domain (base: the Payload every request derives from); every name is here too.
"""

from engram.models.payloads.base import (
    Payload,
    NAME,
)
from engram.models.payloads.cognify import (
    RememberItem,
    CognifyOptions,
    RememberRequest,
    RunRef,
    RememberResult,
    StatusRequest,
    StageStatus,
    RunStatus,
    StatusResult,
    RetryRequest,
    ForgetRequest,
    ForgetResult,
    ShareRequest,
    ShareResult,
    DatasetsRequest,
    DatasetInfo,
    DatasetsResult,
    ContradictionCheckRequest,
    SupersedeRequest,
    MaintenanceAccepted,
)
from engram.models.payloads.recall import (
    RecallRequest,
    LessonProvenance,
    Provenance,
    CaptureEdge,
    CapturedObject,
    RecallItem,
    RecallResult,
)
from engram.models.payloads.improve import (
    SessionStored,
    FeedbackRequest,
    ImproveRequest,
    ImproveResult,
    SessionsRequest,
    ImproveRunRequest,
)
from engram.models.payloads.capture import (
    CaptureRequest,
    CaptureAccepted,
    CaptureReprocessRequest,
    CaptureStatus,
)

__all__ = [
    "CaptureAccepted",
    "CaptureEdge",
    "CaptureReprocessRequest",
    "CaptureRequest",
    "CaptureStatus",
    "CapturedObject",
    "CognifyOptions",
    "ContradictionCheckRequest",
    "DatasetInfo",
    "DatasetsRequest",
    "DatasetsResult",
    "FeedbackRequest",
    "ForgetRequest",
    "ForgetResult",
    "ImproveRequest",
    "ImproveResult",
    "ImproveRunRequest",
    "LessonProvenance",
    "MaintenanceAccepted",
    "NAME",
    "Payload",
    "Provenance",
    "RecallItem",
    "RecallRequest",
    "RecallResult",
    "RememberItem",
    "RememberRequest",
    "RememberResult",
    "RetryRequest",
    "RunRef",
    "RunStatus",
    "SessionStored",
    "SessionsRequest",
    "ShareRequest",
    "ShareResult",
    "StageStatus",
    "StatusRequest",
    "StatusResult",
    "SupersedeRequest",
]
