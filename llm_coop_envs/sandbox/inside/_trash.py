"""Deleting what a run left, without letting it delay the next run.

Only needed where runs cannot have a tmpfs of their own (no namespaces: the 'subprocess' backend
without root). A finished run's scratch folder is renamed into the trash at once (O(1)); the trash
is then emptied a few entries at a time, only while no request is waiting, so a run that left
100 000 files or a tree thousands of levels deep costs the next run nothing. Deletion works through
directory file descriptors and '..', never through paths or recursion, so no depth is too deep,
and it holds one descriptor at a time.
"""

from __future__ import annotations

import os
from typing import Callable

_CHECK_EVERY = 64  # entries deleted between two looks at the request channel
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW


class _Tree:
    """Empties one folder, one entry per step, resumable between calls."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.fd: int | None = None  # the folder being emptied
        self.names: list[str] = []  # the folders from `path` down to `fd`

    def empty_until(self, stop: Callable[[], bool]) -> bool:
        """Deletes entries until the folder is empty (True) or `stop()` says to pause (False)."""
        if self.fd is None:
            self.fd = os.open(self.path, _DIR_FLAGS)
        deleted = 0
        while True:
            if deleted % _CHECK_EVERY == _CHECK_EVERY - 1 and stop():
                return False
            deleted += 1
            try:
                if not self._step():
                    return True
            except OSError:
                return False  # not ours to delete after all (e.g. gone): try again later

    def _step(self) -> bool:
        """Deletes one entry, enters one folder, or leaves one emptied folder; False when done."""
        with os.scandir(self.fd) as entries:
            entry = next(entries, None)
        if entry is None:
            return self._leave()
        if not entry.is_dir(follow_symlinks=False):
            os.unlink(entry.name, dir_fd=self.fd)
            return True
        try:
            child = os.open(entry.name, _DIR_FLAGS, dir_fd=self.fd)
        except PermissionError:  # the run took its own rights away: give them back
            os.chmod(entry.name, 0o700, dir_fd=self.fd)
            child = os.open(entry.name, _DIR_FLAGS, dir_fd=self.fd)
        os.fchmod(child, 0o700)  # unlinking inside needs write access
        os.close(self.fd)
        self.fd = child
        self.names.append(entry.name)
        return True

    def _leave(self) -> bool:
        """Goes back up from an emptied folder and removes it."""
        if not self.names:
            return False
        parent = os.open("..", _DIR_FLAGS, dir_fd=self.fd)
        os.close(self.fd)
        self.fd = parent
        os.rmdir(self.names.pop(), dir_fd=parent)
        return True

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


class Trash:
    def __init__(self, root: str) -> None:
        self.path = os.path.join(root, "trash")
        os.mkdir(self.path, 0o700)
        self.added = 0
        self.tree = _Tree(self.path)

    def add(self, folder: str) -> None:
        """Moves a finished run's folder into the trash."""
        try:
            os.chmod(folder, 0o700)  # moving a folder to another parent needs write access to it
        except OSError:
            pass
        self.added += 1
        os.rename(folder, os.path.join(self.path, str(self.added)))

    def empty_until(self, stop: Callable[[], bool]) -> None:
        """Deletes entries until the trash is empty or `stop()` says a request waits."""
        self.tree.empty_until(stop)


def remove_tree(path: str) -> None:
    """Deletes a folder and everything below it, however deep (shutil.rmtree recurses)."""
    tree = _Tree(path)
    try:
        tree.empty_until(lambda: False)
    except OSError:
        pass
    finally:
        tree.close()
    try:
        os.rmdir(path)
    except OSError:
        pass
