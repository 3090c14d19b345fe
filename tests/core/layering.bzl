"""What a package gives //tests/core:layering_test, which checks that no file includes a
layer above its own (core/layers.txt)."""

def layering_sources(api_build_file = False):
    """Every C++ file of the package, as a filegroup the test reads.

    The files are the test's inputs, so it re-runs when any of them changes. With
    `api_build_file`, the package's BUILD.bazel is exported too: the test reads the
    plugin API's header list from the `hdrs` of the package's `api` library.
    """
    native.filegroup(
        name = "layering_sources",
        srcs = native.glob(["**/*.h", "**/*.cc"]),
        visibility = ["//tests/core:__pkg__"],
    )
    if api_build_file:
        native.exports_files(["BUILD.bazel"], visibility = ["//tests/core:__pkg__"])
