#pragma once
// brisk.load's keyword options, one per brisk::Options field (core/common/option_table.h,
// same names): each Python value checked against the option's type and range and
// converted, and the docstring that lists them. Its own file so that the binding has one
// conversion per option type (bool, ranged int, str, list of str, plugin options) and
// the bindings do not grow with the option table. Needs the GIL.
#include <pybind11/pybind11.h>

#include <string>
#include <vector>

#include "core/common/options.h"

namespace brisk::python {

namespace py = pybind11;

// Throws brisk::Error for an unknown option, a value of the wrong type or out of range.
Options toOptions(const py::dict& kwargs);

// brisk.load's docstring: every option of the table, then what the default plugins
// (found in `plugin_dirs`) declare.
std::string optionsDoc(const std::vector<std::string>& plugin_dirs);

}  // namespace brisk::python
