"""Recorder: per-lane records appended from inside kernels (loops and calls too) into a
compact buffer that leaves as NumPy views without a copy. The fields are Kiln array,
vector and matrix types; the C++ core (``kiln._kiln.RecorderCore``, record.h) stores one
column per component."""

from ._kiln import Bool, RecorderCore
from .tree import ARRAYS, VECTORS, MATRICES, leaf_arrays, add_arrays, describe, type_name

__all__ = ["Recorder"]

_MISSING = object()  # a Recorder field without a value


def _columns_of(field_type, label):
    """(column class, number of columns) of a record field type."""
    if field_type in ARRAYS:
        return field_type, 1
    if field_type in VECTORS:
        return VECTORS[field_type]
    if field_type in MATRICES:
        return MATRICES[field_type]
    raise TypeError(f"kiln: Recorder(): field {label} has type {field_type!r}; a field holds a Kiln array, "
                    "vector or matrix type (kl.Float, kl.Array3f, kl.Matrix4f, ...)")


class Recorder:
    """Per-lane records appended from anywhere (inside loops and calls too), up to
    ``capacity``: one record per active lane per append().

    ``fields`` is a dict ``{name: type}`` or a list of types (arrays, vectors, matrices).
    After the appends ran, ``rec['x']`` (or ``rec[0]``) is a Kiln value of the first
    count() records that shares the recorder's memory, so ``np.asarray(rec['x'])`` is a
    view, not a copy. Records are stored in the order of an atomic counter: sort by a
    field (a ray id, say) for a deterministic order. Appending more than ``capacity``
    records raises kl.SizeError naming the capacity needed when a field is read; nothing
    is dropped silently.
    """

    def __init__(self, fields, capacity):
        if isinstance(fields, dict):
            names, types = list(fields), list(fields.values())
        elif isinstance(fields, (list, tuple)):
            names, types = [None] * len(fields), list(fields)
        else:
            raise TypeError(f"kiln: Recorder(): fields must be a dict {{name: type}} or a list of types, "
                            f"not {describe(fields)}")
        self._names = names
        self._types = types
        column_types, widths = [], []
        for k, field_type in enumerate(types):
            column, count = _columns_of(field_type, self._label(k))
            column_types += [column] * count
            widths.append(count)
        self._core = RecorderCore(column_types, capacity, widths)

    @classmethod
    def _over(cls, core, fields):
        """A Recorder over an existing RecorderCore (one that C++ code appends to) whose
        columns are `fields` ({name: type}), as __init__ would have made it."""
        recorder = cls.__new__(cls)
        recorder._names, recorder._types, recorder._core = list(fields), list(fields.values()), core
        return recorder

    def _label(self, k):
        return repr(self._names[k]) if self._names[k] is not None else str(k)

    def _field_index(self, key):
        if isinstance(key, str):
            if key not in self._names:
                raise KeyError(f"kiln: Recorder: no field {key!r}; the fields are {self._names}")
            return self._names.index(key)
        if isinstance(key, int) and not isinstance(key, bool):
            if not -len(self._types) <= key < len(self._types):
                raise IndexError(f"kiln: Recorder: field {key} of {len(self._types)}")
            return key % len(self._types)
        raise TypeError(f"kiln: Recorder: a field is named by its name or index, not {describe(key)}")

    @property
    def fields(self):
        """The field types: a dict {name: type}, or a list when the fields have no names."""
        if self._names and self._names[0] is not None:
            return dict(zip(self._names, self._types))
        return list(self._types)

    @property
    def capacity(self):
        """The number of records the recorder holds."""
        return self._core.capacity

    def append(self, active, *values, **named):
        """Appends one record per lane where ``active`` (a kl.Bool or bool) holds: one
        value per field, by position and/or (for named fields) by name. Python numbers are
        accepted for array fields."""
        if len(values) > len(self._types):
            raise TypeError(f"kiln: Recorder.append(): {len(values)} values for {len(self._types)} fields")
        given = list(values) + [_MISSING] * (len(self._types) - len(values))
        for key, value in named.items():
            if key not in self._names:
                raise TypeError(f"kiln: Recorder.append(): no field {key!r}; the fields are {self._names}")
            k = self._names.index(key)
            if given[k] is not _MISSING:
                raise TypeError(f"kiln: Recorder.append(): field {key!r} is given twice")
            given[k] = value
        columns = []
        for k, (field_type, value) in enumerate(zip(self._types, given)):
            label = self._label(k)
            if value is _MISSING:
                raise TypeError(f"kiln: Recorder.append(): no value for field {label}")
            if field_type in ARRAYS and isinstance(value, (bool, int, float)):
                try:
                    value = field_type(value)
                except TypeError:
                    pass  # reported below
            if type(value) is not field_type:
                raise TypeError(f"kiln: Recorder.append(): field {label} holds {type_name(field_type)}, "
                                f"got {describe(value)}")
            add_arrays(leaf_arrays(value)[1], f"field {label}", "Recorder.append()", columns)
        self._core.append(active if type(active) is Bool else Bool(active), columns)

    def count(self):
        """Records appended since construction or clear(), including any beyond the
        capacity (evaluates pending appends)."""
        return self._core.count()

    def field(self, key):
        """The first count() records of field ``key`` (its name or index) as a Kiln value
        sharing the recorder's memory (a vector or matrix gathers its components from it).
        Raises kl.SizeError when more records were appended than fit."""
        k = self._field_index(key)
        field_type = self._types[k]
        return self._core.field(k) if field_type in ARRAYS else field_type(self._view(k))

    __getitem__ = field

    def _view(self, k):
        """Field k's memory as a NumPy array: (n,) for arrays, (n, N) for vectors, (n, N, N)
        for matrices (the recorder stores a field's components interleaved)."""
        return self._core.field(k).numpy().reshape(self._view_shape(k))

    def numpy(self):
        """Every field as a NumPy view of the recorder's memory, without a copy (keyed by
        name, or by index for unnamed fields): arrays (n,), vectors (n, N), matrices
        (n, N, N). Later appends write a copy of the memory, so a view keeps the records of
        its time."""
        keys = self._names if self._names and self._names[0] is not None else range(len(self._types))
        return {key: self._view(k) for k, key in enumerate(keys)}

    def torch(self):
        """Every field as a PyTorch tensor over the recorder's memory, through DLPack without
        a copy, on the records' device (CUDA tensors on a GPU, where numpy() has to copy):
        keyed and shaped as numpy()'s. Later appends write a copy of the memory, so a tensor
        keeps the records of its time."""
        import torch

        keys = self._names if self._names and self._names[0] is not None else range(len(self._types))
        return {key: torch.from_dlpack(self._core.field(k)).reshape(self._view_shape(k)) for k, key in enumerate(keys)}

    def _view_shape(self, k):
        field_type = self._types[k]
        if field_type in ARRAYS:
            return (-1,)
        size = len(field_type())
        return (-1, size, size) if field_type in MATRICES else (-1, size)

    def clear(self):
        """Forgets the records: the count restarts at zero."""
        self._core.clear()

    def __repr__(self):
        return f"Recorder({self.fields!r}, capacity={self.capacity})"
