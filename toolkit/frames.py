"""pandas in and out: DataFrames to datasets, and results to DataFrames.

pandas is an optional extra (``pip install 'privtool[pandas]'``): only this
module imports it, and only when a function here is called, so neither
``import privtool`` nor the command line ever loads it. Without pandas those
functions raise one :class:`ImportError` sentence saying what to install.

:func:`dataset_from_frame` is :meth:`privtool.Dataset.from_pandas`. Both frame
layouts are read without a Python loop over rows: ``pandas.factorize`` interns
transaction ids and items, numpy builds the CSR arrays, and Python touches only
the distinct items (to label them and put them in canonical order). Anything
ambiguous raises :class:`TypeError` or :class:`ValueError` in one sentence
instead of guessing.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from types import ModuleType
from typing import TYPE_CHECKING, Any

import numpy as np

from .arrays import offsets_of
from .dataset import Dataset, describe_value, label_sort_key

if TYPE_CHECKING:
    import pandas

INSTALL_HINT = "pip install 'privtool[pandas]'"


def require_pandas() -> ModuleType:
    """The pandas module, or an :class:`ImportError` saying how to install it."""
    try:
        import pandas
    except ImportError:
        raise ImportError(f"this needs pandas, which is not installed; install it with {INSTALL_HINT}.") from None
    return pandas


def dataset_from_frame(frame: Any, transaction: Hashable | None = None, item: Hashable | None = None) -> Dataset:
    """A :class:`Dataset` from a long frame (``transaction`` and ``item`` name its
    columns) or a one-hot boolean frame (neither given); see
    :meth:`privtool.Dataset.from_pandas` for the contract."""
    pd = require_pandas()
    if not isinstance(frame, pd.DataFrame):
        raise TypeError(f"from_pandas expects a pandas DataFrame, not {describe_value(frame)}.")
    if transaction is None and item is None:
        return _from_onehot(pd, frame)
    if transaction is None or item is None:
        raise TypeError(
            "from_pandas needs both transaction= and item= for a long frame, or neither for a one-hot frame."
        )
    return _from_long(pd, frame, transaction, item)


def _column(frame: pandas.DataFrame, name: Hashable, role: str) -> pandas.Series:
    if name not in frame.columns:
        shown = ", ".join(repr(c) for c in list(frame.columns)[:10])
        raise ValueError(f"the frame has no column {name!r} for {role}= (its columns: {shown}).")
    column = frame[name]
    if column.ndim != 1:
        raise ValueError(f"the frame has several columns called {name!r}, so {role}= is ambiguous.")
    missing = column.isna().to_numpy()
    if missing.any():
        first = column.index[np.flatnonzero(missing)[0]]
        raise ValueError(
            f"column {name!r} ({role}) has {int(missing.sum())} missing value(s), the first at row {first!r}."
        )
    return column


def _from_long(pd: ModuleType, frame: pandas.DataFrame, transaction: Hashable, item: Hashable) -> Dataset:
    """One row per item occurrence; records in order of first appearance of their transaction."""
    if transaction == item:
        raise ValueError(f"transaction= and item= both name the column {item!r}.")
    transactions = _column(frame, transaction, "transaction")
    items = _column(frame, item, "item")
    record_of_row, _ = _factorize(pd, transactions, transaction, "transaction")
    item_of_row, distinct = _factorize(pd, items, item, "item")
    labels = _labels(pd, np.asarray(distinct, dtype=object), f"column {item!r}")
    n_records = int(record_of_row.max()) + 1 if len(record_of_row) else 0
    order = np.argsort(record_of_row, kind="stable")
    return _build(np.bincount(record_of_row, minlength=n_records), item_of_row[order], labels)


def _factorize(pd: ModuleType, column: pandas.Series, name: Hashable, role: str) -> tuple[np.ndarray, Any]:
    """``pandas.factorize`` in order of first appearance; unhashable values raise."""
    try:
        codes, uniques = pd.factorize(column, sort=False)
        return codes, uniques
    except TypeError:
        bad = next(value for value in column if not isinstance(value, Hashable))
        raise TypeError(f"column {name!r} ({role}) holds {describe_value(bad)}, which is not hashable.") from None


def _from_onehot(pd: ModuleType, frame: pandas.DataFrame) -> Dataset:
    """One record per row holding the labels of its true columns."""
    for name, dtype in frame.dtypes.items():
        if not _is_boolean(pd, dtype):
            raise TypeError(
                "from_pandas without transaction= and item= reads a one-hot frame, whose columns must all be "
                f"boolean, but column {name!r} is {dtype}; pass transaction= and item= for a long frame."
            )
    labels = _labels(pd, np.asarray(list(frame.columns), dtype=object), "the header")
    if len(set(labels)) < len(labels):
        twice = next(label for label in labels if labels.count(label) > 1)
        raise ValueError(f"two columns are both labelled {twice!r} (an integer name is labelled by its decimal text).")
    for name in frame.columns:
        if frame[name].isna().any():
            raise ValueError(f"column {name!r} has missing values; a one-hot frame holds only true and false.")
    if len(frame.columns) and all(isinstance(dtype, pd.SparseDtype) for dtype in frame.dtypes):
        coo = frame.sparse.to_coo()
        keep = np.asarray(coo.data, dtype=bool)
        rows, cols = np.asarray(coo.row)[keep], np.asarray(coo.col)[keep]
        order = np.lexsort((cols, rows))
        rows, cols = rows[order], cols[order]
    else:
        rows, cols = np.nonzero(frame.to_numpy(dtype=bool))
    return _build(np.bincount(rows, minlength=len(frame)), cols, labels).compact()


def _is_boolean(pd: ModuleType, dtype: Any) -> bool:
    if isinstance(dtype, pd.SparseDtype):
        dtype = dtype.subtype
    return bool(dtype == np.dtype(bool) or isinstance(dtype, pd.BooleanDtype))


def _labels(pd: ModuleType, values: np.ndarray, where: str) -> list[str]:
    """The label of each distinct value: strings as they are, integers as their
    decimal text; anything else, a mix of the two, or an empty label raises."""
    kind = pd.api.types.infer_dtype(values, skipna=False)
    if kind == "empty":
        return []
    if kind == "integer":
        return [str(int(v)) for v in values]
    if kind == "string":
        labels = [str(v) for v in values]
        if "" in labels:
            raise ValueError(f"{where} holds an empty item label.")
        return labels
    if kind == "mixed-integer" and all(isinstance(v, (str, int, np.integer)) for v in values):
        raise TypeError(f"{where} mixes integers and strings; give every item as a string or every item as an integer.")
    bad = next(v for v in values if isinstance(v, bool) or not isinstance(v, (str, int, np.integer)))
    raise TypeError(f"{where} holds {describe_value(bad)}; items must be strings or integers.")


def _build(sizes: np.ndarray, ids: np.ndarray, labels: Sequence[str]) -> Dataset:
    """A dataset from record sizes and the item id (into ``labels``) of each
    occurrence, record after record; ids renumbered into canonical label order."""
    order = sorted(range(len(labels)), key=lambda j: label_sort_key(labels[j]))
    rank = np.empty(len(labels), dtype=np.int32)
    rank[order] = np.arange(len(labels), dtype=np.int32)
    return Dataset.from_csr(offsets_of(sizes), rank[np.asarray(ids, dtype=np.int64)], [labels[j] for j in order])
