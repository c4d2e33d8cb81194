"""What a terraform command's failure is: `TerraformError` (the command, its output, and whether a
retry may help, as `engines.outcomes` classifies it) and `ProviderLockError`. Below both the
runner, which raises them, and the shared provider lock (`locks.py`), which refuses a stack with
one: the runner imports the lock, the lock only these."""

from __future__ import annotations

from engines.outcomes import Failure, classify_terraform_output, permanent


class TerraformError(Exception):
    """A terraform command failed; `failure` says what, in one line, and whether a retry may help."""

    def __init__(self, command: str, stderr: str, *, failure: Failure | None = None) -> None:
        self.command = command
        self.stderr = stderr
        self.failure = failure or classify_terraform_output(command, stderr)
        super().__init__(self.failure.message)

    @property
    def temporary(self) -> bool:
        return self.failure.temporary


class ProviderLockError(TerraformError):
    """A stack's provider lock disagrees with the workspace's shared one (`locks.py`). Permanent:
    retrying cannot help, a person decides which lock file is right (the message says how)."""

    def __init__(self, message: str) -> None:
        super().__init__("init", message, failure=permanent(f"terraform init refused: {message}", "provider-lock"))
