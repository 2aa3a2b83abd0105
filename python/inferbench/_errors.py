"""What the binding raises."""


class InferbenchError(RuntimeError):
    """A measurement that could not be made, or was made only in part.

    result: what was measured before it stopped (marked partial), or None.
    status: the library's status name ("runtime failure", ...), or None.
    """

    def __init__(self, message, result=None, status=None):
        super().__init__(message)
        self.result = result
        self.status = status


class CallableError(InferbenchError):
    """The measured callable raised; the exception is the __cause__."""


class Interrupted(KeyboardInterrupt):
    """Ctrl-C during a measurement. result holds what was measured before
    it (marked partial), or None when no run was timed yet."""

    def __init__(self, result=None):
        super().__init__("interrupted")
        self.result = result
