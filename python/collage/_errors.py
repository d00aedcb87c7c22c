"""The exceptions collage raises: one class per status code of the C++ library
(include/collage/status.h), each carrying collage's message, all subclasses of
CollageError (itself a RuntimeError). Where a Python built-in exception means the same,
the class derives from it as well, so `except ValueError` catches a bad input."""


class CollageError(RuntimeError):
    """An error reported by collage. `code` is the status code's name, e.g. "invalid argument"."""

    code = "unknown"


class InvalidArgumentError(CollageError, ValueError):
    """The caller passed something wrong: a bad shape, dtype, name, option or file content."""

    code = "invalid argument"


class InvalidModelError(CollageError, ValueError):
    """The model is malformed or fails the ONNX checker."""

    code = "invalid model"


class UnsupportedError(CollageError, NotImplementedError):
    """Valid input that collage does not implement (an op, dtype or attribute value)."""

    code = "unsupported"


class NotFoundError(CollageError, LookupError):
    """A file, tensor name, backend or op that does not exist."""

    code = "not found"


class CollageIOError(CollageError):
    """Reading or writing a file failed."""

    code = "I/O error"


class InternalError(CollageError):
    """A broken invariant inside collage (a bug: please report it)."""

    code = "internal error"


class CancelledError(CollageError):
    """The work was interrupted; nothing is half done."""

    code = "cancelled"


_BY_CODE = {cls.code: cls for cls in (InvalidArgumentError, InvalidModelError, UnsupportedError,
                                      NotFoundError, CollageIOError, InternalError, CancelledError)}


def error_from_status(code, message):
    """The exception for a failed Status (called by the extension module)."""
    return _BY_CODE.get(code, CollageError)(message)
