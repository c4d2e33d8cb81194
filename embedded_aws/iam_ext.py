"""IAM fixes: moto's UpdateRole resets the description and the maximum session duration when a
request omits them; AWS changes only what the request names (UpdateRole API reference). The
Terraform provider sends them separately, so the bug made every role drift after any update."""

from __future__ import annotations

from moto.core.responses import ActionResult, EmptyResult
from moto.iam.responses import IamResponse


class ExtendedIamResponse(IamResponse):
    def update_role(self) -> ActionResult:
        role = self.backend.get_role(self._get_param("RoleName"))
        description = self._get_param("Description")
        duration = self._get_int_param("MaxSessionDuration")
        # moto annotates the duration as str but stores and returns it as given; AWS returns an int.
        self.backend.update_role(role.name, role.description if description is None else description,
                                 role.max_session_duration if duration is None else duration)  # type: ignore[arg-type]
        return EmptyResult()
