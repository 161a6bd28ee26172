"""Opening the files a user names (models, budgets, profiles, reports, input arrays): regular files only,
opened without ever blocking, and read whole only under a stated size cap; and writing a file whole or
not at all (:func:`write_atomic`: reports, device profiles, a calibration pack's files).

A FIFO, a terminal or a character device named as a model would block ``open()`` or ``read()``
forever, and ``/dev/zero`` would be read until memory runs out. :func:`open_regular` opens with
``O_NONBLOCK`` (which a FIFO honours at open) and refuses anything but a regular file;
:func:`read_capped` reads at most the cap. Both fail with :class:`NotARegularFile` /
:class:`TooLarge`, subclasses of ``OSError`` with a ``strerror``, so every caller's existing
``except OSError`` turns them into its one-line error.

What the tool writes is written only onto a regular file or a new name (:func:`check_output`): never onto a
device, a FIFO, a socket or a folder (as root, ``-o /dev/full`` would otherwise replace the device node), never
through a symbolic link, and never over a read-only file unless asked (``--overwrite``, :data:`OVERWRITE`).

A model file's SHA-256 (:func:`sha256_file`) can be computed on a thread of its own (:class:`FileDigest`),
while the process does other work.
"""

from __future__ import annotations

import contextvars
import errno
import os
import stat
import tempfile
import threading
from typing import IO, Any

MiB = 1 << 20

_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


class _Refused(OSError):
    """A file refused before it is read: its message is the reason alone (no errno, no repeated path)."""

    def __str__(self) -> str:
        return str(self.strerror)


class NotARegularFile(_Refused):
    """The path names a directory, FIFO, device or socket, not a regular file."""


class TooLarge(_Refused):
    """A file read whole is larger than its cap."""


class NotReplaced(_Refused):
    """An output path that names something the tool does not replace: a device, a FIFO, a socket, a folder, a
    symbolic link, or (without ``overwrite``) a read-only file."""


# Whether an output may replace a read-only file, or a symbolic link (the link itself, never its target):
# the CLI's ``--overwrite`` sets it for one run; a library caller passes ``overwrite=`` to :func:`write_atomic`.
OVERWRITE: contextvars.ContextVar[bool] = contextvars.ContextVar("tflite_flops_overwrite", default=False)


def _kind(mode: int) -> str:
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def open_regular(path: str | os.PathLike, mode: str = "rb", follow: bool = True, **kwargs: Any) -> IO:
    """``open(path, mode, **kwargs)`` for reading, refusing anything but a regular file, without blocking;
    ``follow=False``: a symbolic link is refused too (``O_NOFOLLOW``).

    Raises:
        NotARegularFile: a directory, FIFO, device or socket (or a symbolic link, with ``follow=False``).
        OSError: the file cannot be opened.
    """
    if any(c in mode for c in "wax+"):
        raise ValueError(f"open_regular reads: mode {mode!r}")
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    if not follow:
        if stat.S_ISLNK(os.lstat(path).st_mode):
            raise NotARegularFile(0, "a symbolic link, not a regular file", os.fspath(path))
        flags |= getattr(os, "O_NOFOLLOW", 0)  # the link check above, again at open (a link made meanwhile)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        if not follow and exc.errno == errno.ELOOP:
            raise NotARegularFile(0, "a symbolic link, not a regular file", os.fspath(path)) from None
        raise
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise NotARegularFile(0, f"{_kind(st.st_mode)}, not a regular file", os.fspath(path))
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)  # irrelevant to a regular file; restores the default for the reader
        return os.fdopen(fd, mode, **kwargs)
    except BaseException:
        os.close(fd)
        raise


def read_capped(path: str | os.PathLike, cap: int, mode: str = "rb", follow: bool = True, **kwargs: Any) -> Any:
    """The whole content of a regular file (bytes, or text with ``mode="r"``) of at most ``cap`` bytes
    (``follow=False``: not through a symbolic link).

    Raises:
        NotARegularFile, TooLarge, OSError: see :func:`open_regular`; the file is over ``cap`` bytes.
    """
    with open_regular(path, "rb", follow=follow) as f:
        size = os.fstat(f.fileno()).st_size
        too_large = size > cap  # refused before a byte is read (a sparse 2 GB file)
        # read(n) allocates n bytes first: sized by the file, not by the cap
        raw = b"" if too_large else f.read(size + 1)
        if len(raw) > size:  # it grew since (or is a /proc file, of size 0): the rest a megabyte at a time
            parts, total = [raw], len(raw)
            while total <= cap and parts[-1]:
                parts.append(f.read(min(MiB, cap + 1 - total)))
                total += len(parts[-1])
            raw = b"".join(parts)
    if too_large or len(raw) > cap:
        raise TooLarge(0, f"larger than {_size(cap)}, the most read from such a file", os.fspath(path))
    if "b" in mode:
        return raw
    return raw.decode(kwargs.get("encoding") or "utf-8", kwargs.get("errors") or "strict")


