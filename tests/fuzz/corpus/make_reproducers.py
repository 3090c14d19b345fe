"""Writes the fuzz findings' reduced reproducers (small files, committed beside this script).

    /opt/brisk/venv/bin/python3 tests/fuzz/corpus/make_reproducers.py

Each is the smallest file that shows its finding, made from a two-parameter module or
a one-tensor inputs file; README.md in tests/fuzz says what each one found. The aoti/
archives are NativeRT AOTInductor-delegated archives of that module (PyTorch's own
lowering and writer), each damaged in one way the aoti delegate must refuse before it
maps the library.
"""
import io
import json
import os
import tempfile
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


def tiny_aoti_archive():
    """A Linear(2, 2) lowered whole by NativeRT's lowering and packaged with its files."""
    from torch.nativert.backends._lower_utils import lower_exported_program, package_nativert_with_aoti_delegate
    ep = torch.export.export(torch.nn.Linear(2, 2).eval(), (torch.ones(1, 2),))
    delegate, files = lower_exported_program(ep, "model", "aoti")
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "tiny.pt2")
        package_nativert_with_aoti_delegate(path, "model", "aoti", ep, delegate, files)
        return open(path, "rb").read()


def aoti_reproducers():
    """The compiled region's files damaged one way each. Its sources are dropped (brisk
    never reads them), and its 1.5 MB library is cut to its ELF header wherever the damage
    is refused before the library is read, so the files stay small; the test checks each
    refusal's reason (fuzz_corpus_test.cc)."""
    archive = tiny_aoti_archive()
    region = "/data/aotinductor/model-aoti/"

    def meta(change):
        def edit(n, d):
            if n.endswith("_metadata.json") and region in n:
                return json.dumps(change(json.loads(d))).encode()
            return d[:64] if n.endswith(".so") else d
        return edit

    def write(name, change):
        def without_sources(n, d):
            return None if region in n and n.endswith(".cpp") else change(n, d)
        rewrite(archive, f"{HERE}/aoti/{name}.pt2", without_sources)

    write("truncated_library", lambda n, d: d[:4096] if n.endswith(".so") else d)
    write("library_not_elf", lambda n, d: b"#!/bin/sh\necho not a library\n" if n.endswith(".so") else d)
    write("no_library", lambda n, d: None if n.endswith(".so") else d)
    write("built_for_cuda", meta(lambda m: {**m, "AOTI_DEVICE_KEY": "cuda"}))
    write("built_for_aarch64", meta(lambda m: {**m, "AOTI_MACHINE": "aarch64"}))
    write("built_for_another_isa", meta(lambda m: {**m, "AOTI_CPU_ISA": "SVE256"}))
    write("metadata_not_json", lambda n, d: d[:-3] if n.endswith("_metadata.json") else d[:64] if n.endswith(
        ".so") else d)

    def two_libraries(n, d):
        return d[:64] if n.endswith(".so") else d
    src = zipfile.ZipFile(io.BytesIO(archive))
    with zipfile.ZipFile(f"{HERE}/aoti/two_libraries.pt2", "w", zipfile.ZIP_STORED) as out:
        for info in src.infolist():
            if region in info.filename and info.filename.endswith(".cpp"):
                continue
            out.writestr(info.filename, two_libraries(info.filename, src.read(info.filename)))
            if info.filename.endswith(".so"):
                out.writestr(info.filename[:-3] + "_second.so", src.read(info.filename)[:64])


def main():
    aoti_reproducers()
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
