"""The error an analysis raises for a run or file it does not apply to."""


class AnalysisError(ValueError):
    """A run or file that an analysis cannot be applied to, with the reason.

    A tool prints the message as its one line (and exits with status 1, as for a run that
    turns out to be of the wrong kind only once it is read); other errors keep their
    traceback.

    Example:
        >>> try:
        ...     raise AnalysisError("runs/x: expected an untied Syntactic Attention run")
        ... except ValueError as error:
        ...     print(error)
        runs/x: expected an untied Syntactic Attention run
    """