def _size(n: int) -> str:
    """1048576 -> '1 MiB'."""
    return f"{n // MiB} MiB" if n >= MiB and n % MiB == 0 else f"{n:,} bytes"


WRITE_CHUNK = 1 << 20  # characters per write: a large text is never encoded whole a second time


def write_chunked(stream: Any, text: str) -> None:
    """``stream.write(text)`` a megabyte at a time, so that the encoded bytes of a large report (tens of MB
    of JSON) are never held whole beside its text."""
    for start in range(0, len(text), WRITE_CHUNK):
        stream.write(text[start:start + WRITE_CHUNK])


def check_output(path: str | os.PathLike, overwrite: bool | None = None) -> None:
    """Refuse, before anything is written, an output ``path`` that is not a new name or a regular file: a device
    (``-o /dev/full`` as root would replace the device node), a FIFO, a socket, a folder, a symbolic link, or a
    read-only file (no write permission bit, or none for this user). ``overwrite`` (default: :data:`OVERWRITE`) lets a
    read-only file or a symbolic link be replaced (the link itself, never the file it points to).

    Raises:
        NotReplaced: what ``path`` names is not replaced (its ``strerror`` says why).
    """
    overwrite = OVERWRITE.get() if overwrite is None else overwrite
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    except OSError:
        return  # a path that cannot even be looked at: the write fails with its own error
    if stat.S_ISLNK(st.st_mode):
        if overwrite:
            return
        raise NotReplaced(0, "a symbolic link: not written through (name the file itself, or --overwrite to replace "
                             "the link)", os.fspath(path))
    if not stat.S_ISREG(st.st_mode):
        raise NotReplaced(0, f"{_kind(st.st_mode)}, not a regular file: left as it is", os.fspath(path))
    if not overwrite and (not st.st_mode & 0o222 or not os.access(path, os.W_OK)):
        raise NotReplaced(0, "a read-only file: left as it is (--overwrite replaces it)", os.fspath(path))


def write_atomic(path: str | os.PathLike, text: str | bytes, overwrite: bool | None = None,
                 executable: bool = False) -> None:
    """Write ``text`` (UTF-8; or ``bytes`` as they are) to ``path`` whole or not at all: through a temporary file
    in the same folder, renamed into place, with the usual permissions (``mkstemp`` makes 0600; ``executable``:
    0777 less the umask, set on the temporary file, never through ``path``). A model path that is not UTF-8
    (surrogate-escaped by Python) is written as ``\\udcff``. Only a new name or a regular file is replaced
    (:func:`check_output`, checked before the temporary file is made and again just before the rename).

    Raises:
        NotReplaced: ``path`` names a device, FIFO, socket, folder, symbolic link or read-only file.
        OSError: the file cannot be written; the temporary file is gone, and the error's ``filename`` is
            ``path``, not the temporary file's.
    """
    check_output(path, overwrite)
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".tflite_flops-", suffix=".tmp", dir=folder)
    try:
        if isinstance(text, (bytes, bytearray, memoryview)):
            with os.fdopen(fd, "wb") as fb:
                fb.write(text)
        else:
            with os.fdopen(fd, "w", encoding="utf-8", errors="backslashreplace", newline="") as f:
                write_chunked(f, text)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, (0o777 if executable else 0o666) & ~umask)
        check_output(path, overwrite)  # what appeared there meanwhile is refused too
        os.replace(tmp, path)
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(exc, _Refused):
            raise
        if isinstance(exc, OSError):
            raise OSError(exc.errno, exc.strerror or str(exc), os.fspath(path)) from None
        raise


# ---------------------------------------------------------------------------------------------
# A model file's SHA-256

# The terminal and Markdown summaries show the sha256 of files up to this size only: hashing a
# multi-GB file takes seconds (JSON and HTML reports always carry it).
SUMMARY_HASH_MAX_BYTES = 256 << 20
# Below this size, hashing a file takes less time than starting a thread for it.
HASH_THREAD_MIN_BYTES = 256 << 10


def sha256_file(path: str | os.PathLike) -> str:
    """The SHA-256 of a file, read in 1 MiB chunks (its pages do not stay resident)."""
    import hashlib  # here: OpenSSL's start-up (~2 ms) is paid by a run that hashes, on the hashing thread

    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


class FileDigest:
    """The SHA-256 of a file, computed on a daemon thread from its creation; :meth:`result` waits for it.

    Reading and hashing release the GIL: what the process does meanwhile (importing the analysis,
    walking the model) runs on another core.
    """

    def __init__(self, path: str | os.PathLike) -> None:
        self._value: str | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, args=(path,), name="tflite_flops-sha256", daemon=True)
        self._thread.start()

    def _run(self, path: str | os.PathLike) -> None:
        try:
            self._value = sha256_file(path)
        except BaseException as exc:  # noqa: BLE001 - handed to the caller of result()
            self._error = exc

    def result(self) -> str:
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self._value  # type: ignore[return-value]
