"""Writes the fuzz findings' reduced reproducers (small files, committed beside this script).

    /opt/brisk/venv/bin/python3 tests/fuzz/corpus/make_reproducers.py

Each is the smallest file that shows its finding, made from a two-parameter module or
a one-tensor inputs file; README.md in tests/fuzz says what each one found.
"""
import io
import os
import sys
import warnings
import zipfile

import torch

warnings.simplefilter("ignore")
HERE = os.path.dirname(os.path.abspath(__file__))


def tiny_model_bytes():
    buf = io.BytesIO()
    torch.jit.save(torch.jit.script(torch.nn.Linear(2, 2)), buf)
    return buf.getvalue()


def tiny_inputs_bytes():
    buf = io.BytesIO()
    torch.save({"args": [torch.ones(1, 2)], "kwargs": {}}, buf)
    return buf.getvalue()


def rewrite(archive, path, change):
    """Copies `archive` to `path` with member contents passed through change(name, data)
    (None drops the member); stored members, correct CRCs."""
    src = zipfile.ZipFile(io.BytesIO(archive))
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as out:
        for info in src.infolist():
            data = change(info.filename, src.read(info.filename))
            if data is not None:
                out.writestr(info.filename, data)


def rename_outside(archive, path):
    """Copies `archive` with its serialization_id member moved out of the top folder."""
    src = zipfile.ZipFile(io.BytesIO(archive))
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as out:
        for info in src.infolist():
            name = info.filename
            if name.endswith("/.data/serialization_id"):
                name = "elsewhere/.data/serialization_id"
            out.writestr(name, src.read(info.filename))


def nested(depth):
    # A value wrapped in `depth` one-element tuples: TUPLE1 keeps the unpickler's stack at
    # one item, so only the nesting depth grows.
    return b"\x80\x02K\x01" + b"\x85" * depth + b"."


def main():
    model, inputs = tiny_model_bytes(), tiny_inputs_bytes()
    # Models: refused by core/frontend/archive_check.cc before torch::jit::load / freezing reads them.
    rewrite(model, f"{HERE}/models/empty_tensor_record.pt",
            lambda n, d: b"" if n.endswith("/data/1") else d)
    rewrite(model, f"{HERE}/models/deep_nesting_data_pkl.pt",
            lambda n, d: nested(300000) if n.endswith("/data.pkl") else d)
    # torch sizes the storage from the pickle's numel, not the record.
    rewrite(model, f"{HERE}/models/short_tensor_record.pt",
            lambda n, d: d[:4] if n.endswith("/data/0") else d)
    # (models/errorreport_what_aborts.pt is libFuzzer's own reproducer, kept as found.)
    # Loads or is refused, never leaks torch's exception: a member outside the archive's
    # folder (torch's reader throws listing the records).
    rename_outside(model, f"{HERE}/loads/zip_name_outside_dir.pt")
    rename_outside(inputs, f"{HERE}/loads/zip_name_outside_dir.inputs.pt")
    # Inputs files: refused by core/model_inputs.cc (with core/frontend/archive_check.h's checks).
    rewrite(inputs, f"{HERE}/inputs/empty_tensor_record.inputs.pt",
            lambda n, d: b"" if n.endswith("/data/0") else d)
    rewrite(inputs, f"{HERE}/inputs/deep_nesting.inputs.pt",
            lambda n, d: nested(300000) if n.endswith("/data.pkl") else d)
    buf = io.BytesIO()
    torch.save({"args": [torch.ones(1, 2), torch.ones(1, 2)], "kwargs": None}, buf)
    open(f"{HERE}/inputs/kwargs_none.inputs.pt", "wb").write(buf.getvalue())
    return 0


if __name__ == "__main__":
    sys.exit(main())
