"""What the sink's scrubber process receives: a batch of queued items, pickled.

Classes the process can import go by reference; an object with ``to_dict()`` (agentlane's
events) as what that returns, since that is all the sink keeps of it; anything else the process
could not import (defined in ``__main__`` or inside a function), or whose pickle would run its
own code when loaded, as its JSON-compatible snapshot, which is exactly what the process would
have made of it. So a batch's bytes load again in the runner's process when the process cannot
take them. An item that cannot even be snapshotted goes as :class:`Unreadable`, which both
sides quarantine alike.
"""

from __future__ import annotations

import copyreg
import io
import pickle
import sys
from typing import Any, ClassVar

from tracelake.runners import to_jsonable
from tracelake.sink.preparer import Item, Unreadable


def snapshot_of(tree: Any) -> Any:
    """Unpickled in the scrubber process: the snapshot taken here (see :class:`_Pickler`)."""
    return tree


class _Pickler(pickle.Pickler):
    """See the module's docstring. (``reducer_override`` is called only for class instances,
    not for str, int, dict, list and the like.)"""

    how: ClassVar[dict[type, str]] = {}

    def __init__(self, file: io.BytesIO, max_depth: int) -> None:
        super().__init__(file, protocol=pickle.HIGHEST_PROTOCOL)
        self.max_depth = max_depth

    def reducer_override(self, obj: Any) -> Any:
        kind = type(obj)
        how = self.how.get(kind)
        if how is None:
            if len(self.how) > 4096:  # classes made on the fly: keep it bounded
                self.how.clear()
            how = self.how[kind] = _how(kind)
        if how == "to_dict":
            to_dict = getattr(obj, "to_dict", None)
            if callable(to_dict):  # (the same test the snapshot walk makes)
                return (snapshot_of, (to_dict(),))
        elif how == "reference":
            return NotImplemented
        return (snapshot_of, (to_jsonable(obj, self.max_depth),))


# Hooks that make a class's pickle run its own code when it is loaded. A batch is kept only as
# its bytes, so it must load again here if the process cannot take it: classes of the runner's
# that define any of them go as their snapshot (what the process would have made of them).
_OWN_PICKLING = (
    "__reduce__",
    "__reduce_ex__",
    "__getstate__",
    "__setstate__",
    "__getnewargs__",
    "__getnewargs_ex__",
    "__new__",
)


def _how(kind: type) -> str:
    if issubclass(kind, type):
        return "reference"  # a class itself (pickled by name, or the snapshot walk's str())
    if callable(getattr(kind, "to_dict", None)):
        return "to_dict"
    module = sys.modules.get(kind.__module__)
    importable = (
        kind.__module__ != "__main__"
        and "<locals>" not in kind.__qualname__
        and module is not None
        and getattr(module, "__spec__", None) is not None
    )
    return "reference" if importable and _loads_plainly(kind) else "snapshot"


def _loads_plainly(kind: type) -> bool:
    """Its pickle loads without running code of the runner's: a class of the standard library,
    or one that defines none of the pickling hooks itself and has no ``copyreg`` reducer (a
    plain class or dataclass: ``__new__`` and its ``__dict__`` or slots). An enum of the
    runner's defines ``__new__`` (and may define ``__reduce_ex__``): it goes as its snapshot."""
    root = kind.__module__.partition(".")[0]
    if root in sys.stdlib_module_names or root == "builtins":
        return True
    if kind in copyreg.dispatch_table:
        return False
    for klass in kind.__mro__:
        if klass is object or klass.__module__.partition(".")[0] in sys.stdlib_module_names:
            continue
        if any(hook in vars(klass) for hook in _OWN_PICKLING):
            return False
        if "__setattr__" in vars(klass) and "__slots__" in vars(klass):
            return False  # slots are loaded with setattr
    return True


def dumps(items: list[Item], max_depth: int) -> bytes:
    buffer = io.BytesIO()
    _Pickler(buffer, max_depth).dump(items)
    return buffer.getvalue()


def pickle_batch(items: list[Item], max_depth: int) -> bytes | None:
    """The batch's pickle; items that do not pickle go as their snapshot (or as
    :class:`Unreadable`); ``None`` only when even that fails (the writer prepares it)."""
    try:
        return dumps(items, max_depth)
    except Exception:  # noqa: BLE001 - e.g. an object holding a lock
        try:
            return dumps([_portable(i, max_depth) for i in items], max_depth)
        except Exception:  # noqa: BLE001
            return None


def _portable(item: Item, max_depth: int) -> Item:
    """The item, or its snapshot taken here when it does not pickle."""
    try:
        dumps([item], max_depth)
        return item
    except Exception:  # noqa: BLE001
        obj, run_id, recorded_at, meta = item
    try:
        tree = to_jsonable(obj, max_depth)
        tree_meta = None if meta is None else to_jsonable(meta, max_depth)
    except Exception as exc:  # noqa: BLE001 - e.g. a to_dict() that raises
        return (Unreadable(type(exc).__name__), run_id, recorded_at, None)
    return (tree, run_id, recorded_at, tree_meta)
