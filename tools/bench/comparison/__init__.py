"""brisk vs PyTorch and other CPU runtimes on the zoo models (`bazel run //tools/bench:compare`;
tools/bench/compare.py is the entry script, cli.py its flags and documentation).

One module per job, lowest first:
  settings        the fixed thread / allocator environment and the re-exec that applies it
                  (imports nothing heavy: it runs before torch is imported)
  errors          one-line error text for the table's notes
  cases           which models, batches and input files; loading them (eager source, int8)
  runtimes_torch  builders of PyTorch's own executors (TorchScript, Static Runtime, PT2,
                  Inductor, AOTInductor)
  runtimes_onnx   builders of ONNX Runtime and OpenVINO (fed an export of the model)
  runtimes_brisk  builders of brisk's rows
  executors       the one registry: name -> Spec (label, group, builder, colour, description)
  outputs         the output check against the reference (tools/outputs_close.py)
  timing          timed blocks in rotating rounds, ratios, the best other runtime
  memory          peak RSS per executor, one process each
  machine         what the report records about the machine and the installed runtimes
  report          the Markdown table and the written files
  chart           the PNG
  run             one case: build, check, time, summarise
  cli             flags and main()

Importing the package (this file) imports nothing, so pt2_vs_torchscript.py and the
smoke test can take single modules.
"""
